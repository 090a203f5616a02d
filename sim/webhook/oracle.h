// The webhook oracle: the checkers that judge every run against the W-* invariants
// (sim/webhook/invariants.h), each reporting into the run's Ledger.
//
// They listen to three streams: what the platform says it did (the model's events), what really
// happened in the world (ground truth: sim/webhook/truth.h), and the pods' starts and crashes.
// Most checks run online, as events arrive; finish() does the end-of-run ones (nothing lost,
// everything terminal in time, breakers closed). Each violation names the request — by the
// client's (cxid, request_id) — the time, what happened and the bound it broke.
//
//   RequestChecker  W-idem, W-deadline, W-nodup, W-noloss, W-retry, W-url: per-request state
//
// Each promise is checked from both sides where it has two: a retry's plan against the policy's
// lower and upper bound (and the attempt against the plan); a delivery by what the platform says
// it sent and by what reached the endpoint (URL, webhook-id, payload); a failure by its terminal
// state and by the one notification the tenant gets.
//   BreakerChecker  W-breaker: per-pod state
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/core/dense_id_map.h"
#include "model/core/flat_index.h"
#include "model/core/names.h"
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
// crash: the pod died with the attempt in flight (or with its answer unread, in a pause the crash
// ended); lease_expired: its completion was fenced off, or its pod was paused from before the
// answer came until past the claim's lease; store_failure: the store could not record the completion.
enum class DuplicateCause : std::uint8_t { lost_response, late_response, crash, lease_expired, store_failure, unexplained };
inline constexpr auto kDuplicateCauseNames = names<DuplicateCause>({
    {DuplicateCause::lost_response, "lost_response"}, {DuplicateCause::late_response, "late_response"},
    {DuplicateCause::crash, "crash"}, {DuplicateCause::lease_expired, "lease_expired"},
    {DuplicateCause::store_failure, "store_failure"}, {DuplicateCause::unexplained, "unexplained"}});
constexpr std::string_view to_string(DuplicateCause c) { return kDuplicateCauseNames[c]; }
inline constexpr int kDuplicateCauseCount = kDuplicateCauseNames.count;

