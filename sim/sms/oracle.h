// Oracle: judges an SMS run against its invariants (sim/sms/invariants.h) from the model's events
// and the world's ground truth, reporting every violation to the ledger; and attributes every
// duplicate SMS to its cause.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/core/names.h"
#include "model/core/flat_index.h"
#include "model/sms/events.h"
#include "model/sms/store.h"
#include "sim/oracle/ledger.h"
#include "sim/oracle/limit_replay.h"
#include "sim/world/kv.h"
#include "sim/world/process.h"
#include "sim/sms/directory.h"
#include "sim/sms/invariants.h"
#include "sim/sms/spec.h"
#include "sim/sms/truth.h"

namespace relaysim::sim::sms {

// Why a provider accepted one message a second time.
enum class DuplicateCause : std::uint8_t {
  answer_lost,    // an earlier submit went out but the gateway never heard: its answer was lost or late, or its pod crashed first
  rescued,        // its claim was taken over after the lease expired: a crash, or a scan racing a slow send
  store_failure,  // the store failed to record an earlier outcome
  unexplained,    // none of these: an S-dup violation
};
inline constexpr auto kDuplicateCauseNames = names<DuplicateCause>({
    {DuplicateCause::answer_lost, "answer_lost"}, {DuplicateCause::rescued, "rescued"},
    {DuplicateCause::store_failure, "store_failure"}, {DuplicateCause::unexplained, "unexplained"}});
constexpr std::string_view to_string(DuplicateCause c) { return kDuplicateCauseNames[c]; }
inline constexpr int kDuplicateCauseCount = kDuplicateCauseNames.count;

class Oracle final : public SinkFor<relaysim::sms::Accepted>,
                     public SinkFor<relaysim::sms::Claimed>,
                     public SinkFor<relaysim::sms::SubmitStarted>,
                     public SinkFor<relaysim::sms::SubmitFinished>,
                     public SinkFor<relaysim::sms::Completed>,
                     public SinkFor<relaysim::sms::ReceiptReceived>,
                     public SinkFor<ClientAnswered>,
                     public SinkFor<ProviderSubmitted>,
                     public SinkFor<relaysim::sms::LimitDecided>,
                     public SinkFor<relaysim::sms::ModeChanged>,
                     public SinkFor<KvApplied>,
                     public SinkFor<KvRestarted>,
                     public SinkFor<ProcessStarted>,
                     public SinkFor<ProcessCrashed>,
                     public SinkFor<OptedOut>,
                     public SinkFor<AdminActed>,
                     public SinkFor<AdminQueried> {
 public:
  // `seed`: the run's, from which the directory's users are drawn.
  Oracle(const SmsSpec& spec, std::uint64_t seed, Ledger& ledger);

  void on(const relaysim::sms::Accepted& e) override;
  void on(const relaysim::sms::Claimed& e) override;
  void on(const relaysim::sms::SubmitStarted& e) override;
  void on(const relaysim::sms::SubmitFinished& e) override;
  void on(const relaysim::sms::Completed& e) override;
  void on(const relaysim::sms::ReceiptReceived& e) override;
  void on(const ClientAnswered& e) override;
  void on(const ProviderSubmitted& e) override;
  void on(const relaysim::sms::LimitDecided& e) override;
  void on(const relaysim::sms::ModeChanged& e) override;
  void on(const KvApplied& e) override;
  void on(const KvRestarted& e) override;
  void on(const ProcessStarted& e) override;
  void on(const ProcessCrashed& e) override;
  void on(const OptedOut& e) override { directory_.opt_out(e.recipient); }
  void on(const AdminActed& e) override;
  void on(const AdminQueried& e) override;

  // The end-of-run checks: every message the oracle saw accepted is in the store, and the quota
  // the store holds is what one charge per message, less refunds, comes to.
  void finish(Time end, relaysim::sms::Store& store);

  std::uint64_t duplicates(DuplicateCause c) const { return duplicates_[static_cast<std::size_t>(c)]; }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t lost() const { return lost_; }
  std::uint64_t refunds() const { return refunds_; }
  // Shared-limit decisions replayed against the definitions (store and local).
  std::uint64_t limit_checks() const { return limit_checks_; }

 private:
  static constexpr std::uint8_t kOpen = 0xff;
  struct Message {
    std::uint32_t business = 0;  // id
    std::uint32_t period = 0;
    Time send_at{};
    relaysim::sms::ProviderId pinned = relaysim::sms::kNoProvider;        // its stored unknown's provider
    relaysim::sms::ProviderId claim_pinned = relaysim::sms::kNoProvider;  // an ambiguous submit in this claim
    std::uint8_t final_status = kOpen;
    std::uint8_t sends = 0;     // provider accepts (ground truth)
    bool charged = true;
    bool accepted = false;      // a certain accept is recorded in the store
    std::uint8_t seen_accepts = 0;  // submits whose accept the gateway heard of
    bool rescued = false;       // the current claim took over an expired lease
    bool store_failed = false;  // a completion of it failed to be recorded
    bool submitted = false;     // it has been submitted at least once
    std::uint16_t submits = 0;  // submits started (ground truth), for S-retry
    // S-retry's count as the gateway keeps it: the submits its recorded completions added, and
    // those of the current claim so far (a crash's submits are never recorded, so never counted).
    std::uint16_t counted = 0;
    std::uint16_t claim_submits = 0;
    relaysim::sms::ClaimToken claim = 0;  // the current claim's token
    // S-failover's round: the providers tried since the claim (or an in-memory retry) began, and
    // whether the claim was pinned to one provider by an ambiguous outcome.
    relaysim::sms::ClaimToken round_claim = 0;
    relaysim::sms::ProviderMask round_tried = 0;
    bool round_pinned = false;
    Time retry_due{};  // a retry the gateway planned (or stored) is not submitted before this
    relaysim::sms::Status status = relaysim::sms::Status::pending;  // as the gateway's events have moved it
  };
  // One pod's sync-to-async mode as the oracle follows it, and the evidence its rules read: the
  // pod's sync submits since it last left async mode (or started).
  struct Sample {
    Time at;
    std::int64_t latency_ns;
    bool failed;
  };
  struct PodMode {
    bool async = false;
    bool late_reported = false;
    Time entered{};
    std::uint32_t slow_in_a_row = 0;
    std::uint32_t good_probes = 0;
    std::uint64_t probes = 0;  // in this period
    std::uint64_t sends = 0;   // accepted in this period
    std::deque<Sample> samples;
    // A rule that held after the last sync submit, so the pod's next event must be its entry.
    relaysim::sms::AsyncRule must_enter = relaysim::sms::AsyncRule::none;
    Time must_enter_at{};
  };
  Message* find(relaysim::sms::MessageId id);
  relaysim::sms::MessageId find_key(std::string_view key) const;  // 0: never accepted
  PodMode& mode(relaysim::sms::PodId pod);
  std::string async_rule_unmet(const PodMode& m, relaysim::sms::AsyncRule rule, Time at) const;
  std::string latency_window_unmet(const PodMode& m, Time at) const;
  std::string growth_unmet(const PodMode& m, Time at) const;
  std::string error_rate_unmet(const PodMode& m, Time at) const;
  void check_async_late(PodMode& m, relaysim::sms::PodId pod, Time at);
  void reset_local_limits(relaysim::sms::PodId pod);
  void check_send_path(const relaysim::sms::Accepted& e);
  void check_repeat(const relaysim::sms::AcceptRequest& req, const relaysim::sms::AcceptResult& r);
  void check_quota_refusal(const relaysim::sms::AcceptRequest& req);
  void record_accepted(const relaysim::sms::AcceptRequest& req, const relaysim::sms::AcceptResult& r);
  void check_backoff(Message& m, const relaysim::sms::SubmitFinished& e);
  void check_failover(Message& m, const relaysim::sms::SubmitFinished& e);
  void observe_sync_submit(const relaysim::sms::SubmitFinished& e);
  void check_marketing(const relaysim::sms::SubmitStarted& e);
  // The other sides of S-marketing, S-schedule: a suppression or an expiry was true.
  void check_ending(const Message& m, relaysim::sms::MessageId id, const relaysim::sms::MessageRow& row,
                    const relaysim::sms::Completion& c);
  // How long `r`'s quiet hours still last at `at` (zero outside them), from the directory's truth.
  Duration quiet_left(relaysim::sms::Recipient r, Time at) const;
  // `r`'s places in the frequency cap's window at `at`, as the store keeps them (model/sms/store.h).
  std::vector<std::pair<Time, relaysim::sms::MessageId>>& cap_places(relaysim::sms::Recipient r, Time at);
  void violate(Invariant i, Time at, relaysim::sms::MessageId id, std::string what);
  const BusinessSpec* business(relaysim::sms::BusinessId id) const;  // null when unknown
  void finalise(Message& m, relaysim::sms::MessageId id, relaysim::sms::Status s, Time at);
  // A move of the message's status: S-lifecycle when kMessageLifecycle has no such move. `from`:
  // the status the store says it had (a claim's prior), else the one the oracle followed.
  void move(Message& m, relaysim::sms::MessageId id, relaysim::sms::Status from, relaysim::sms::Status to, Time at);

  const SmsSpec& spec_;
  Ledger& ledger_;
  std::vector<Message> messages_;  // by id - 1
  // Every accepted message's key, "business/type/id", back to back in one arena (key_at_[id - 1]:
  // its offset << 24 | its length), indexed by a hash of the text.
  CompactFlatIndex keys_;
  std::string key_arena_;
  std::vector<std::uint64_t> key_at_;
  // Quota units held per (business, period), as the oracle counts them.
  std::unordered_map<std::uint64_t, std::uint64_t> charged_;
  std::array<std::uint64_t, kDuplicateCauseCount> duplicates_{};
  std::uint64_t sent_ = 0;
  std::uint64_t lost_ = 0;
  std::uint64_t refunds_ = 0;
  std::string scratch_;
  // S-limit: each shared limit as the store keeps it, by key; each pod's local limits, by
  // business (0: the cluster's).
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return hash_bytes(s); }
  };
  std::unordered_map<std::string, LimitReplay, KeyHash, std::equal_to<>> store_limits_;
  std::vector<std::unordered_map<relaysim::sms::BusinessId, LimitReplay>> local_limits_;  // by pod - 1
  std::uint64_t limit_checks_ = 0;
  // S-scope: the epochs of grants revoked so far, by business id - 1.
  std::vector<std::vector<std::uint64_t>> revoked_epochs_;
  // S-async, by pod - 1.
  std::vector<PodMode> modes_;
  // S-marketing: the directory's truth (its users as drawn, and the opt-outs of the run), and per
  // recipient the places its marketing messages hold in the cap's window, oldest first: a message
  // takes one at a submit unless it holds one still in the window (as many as were taken, not
  // `cap.count` of them: a cap of a million costs nothing more).
  SimDirectory directory_;
  std::unordered_map<relaysim::sms::Recipient, std::vector<std::pair<Time, relaysim::sms::MessageId>>> cap_places_;
};

}  // namespace relaysim::sim::sms
