// SyncAsyncController: when a pod stops sending SMS synchronously (in the client's request) and
// lets async workers send from the store instead, and when it goes back — the seed's
// "sync-to-async" switch, judged per pod from the submits it makes synchronously.
//
// Enter async mode when any configured rule fires:
//  - latency, consecutive: `consecutive` sync submits in a row each slower than `over`;
//  - latency, window: at least `min_calls` sync submits in the last `window` with a mean slower
//    than `over` (used when `consecutive` is 0);
//  - growth: the mean latency of the last whole second is more than `percent` % above the second
//    before it, each with at least `min_calls` submits;
//  - error rate: more than `over` of the sync submits failed in the last `window`, with at least
//    `min_calls`.
// Leave it either `after` a fixed time (exactly then: the node asks at that time), or by probing: every `probe_every`-th send stays
// synchronous (deterministic, about 1/probe_every of the traffic), and once `min_probes` probes in
// a row were fast (not slower than the latency threshold) and succeeded, sync mode returns. In async mode
// nothing is lost: a send that does not go sync is stored and sent by the async workers.
// Every change of mode is reported with the rule that caused it, so the oracle can re-evaluate it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "model/core/bounds.h"
#include "model/core/names.h"
#include "model/core/time.h"
#include "model/resilience/window_counter.h"

namespace relaysim::sms {

enum class AsyncRule : std::uint8_t { none, latency_consecutive, latency_window, growth, error_rate, timer, probes };
inline constexpr auto kAsyncRuleNames = names<AsyncRule>({
    {AsyncRule::none, "none"}, {AsyncRule::latency_consecutive, "latency_consecutive"},
    {AsyncRule::latency_window, "latency_window"}, {AsyncRule::growth, "growth"}, {AsyncRule::error_rate, "error_rate"},
    {AsyncRule::timer, "timer"}, {AsyncRule::probes, "probes"}});
constexpr std::string_view to_string(AsyncRule r) { return kAsyncRuleNames[r]; }

struct SyncAsyncConfig {
  bool enabled = false;
  struct Latency {
    Duration over = std::chrono::seconds(2);  // zero: no latency rule
    std::uint32_t consecutive = 5;
    Duration window = std::chrono::seconds(10);
    std::uint32_t min_calls = 10;
    bool operator==(const Latency&) const = default;
  } latency;
  struct Growth {
    double percent = 0;  // zero: no growth rule
    std::uint32_t min_calls = 10;
    bool operator==(const Growth&) const = default;
  } growth;
  struct ErrorRate {
    double over = 0;  // a fraction; zero: no error-rate rule
    Duration window = std::chrono::seconds(10);
    std::uint32_t min_calls = 10;
    bool operator==(const ErrorRate&) const = default;
  } error_rate;
  enum class Exit : std::uint8_t { after, probe } exit = Exit::after;
  Duration after = std::chrono::minutes(5);
  static constexpr Bounds<std::uint32_t> kProbeEvery{1, 1'000'000};
  static constexpr Bounds<std::uint32_t> kMinProbes{1, 1'000'000};
  std::uint32_t probe_every = 100;
  std::uint32_t min_probes = 5;
  bool operator==(const SyncAsyncConfig&) const = default;
};

enum class SendPath : std::uint8_t { sync, async, probe };
inline constexpr auto kSendPathNames = names<SendPath>({
    {SendPath::sync, "sync"}, {SendPath::async, "async"}, {SendPath::probe, "probe"}});
constexpr std::string_view to_string(SendPath p) { return kSendPathNames[p]; }

// A change of mode: entered (by `rule`) or left (by timer or probes).
struct ModeChange {
  bool entered = false;
  bool left = false;
  AsyncRule rule = AsyncRule::none;
  explicit operator bool() const { return entered || left; }
};

class SyncAsyncController {
 public:
  explicit SyncAsyncController(const SyncAsyncConfig& config);

  // How the next send goes. In async mode it may leave the mode first (the timer); `change` says.
  SendPath route(Time now, ModeChange& change);
  // Leaves async mode if its time is up (the `after` exit); the node calls it when that time
  // comes, so the mode ends on time even with no send to notice it.
  ModeChange expire(Time now);
  // A sync submit (or probe) finished after `latency`; `failed`: it did not reach a provider's
  // certain acceptance.
  ModeChange observe(Time now, Duration latency, bool failed, SendPath path);

  bool async() const { return async_; }
  Time entered_at() const { return entered_at_; }
  AsyncRule entered_by() const { return entered_by_; }

 private:
  AsyncRule rule_fired(Time now) const;
  void enter(Time now, AsyncRule rule);
  void leave();
  void add_latency(Time now, Duration latency);

  struct Second {
    std::int64_t index = -1;
    std::uint32_t calls = 0;
    double sum_ns = 0;
  };

  SyncAsyncConfig config_;
  bool async_ = false;
  Time entered_at_{};
  AsyncRule entered_by_ = AsyncRule::none;
  std::uint32_t slow_in_a_row_ = 0;
  std::array<Second, 3> seconds_{};           // [0]: this second, [1]: the last whole one, [2]: before it
  std::array<Second, 10> latency_buckets_{};  // the latency window, a tenth each
  WindowCounter errors_;
  std::uint64_t sends_ = 0;        // in async mode, to pick every k-th as a probe
  std::uint32_t good_probes_ = 0;
};

}  // namespace relaysim::sms
