// Oracle: judges every run against the W-* invariants of DESIGN.md §6.
//
// It listens to two streams: what the platform says it did (webhook::Events) and what really
// happened in the world (Observer's ground-truth hooks). Most checks run online, as events arrive;
// finish() does the end-of-run ones (nothing lost, everything terminal in time, breakers closed).
// Each violation names the request, the time and what happened; the first few per invariant are
// kept whole, the rest counted.
#pragma once

#include <array>
#include <deque>
#include <cstdint>
#include <string>
#include <vector>

#include "model/core/dense_id_map.h"
#include "model/core/ring.h"
#include "model/core/slot_pool.h"
#include "model/store/store.h"
#include "sim/scenario/scenario.h"
#include "sim/world/serviceb.h"
#include "sim/world/truth.h"

namespace relaysim::sim {

enum class Invariant : std::uint8_t { idem, deadline, nodup, noloss, retry, breaker, url };
inline constexpr int kInvariantCount = 7;
std::string_view invariant_id(Invariant i);     // "W-idem"
std::string_view invariant_title(Invariant i);  // one line: what it promises

// Why an endpoint received a request it had already accepted with a 2xx.
// lost_response: the response never arrived; late_response: it arrived after the client's timeout.
enum class DuplicateCause : std::uint8_t { lost_response, late_response, crash, lease_expired, unexplained };
inline constexpr int kDuplicateCauseCount = 5;
std::string_view to_string(DuplicateCause c);

struct Violation {
  Invariant invariant;
  webhook::RequestId request = 0;
  Time at{};
  std::string what;
};

class Oracle final : public Observer {
 public:
  static constexpr std::size_t kExamplesKept = 20;

  Oracle(const Scenario& scenario, const ServiceB& serviceb);

  // webhook::Events
  void ingested(webhook::PodId, const webhook::NewRequest&, const webhook::CreateResult&, Time) override;
  void claimed(webhook::PodId, const webhook::RequestRow&, Time) override;
  void attempt_started(webhook::PodId, const webhook::RequestRow&, std::uint32_t, std::string_view, std::uint64_t,
                       Time) override;
  void attempt_finished(webhook::PodId, const webhook::AttemptRow&, const HttpResult&, webhook::Verdict) override;
  void completed(webhook::PodId, const webhook::RequestRow&, const webhook::Completion&, bool) override;
  void breaker_changed(webhook::PodId, BreakerState, BreakerState, Time) override;
  // ground truth
  void client_created(const ClientKey&, const webhook::IngestResult&, Time) override;
  void serviceb_called(std::uint32_t pod, std::uint32_t cxid, Time at, Time answer_at, bool ok, bool in_outage) override;
  void http_sent(std::uint32_t pod, webhook::RequestId, const SendFate&, Time) override;
  void pod_crashed(std::uint32_t pod, Time) override;
  void pod_started(std::uint32_t pod, Time) override;

  // End-of-run checks. `end` is the virtual time the run stopped at; `stored` what the store holds.
  void finish(Time end, const webhook::StoreCounts& stored, const std::vector<BreakerState>& final_breakers);

  std::uint64_t violations(Invariant i) const { return counts_[static_cast<int>(i)]; }
  std::uint64_t total_violations() const;
  const std::vector<Violation>& examples() const { return examples_; }
  std::uint64_t duplicates(DuplicateCause c) const { return duplicates_[static_cast<int>(c)]; }
  std::uint64_t rescued_claims() const { return rescued_; }
  std::uint64_t stale_completions() const { return stale_; }
  std::uint64_t stale_applied() const { return stale_applied_; }
  // Retries that came after a Retry-After longer than the policy's own minimum gap, and waited.
  std::uint64_t retry_after_honoured() const { return retry_after_honoured_; }
  std::uint64_t lost() const { return lost_; }

 private:
  struct Req {
    webhook::RequestId id = 0;  // 0: a free slot
    std::uint64_t request = 0;  // ClientKey::request: names the client's idempotency key
    std::uint64_t payload = 0;  // ClientKey::payload
    Time terminal_at{};
    Time deadline_at{};
    Time inflight_until{};
    Time last_finish{};
    Duration last_retry_after{-1};
    webhook::ClaimToken latest_token = 0;  // of the newest claim
    std::uint32_t cxid = 0;
    std::uint32_t last_number = 0;
    std::uint32_t replays = 0;
    std::uint16_t terminal_count = 0;
    webhook::Status terminal = webhook::Status::pending;
    bool keyed = false;  // client_created has recorded its key
    bool claimed_open = false;
    bool have_last = false;
    bool last_terminal = false;
    bool pending_terminal = false;  // the oracle's own verdict on the attempt just finished
    bool delivered = false;       // the platform applied a delivered completion
    bool endpoint_ok = false;     // the endpoint has processed it with a 2xx
    bool ok_in_flight = false;    // the current attempt was processed with a 2xx
    DuplicateCause ambiguity = DuplicateCause::unexplained;  // why the last 2xx may not count
  };
  struct PodView {
    BreakerState breaker = BreakerState::closed;
    std::uint32_t half_open_calls = 0;
    Time last_failure_answer{};        // the latest answer ServiceB failed for this pod
    std::uint32_t ok_calls_after_failure = 0;
    std::vector<Time> probe_answers;   // when this half-open period's probes are answered
    std::uint32_t outage = UINT32_MAX; // the outage the counts below belong to
    std::deque<Time> closed_failures;  // answers to calls made through a closed breaker, this outage
    bool opened_in_outage = false;
    bool reported_never_opened = false;
    std::vector<std::pair<webhook::RequestId, Time>> in_flight;  // sends whose result is pending
  };

  struct Finished {
    Time at;
    webhook::RequestId id;
    std::uint32_t slot;
  };
  Req* find(webhook::RequestId id);
  // With a finite retention the store forgets terminal requests; so does the oracle, at the same
  // moments, so its memory too follows the open requests.
  void forget_finished(Time now);
  // How long no pod at all was up within [from, to]: no platform can act then, so deadline
  // bounds stretch by it.
  Duration downtime(Time from, Time to) const;
  PodView& view(std::uint32_t pod);
  void violate(Invariant i, webhook::RequestId id, Time at, std::string what);

  Scenario scenario_;
  const ServiceB& serviceb_;
  Duration terminal_bound_;
  SlotPool<Req> reqs_;                  // req_index_ finds a request's slot
  DenseIdMap req_index_;                // id -> slot
  // The client's request number (ClientKey::request, unique per key, handed out in increasing
  // order by the load generator) -> slot. Ground truth the platform cannot use, the oracle can.
  DenseIdMap key_index_;
  Ring<Finished> finished_;             // only with a finite retention
  std::vector<PodView> pods_;
  std::array<std::uint64_t, kInvariantCount> counts_{};
  std::array<std::uint64_t, kDuplicateCauseCount> duplicates_{};
  std::array<std::uint64_t, kInvariantCount> kept_{};
  std::vector<Violation> examples_;
  std::array<std::uint64_t, webhook::kStatusCount> terminal_by_status_{};
  std::uint64_t acked_ = 0;
  std::uint64_t rescued_ = 0;
  std::uint64_t stale_ = 0;
  std::uint64_t stale_applied_ = 0;
  std::uint64_t retry_after_honoured_ = 0;
  std::uint64_t lost_ = 0;
  std::uint32_t pods_up_ = 0;
  Time all_down_since_{};
  std::vector<std::pair<Time, Time>> all_down_;  // closed intervals with no pod up
};

}  // namespace relaysim::sim
