// The SMS Store's promises (model/sms/store.h) as a RapidCheck property, shared by the component
// tests (tests/property/sms_store_property_test.cpp) and the test that proves it catches the
// stores' planted bugs (tests/property/component_mutants_test.cpp).
#pragma once

namespace relaysim::sms_store_props {

// Random sequences of accepts (single and bulk, repeats, conflicts, stale epochs, claimed at
// once or not), claims, completions under current and stale tokens, receipts, revocations and
// time passing, applied to a simple model, to MemoryStore and to SqliteStore: every answer agrees
// with the model, and the two stores agree row by row, count by count.
void stores_match_the_model();

}  // namespace relaysim::sms_store_props
