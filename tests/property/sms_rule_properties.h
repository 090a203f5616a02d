// Properties of the SMS gateway's decision rules — the submit rule (model/sms/submit.h) and the
// sync-to-async switch (model/sms/sync_async.h) — shared by the component tests and the test that
// proves they catch the rules' planted bugs (tests/property/component_mutants_test.cpp).
#pragma once

namespace relaysim::sms_rule_props {

// Whatever the outcome, attempts and policy: an ambiguous outcome never fails over, a fail-over
// only follows a certain refusal with a provider left, and no step outlives the attempts bound.
void fails_over_only_after_a_certain_refusal();
// Once entered, async mode ends as configured: with a timer at the first send at or after
// entered + after; with probes once min_probes good probes came in a row. Until then, no send
// is sync.
void async_mode_ends_as_configured();

}  // namespace relaysim::sms_rule_props
