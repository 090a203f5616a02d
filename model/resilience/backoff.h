// Backoff: how long to wait before the n-th retry.
//
// exponential: initial * multiplier^(n-1), capped at max_interval; fixed: initial every time.
// Jitter is applied to that base:
//   none          the base itself
//   full          uniform in [0, base]            (AWS "full jitter")
//   equal         base/2 + uniform in [0, base/2]
//   decorrelated  uniform in [initial, 3 * previous delay], capped at max_interval
// min_delay() and max_delay() bound what next_delay() can return; the oracle checks every planned
// retry against both.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/config_error.h"
#include "model/core/names.h"
#include "model/core/random.h"
#include "model/core/time.h"

namespace relaysim {

// The shortest wait between two tries a system accepts: a retry backoff's first delay, a
// dependency backoff's and a store retry. Anything shorter is a busy loop -- a stuck message or a
// busy store would take millions of tries a second, in the simulator and in production alike.
inline constexpr Duration kMinRetryInterval = std::chrono::milliseconds(1);
static_assert(kMinRetryInterval % std::chrono::milliseconds(1) == Duration::zero(), "messages state it in whole ms");

enum class BackoffKind : std::uint8_t { exponential, fixed };
enum class Jitter : std::uint8_t { none, full, equal, decorrelated };

inline constexpr auto kBackoffKindNames = names<BackoffKind>({
    {BackoffKind::exponential, "exponential"}, {BackoffKind::fixed, "fixed"}});
constexpr std::string_view to_string(BackoffKind k) { return kBackoffKindNames[k]; }
inline constexpr auto kJitterNames = names<Jitter>({
    {Jitter::none, "none"}, {Jitter::full, "full"}, {Jitter::equal, "equal"}, {Jitter::decorrelated, "decorrelated"}});
constexpr std::string_view to_string(Jitter j) { return kJitterNames[j]; }

struct BackoffPolicy {
  BackoffKind kind = BackoffKind::exponential;
  Duration initial = std::chrono::seconds(1);
  double multiplier = 2.0;
  Duration max_interval = std::chrono::minutes(15);
  Jitter jitter = Jitter::full;
  bool operator==(const BackoffPolicy&) const = default;
};

// The un-jittered delay before retry number n (n >= 1).
Duration base_delay(const BackoffPolicy& p, std::uint32_t n);
// The jittered delay before retry number n; `previous` is the last delay used (decorrelated).
Duration next_delay(const BackoffPolicy& p, std::uint32_t n, Duration previous, Rng& rng);
// The smallest value next_delay(p, n, ...) can take.
Duration min_delay(const BackoffPolicy& p, std::uint32_t n);
// The largest value next_delay(p, n, previous, ...) can take when the delay drawn before it was
// at most `previous` (decorrelated jitter grows from the previous delay; the others ignore it).
Duration max_delay(const BackoffPolicy& p, std::uint32_t n, Duration previous);
// The delay a retrier that keeps no record of its draws takes as the one before retry n, for
// decorrelated jitter to grow from: the base delay of retry n - 1 (the first delay before retry 1).
Duration unrecorded_previous(const BackoffPolicy& p, std::uint32_t n);
// About how many retries fit in `window` when every try fails at once: the delays at their
// mean, the tries themselves taking no time. An estimate for planning memory and work, and an
// upper bound in spirit (real tries take time).
double mean_retries_within(const BackoffPolicy& p, Duration window);

// Adds what is wrong with `b` to `out`, naming its keys under `key`: a first delay shorter than
// kMinRetryInterval (a busy loop), a multiplier below 1, a max_interval below the first delay.
void check_backoff(const BackoffPolicy& b, const std::string& key, std::vector<ConfigError>& out);

}  // namespace relaysim