class RequestChecker final : public SinkFor<model::Ingested>,
                             public SinkFor<model::Claimed>,
                             public SinkFor<model::BreakerChanged>,
                             public SinkFor<model::AttemptStarted>,
                             public SinkFor<model::AttemptFinished>,
                             public SinkFor<model::Completed>,
                             public SinkFor<model::TenantNotified>,
                             public SinkFor<model::Replayed>,
                             public SinkFor<ClientCalling>,
                             public SinkFor<ClientCreated>,
                             public SinkFor<HttpSent>,
                             public SinkFor<ServiceBCalled>,
                             public SinkFor<ProcessStarted>,
                             public SinkFor<ProcessCrashed>,
                             public SinkFor<ProcessPaused> {
 public:
  // `store_faults`: when the store was failing; like time with no pod up, it stretches the
  // deadline bound. `retention`: the store's (Store::retention): the oracle forgets what the
  // store forgets, when it forgets it.
  RequestChecker(const Scenario& scenario, const ServiceB& serviceb, const StoreFaults& store_faults,
                 std::optional<Duration> retention, Ledger& ledger);

  void on(const model::Ingested& e) override;
  void on(const model::Claimed& e) override;
  void on(const model::BreakerChanged& e) override;
  void on(const model::AttemptStarted& e) override;
  void on(const model::AttemptFinished& e) override;
  void on(const model::Completed& e) override;
  void on(const model::TenantNotified& e) override;
  void on(const model::Replayed& e) override;
  void on(const ClientCalling& e) override;
  void on(const ClientCreated& e) override;
  void on(const HttpSent& e) override;
  void on(const ServiceBCalled& e) override;
  void on(const ProcessStarted& e) override;
  void on(const ProcessCrashed& e) override;
  void on(const ProcessPaused& e) override;

  // End-of-run checks. `end` is the virtual time the run stopped at; `stored` what the store holds.
  // `outbox`: the notices the store still holds (sent at least once later; each must be young
  // enough that its sender may yet be waiting for a lease or a failing store).
  void finish(Time end, const model::StoreCounts& stored, const std::vector<model::Notice>& outbox);

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
    std::uint64_t name = 0;     // ClientKey::name: the number in its request_id (for messages)
    std::uint64_t payload = 0;  // ClientKey::payload
    Time terminal_at{};
    Time deadline_at{};
    Time inflight_until{};
    Time last_finish{};
    Duration last_retry_after{-1};     // asked by the last attempt whose completion was applied
    Duration pending_retry_after{-1};  // asked by the attempt just finished
    Duration last_wait{};  // the wait the last retry was planned with (bounds the decorrelated draw)
    std::uint64_t webhook_id = 0;  // hash of the webhook-id its endpoint first received; 0: none yet
    model::ClaimToken latest_token = 0;  // of the newest claim
    Time lease_until{};                  // the newest claim's lease, as the store granted it (Time{}: unknown)
    std::uint32_t cxid = 0;
    std::uint32_t last_number = 0;
    std::uint32_t replays = 0;    // applied manual replays
    std::uint32_t deferrals = 0;  // applied blocked completions since its last replay
    std::uint16_t terminal_count = 0;
    // Bit min(life, 63) for each life (replays before it) that ended failed or dead_lettered, and
    // for each whose notice its tenant was sent.
    std::uint64_t failed_lives = 0;
    std::uint64_t told_lives = 0;
    model::Status failed_status = model::Status::pending;  // how its latest failure ended, and why
    model::Reason failed_reason = model::Reason::none;
    model::Status terminal = model::Status::pending;
    model::Status status = model::Status::pending;  // as the platform's events have moved it
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

  // A life's bit in Req::failed_lives and told_lives (lives past 63 share the last).
  static std::uint64_t life_bit(std::uint32_t life);
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
  // Binds the stored request in `slot` to the client key that created it.
  void bind_key(std::uint32_t slot, const ClientKey& key);
  // The checks a request's reschedule (a planned retry or a deferral) must pass.
  void check_plan(Req& q, const model::Completion& c);
  // A move of the request's status: W-lifecycle when kRequestLifecycle has no such move.
  void move(Req& q, model::Status to, Time at);
  // The tenant heard of each failure (checked when the request is forgotten or at the end).
  void check_notified(const Req& q, Time at);
  // W-url: may `pod` use `version` of `cxid`'s URL at `at`? Only as the answer of one of its own
  // lookups — at the moment it arrives, or from its cache while younger than the TTL, counted
  // from when the lookup was sent (the moment ServiceB's answer was true).
  bool url_allowed(std::uint32_t pod, std::uint32_t cxid, std::uint64_t version, Time at) const;
  void check_delivery(Req& r, const HttpSent& e);
  void record_send(Req& r, const HttpSent& e);
  void violate(Invariant i, const Req* q, model::RequestId id, Time at, std::string what);

  const WebhookSpec& spec_;
  const ServiceB& serviceb_;
  const StoreFaults& store_faults_;
  Ledger& ledger_;
  Duration terminal_bound_;
  std::string terminal_bound_text_;
  // How long a notice may wait in the outbox after its failure (plus any downtime): nothing
  // without crashes, pauses or store faults (it is sent in the instant it is written); otherwise a
  // lease, a store_retry and the slack.
  Duration notice_bound_;
  StableSlotPool<Req> reqs_;  // req_index_ finds a request's slot; chunks never move, growth copies nothing
  DenseIdMap req_index_;  // id -> slot
  // The client's request number (ClientKey::request, unique per key, handed out in increasing
  // order by the load generator) -> slot. Ground truth the platform cannot use, the oracle can.
  // A key first stored after younger ones (its first create was refused: no pod was up, or the
  // store failed) cannot join the dense index; it goes to late_keys_ instead.
  DenseIdMap key_index_;
  FlatIndex late_keys_;  // request number -> slot + 1
  // A found answer of one pod's lookup of one cxid, while that pod may still use it (see
  // url_allowed). Each (pod, cxid)'s are a list in lookups_, newest first, its head in
  // lookup_heads_ at pod * cxids + cxid: most have none or one, and the newest usually answers.
  struct Lookup {
    Time sent;
    Time answered;
    std::uint64_t version;
    std::uint32_t incarnation;  // the pod's, when it looked up: a crash drops its cache
    std::uint32_t next;         // the next of this cxid's, or kNoLookup
  };
  static constexpr std::uint32_t kNoLookup = UINT32_MAX;
  std::vector<std::uint32_t> lookup_heads_;  // per (pod, cxid)
  std::vector<Lookup> lookups_;              // the lists' entries; free ones chained from free_lookup_
  std::uint32_t free_lookup_ = kNoLookup;
  std::vector<std::uint32_t> incarnation_;   // per pod: how many times it has crashed
  // The last url_allowed question and its answer: an attempt asks it twice, as the platform
  // reports the attempt and as the request goes on the wire.
  struct UrlQuestion {
    Time at{};
    std::uint64_t version = 0;
    std::uint32_t pod = UINT32_MAX;
    std::uint32_t cxid = UINT32_MAX;
    bool allowed = false;
  };
  mutable UrlQuestion last_url_;
  ClientKey calling_{};    // the client call in progress (ClientCalling), while calling_now_
  bool calling_now_ = false;
  Retention retention_;
  std::vector<std::vector<std::pair<model::RequestId, Time>>> in_flight_;  // per pod: sends whose result is pending
  // Per pod: until when its breaker refuses every lookup (opened + open_for; Time{}: not open).
  // A blocked request claimed before then would only be deferred again (W-breaker).
  std::vector<Time> refusing_until_;
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
  PauseHistory pauses_;
};

class BreakerChecker final : public SinkFor<model::BreakerChanged>,
                             public SinkFor<ServiceBCalled>,
                             public SinkFor<ProcessCrashed>,
                             public SinkFor<ProcessPaused> {
 public:
  BreakerChecker(const Scenario& scenario, const ServiceB& serviceb, Ledger& ledger);

  void on(const model::BreakerChanged& e) override;
  void on(const ServiceBCalled& e) override;
  void on(const ProcessCrashed& e) override;
  void on(const ProcessPaused& e) override;

  // End-of-run check: a breaker still open long after ServiceB answers well again.
  void finish(Time end, const std::vector<BreakerState>& final_breakers);

 private:
  // A ServiceB call made in the breaker's current state period (its generation).
  struct Call {
    Time at;
    Time answer_at;
    bool ok;
  };
  struct PodView {
    BreakerState breaker = BreakerState::closed;
    Time changed_at{};                 // when it entered its current state
    std::deque<Call> calls;            // made since then (closed: only those still in the window)
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
  // Was the change to `to` at `at` earned by this generation's own results?
  void check_transition(std::uint32_t pod, PodView& p, BreakerState to, Time at);

  const WebhookSpec& spec_;
  const ServiceB& serviceb_;
  Ledger& ledger_;
  std::vector<PodView> pods_;
  PauseHistory pauses_;  // a paused pod's breaker sees an answer when the pause ends
};

}  // namespace relaysim::sim::webhook
