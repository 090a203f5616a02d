// What a provider's answer to a submit means, and what the gateway does next: the retry and
// failover rule, in one place, for every pod and both shells.
//
// The rule that matters most: fail over only when the provider certainly did not take the
// message. A timeout or a connection reset after the request went out is ambiguous — the provider
// may have accepted it (easy-sms fails over on any exception and so sends twice) — so the message
// becomes `unknown` and is resent later on the same provider (whose own dedup may catch it), or
// failed, as configured. Never elsewhere.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/core/bounds.h"
#include "model/core/http.h"
#include "model/core/names.h"
#include "model/core/random.h"
#include "model/resilience/backoff.h"
#include "model/sms/types.h"

namespace relaysim::sms {

enum class SubmitClass : std::uint8_t {
  accepted,     // certain: the provider took it
  throttled,    // certain not: the provider's rate limit (429)
  unavailable,  // certain not: refused before reading the request (connection refused, 503)
  refused,      // certain not, and permanent: the provider rejects this message (bad number, content)
  timeout,      // ambiguous: no answer within the send timeout
  reset,        // ambiguous: the connection broke after the request was sent
};
inline constexpr auto kSubmitClassNames = names<SubmitClass>({
    {SubmitClass::accepted, "accepted"}, {SubmitClass::throttled, "throttled"},
    {SubmitClass::unavailable, "unavailable"}, {SubmitClass::refused, "refused"}, {SubmitClass::timeout, "timeout"},
    {SubmitClass::reset, "reset"}});
constexpr std::string_view to_string(SubmitClass c) { return kSubmitClassNames[c]; }
inline constexpr int kSubmitClassCount = kSubmitClassNames.count;

constexpr bool is_ambiguous(SubmitClass c) { return c == SubmitClass::timeout || c == SubmitClass::reset; }
// A failure that says nothing against the message itself: another provider may take it.
constexpr bool may_fail_over(SubmitClass c) { return c == SubmitClass::throttled || c == SubmitClass::unavailable; }

// What to do with a message whose outcome is ambiguous.
enum class OnUnknown : std::uint8_t { resend, fail };
inline constexpr auto kOnUnknownNames = names<OnUnknown>({{OnUnknown::resend, "resend"}, {OnUnknown::fail, "fail"}});
constexpr std::string_view to_string(OnUnknown o) { return kOnUnknownNames[o]; }

// A business's retry policy. `max_attempts` counts every submit of a message; `alert_after`
// raises one alert when a message's attempts reach it (0: never). `cross_process`: a retry is
// stored with its due time and any pod sends it; otherwise the pod that tried keeps it in its
// own memory while its claim lasts, and only a retry beyond the claim goes through the store.
struct RetryPolicy {
  BackoffPolicy backoff{BackoffKind::exponential, std::chrono::seconds(2), 2.0, std::chrono::minutes(5), Jitter::full};
  static constexpr Bounds<std::uint16_t> kMaxAttempts{1, 1000};
  static constexpr Bounds<std::uint16_t> kAlertAfter{0, 1000};
  std::uint16_t max_attempts = 5;
  std::uint16_t alert_after = 3;
  bool cross_process = true;
  bool operator==(const RetryPolicy&) const = default;
};

// The next step after one submit.
enum class Step : std::uint8_t {
  submitted,  // wait for the receipt
  fail_over,  // try another provider now, within the same claim
  retry,      // pending again at `due` (every provider said no, for now)
  unknown,    // ambiguous: decided again at `due`, on the same provider
  fail,       // final: failed with `reason`
};
inline constexpr auto kStepNames = names<Step>({
    {Step::submitted, "submitted"}, {Step::fail_over, "fail_over"}, {Step::retry, "retry"}, {Step::unknown, "unknown"},
    {Step::fail, "fail"}});
constexpr std::string_view to_string(Step s) { return kStepNames[s]; }

struct Decision {
  Step step = Step::fail;
  Reason reason = Reason::none;
  Time due{};
};

struct SubmitContext {
  SubmitClass outcome = SubmitClass::accepted;
  std::uint16_t attempts = 0;      // submits of this message so far, this one included
  bool untried_provider_left = false;
  Time now{};
  Duration receipt_timeout{};      // how long a receipt may take
  Duration last_delay{};           // the previous retry delay (decorrelated jitter)
};

Decision decide(const SubmitContext& context, const RetryPolicy& retry, OnUnknown on_unknown, Rng& rng);

// What a provider's answer over HTTP means (the live shell's providers speak HTTP; docs/live.md
// has the protocol). Nothing sent — no name, no connection, a refused address, a URL that does
// not parse, a send that could not start in time — is `unavailable`: another provider may take
// it. A 2xx is `accepted`; 429 `throttled`; 503 `unavailable` (the provider refused it before
// acting); any other 4xx `refused` (it rejects the message itself). Anything else read after the
// request went out — another 5xx, a status that means nothing here — is `reset`: the provider
// read it and may have sent it. No answer in time is `timeout`.
SubmitClass classify_submit(NetError error, int status);

}  // namespace relaysim::sms
