// The webhook oracle: the checkers that judge every run against the W-* invariants of DESIGN.md
// §6, each reporting into the run's Ledger.
//
// They listen to three streams: what the platform says it did (the model's events), what really
// happened in the world (ground truth: sim/webhook/truth.h), and the pods' starts and crashes.
// Most checks run online, as events arrive; finish() does the end-of-run ones (nothing lost,
// everything terminal in time, breakers closed). Each violation names the request — by the
// client's (cxid, request_id) — the time, what happened and the bound it broke.
//
//   RequestChecker  W-idem, W-deadline, W-nodup, W-noloss, W-retry, W-url: per-request state
//   BreakerChecker  W-breaker: per-pod state
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "model/core/dense_id_map.h"
#include "model/core/flat_index.h"
#include "model/core/slot_pool.h"
#include "model/store/retention.h"
#include "model/webhook/events.h"
#include "model/webhook/store.h"
#include "sim/oracle/ledger.h"
#include "sim/scenario/scenario.h"
#include "sim/webhook/invariants.h"
#include "sim/webhook/serviceb.h"
#include "sim/webhook/spec.h"
#include "sim/webhook/truth.h"
#include "sim/world/process.h"
#include "sim/world/store_faults.h"

namespace relaysim::sim::webhook {

namespace model = relaysim::webhook;

// Why an endpoint received a request it had already accepted with a 2xx.
// lost_response: the response never arrived; late_response: it arrived after the client's timeout;
// crash: the pod died with the attempt in flight; lease_expired: its completion was fenced off;
// store_failure: the store could not record the completion.
enum class DuplicateCause : std::uint8_t { lost_response, late_response, crash, lease_expired, store_failure, unexplained };
inline constexpr int kDuplicateCauseCount = 6;
std::string_view to_string(DuplicateCause c);

class RequestChecker final : public SinkFor<model::Ingested>,
                             public SinkFor<model::Claimed>,
                             public SinkFor<model::AttemptStarted>,
                             public SinkFor<model::AttemptFinished>,
                             public SinkFor<model::Completed>,
                             public SinkFor<ClientCreated>,
                             public SinkFor<HttpSent>,
                             public SinkFor<ProcessStarted>,
                             public SinkFor<ProcessCrashed> {
 public:
  // `store_faults`: when the store was failing; like time with no pod up, it stretches the
  // deadline bound.
  RequestChecker(const Scenario& scenario, const ServiceB& serviceb, const StoreFaults& store_faults, Ledger& ledger);

  void on(const model::Ingested& e) override;
  void on(const model::Claimed& e) override;
  void on(const model::AttemptStarted& e) override;
  void on(const model::AttemptFinished& e) override;
  void on(const model::Completed& e) override;
  void on(const ClientCreated& e) override;
  void on(const HttpSent& e) override;
  void on(const ProcessStarted& e) override;
  void on(const ProcessCrashed& e) override;

  // End-of-run checks. `end` is the virtual time the run stopped at; `stored` what the store holds.
  void finish(Time end, const model::StoreCounts& stored);

  std::uint64_t duplicates(DuplicateCause c) const { return duplicates_[static_cast<int>(c)]; }
  std::uint64_t rescued_claims() const { return rescued_; }
  std::uint64_t stale_completions() const { return stale_; }
  std::uint64_t stale_applied() const { return stale_applied_; }
  // Retries that came after a Retry-After longer than the policy's own minimum gap, and waited.
  std::uint64_t retry_after_honoured() const { return retry_after_honoured_; }
  std::uint64_t lost() const { return lost_; }
  // What a request may take past its deadline before it must be terminal, in words.
  const std::string& terminal_bound_text() const { return terminal_bound_text_; }

 private:
  struct Req {
    model::RequestId id = 0;  // 0: a free slot
    std::uint64_t request = 0;  // ClientKey::request: names the client's idempotency key
    std::uint64_t payload = 0;  // ClientKey::payload
    Time terminal_at{};
    Time deadline_at{};
    Time inflight_until{};
    Time last_finish{};
    Duration last_retry_after{-1};
    model::ClaimToken latest_token = 0;  // of the newest claim
    std::uint32_t cxid = 0;
    std::uint32_t last_number = 0;
    std::uint32_t replays = 0;
    std::uint16_t terminal_count = 0;
    model::Status terminal = model::Status::pending;
    bool keyed = false;  // a ClientCreated has recorded its key
    bool claimed_open = false;
    bool have_last = false;
    bool last_terminal = false;
    bool pending_terminal = false;  // the oracle's own verdict on the attempt just finished
    bool delivered = false;       // the platform applied a delivered completion
    bool endpoint_ok = false;     // the endpoint has processed it with a 2xx
    bool ok_in_flight = false;    // the current attempt was processed with a 2xx
    DuplicateCause ambiguity = DuplicateCause::unexplained;  // why the last 2xx may not count
  };

  Req* find(model::RequestId id);
  // The slot of the request stored for the client's key `request`, or DenseIdMap::kNone.
  std::uint32_t find_key(std::uint64_t request) const;
  // With a finite retention the store forgets terminal requests; so does the oracle, at the same
  // moments, so its memory too follows the open requests.
  void forget_finished(Time now);
  // How long within [from, to] no pod at all was up, plus how long the store was failing: the
  // platform cannot finish anything then, so deadline bounds stretch by it.
  Duration downtime(Time from, Time to) const;
  std::string subject(const Req& q) const;
  void violate(Invariant i, const Req* q, model::RequestId id, Time at, std::string what);

  const WebhookSpec& spec_;
  const ServiceB& serviceb_;
  const StoreFaults& store_faults_;
  Ledger& ledger_;
  Duration terminal_bound_;
  std::string terminal_bound_text_;
  SlotPool<Req> reqs_;    // req_index_ finds a request's slot
  DenseIdMap req_index_;  // id -> slot
  // The client's request number (ClientKey::request, unique per key, handed out in increasing
  // order by the load generator) -> slot. Ground truth the platform cannot use, the oracle can.
  // A key first stored after younger ones (its first create was refused: no pod was up, or the
  // store failed) cannot join the dense index; it goes to late_keys_ instead.
  DenseIdMap key_index_;
  FlatIndex late_keys_;  // request number -> slot + 1
  Retention retention_;
  std::vector<std::vector<std::pair<model::RequestId, Time>>> in_flight_;  // per pod: sends whose result is pending
  std::array<std::uint64_t, kDuplicateCauseCount> duplicates_{};
  std::array<std::uint64_t, model::kStatusCount> terminal_by_status_{};
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

class BreakerChecker final : public SinkFor<model::BreakerChanged>,
                             public SinkFor<ServiceBCalled>,
                             public SinkFor<ProcessCrashed> {
 public:
  BreakerChecker(const Scenario& scenario, const ServiceB& serviceb, Ledger& ledger);

  void on(const model::BreakerChanged& e) override;
  void on(const ServiceBCalled& e) override;
  void on(const ProcessCrashed& e) override;

  // End-of-run check: a breaker still open long after ServiceB answers well again.
  void finish(Time end, const std::vector<BreakerState>& final_breakers);

 private:
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
  };
  PodView& view(std::uint32_t pod);
  void violate(std::uint32_t pod, Time at, std::string what);

  const WebhookSpec& spec_;
  const ServiceB& serviceb_;
  Ledger& ledger_;
  std::vector<PodView> pods_;
};

}  // namespace relaysim::sim::webhook
