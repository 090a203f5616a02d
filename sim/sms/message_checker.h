// MessageChecker: the S-* invariants of the messages themselves, judged on one record per
// accepted message that it keeps from the gateway's events and the world's ground truth:
//
//   S-dedup      one message per (business, biz_type, biz_id); a repeat answered with the first
//                one's message and its outcome so far; a new request never taken for a repeat
//   S-quota      never over a business's quota, refused for quota only when it did not fit, and
//                the store's count (at back-office queries and at the end) what the charges less
//                refunds come to
//   S-scope      no request accepted with a revoked grant; bad tokens refused, good ones not
//   S-final      every accepted message kept, ending at most once, as the back office says
//   S-schedule   no submit before send_at, no expiry within the validity
//   S-failover   an untried provider at once after a certain no; the same provider after an
//                ambiguous outcome; no submit after a certain accept its claim could see (live:
//                one recorded before the claim or the claim's last limit decision)
//   S-dup        every second provider accept explained (and counted by cause)
//   S-retry      submits within max_attempts as the gateway counts them, each retry's wait within
//                the backoff, no exhausted before that many
//   S-lifecycle  every status change a move of kMessageLifecycle
//   S-marketing  through its MarketingRules (sim/sms/marketing_rules.h), at a place taken in the
//                frequency cap, a submit and a suppression of a message it follows
//
// These share the record: most of them read what another one's events wrote (a claim's round
// for S-failover, the counted submits for S-retry, the final status for S-dedup and S-final), and
// several are checked in one event in an order the reports keep, so they stay one checker.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/core/events.h"
#include "model/core/flat_index.h"
#include "model/core/names.h"
#include "model/sms/events.h"
#include "model/sms/store.h"
#include "sim/oracle/ledger.h"
#include "sim/sms/directory.h"
#include "sim/sms/marketing_rules.h"
#include "sim/sms/spec.h"
#include "sim/sms/truth.h"
#include "sim/sms/violations.h"

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

class MessageChecker final : public SinkFor<relaysim::sms::Accepted>,
                             public SinkFor<relaysim::sms::Claimed>,
                             public SinkFor<relaysim::sms::CapTaken>,
                             public SinkFor<relaysim::sms::LimitDecided>,
                             public SinkFor<relaysim::sms::SubmitStarted>,
                             public SinkFor<relaysim::sms::SubmitFinished>,
                             public SinkFor<relaysim::sms::Completed>,
                             public SinkFor<relaysim::sms::ReceiptReceived>,
                             public SinkFor<ClientAnswered>,
                             public SinkFor<ProviderSubmitted>,
                             public SinkFor<OptedOut>,
                             public SinkFor<AdminActed>,
                             public SinkFor<AdminQueried> {
 public:
  // `seed`: the run's, from which the directory's users are drawn.
  MessageChecker(const SmsSpec& spec, std::uint64_t seed, Ledger& ledger, Judged judged = Judged::simulation);

  void on(const relaysim::sms::Accepted& e) override;
  void on(const relaysim::sms::Claimed& e) override;
  void on(const relaysim::sms::CapTaken& e) override;
  void on(const relaysim::sms::LimitDecided& e) override;
  void on(const relaysim::sms::SubmitStarted& e) override;
  void on(const relaysim::sms::SubmitFinished& e) override;
  void on(const relaysim::sms::Completed& e) override;
  void on(const relaysim::sms::ReceiptReceived& e) override;
  void on(const ClientAnswered& e) override;
  void on(const ProviderSubmitted& e) override;
  void on(const OptedOut& e) override { marketing_.opt_out(e.recipient); }
  void on(const AdminActed& e) override;
  void on(const AdminQueried& e) override;

  // The end-of-run checks: every message it saw accepted is in the store, and the quota the store
  // holds is what one charge per message, less refunds, comes to.
  void finish(Time end, relaysim::sms::Store& store);

  std::uint64_t duplicates(DuplicateCause c) const { return duplicates_[static_cast<std::size_t>(c)]; }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t lost() const { return lost_; }
  std::uint64_t refunds() const { return refunds_; }

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
    // Judged live: the current claim looked at the message after its certain accept was recorded
    // (it claimed it then, or read it again after a shared limit answered, dispatcher.h).
    bool accept_seen = false;
    relaysim::sms::PodId claim_pod = 0;  // the pod of the current claim
    std::uint8_t seen_accepts = 0;  // submits whose accept the gateway heard of
    bool rescued = false;       // the current claim took over an expired lease
    bool store_failed = false;  // a completion of it failed to be recorded
    bool submitted = false;     // it has been submitted at least once
    std::uint16_t submits = 0;  // submits started (ground truth), for S-retry
    // Submits that reached a provider (the world's count), and the highest attempt number the
    // gateway gave a submit (in its log or at a provider): a live run's log may lack the start of
    // one its killed process sent, and a submit it counted may never reach a provider.
    std::uint16_t reached = 0;
    std::uint16_t last_attempt = 0;
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
    bool known = false;  // accepted (a live run may tell of a larger id first)
  };
  Message* find(relaysim::sms::MessageId id);
  relaysim::sms::MessageId find_key(std::string_view key) const;  // 0: never accepted
  void check_repeat(const relaysim::sms::AcceptRequest& req, const relaysim::sms::AcceptResult& r);
  void check_quota_refusal(const relaysim::sms::AcceptRequest& req);
  void record_accepted(const relaysim::sms::AcceptRequest& req, const relaysim::sms::AcceptResult& r);
  void check_backoff(Message& m, const relaysim::sms::SubmitFinished& e);
  void check_failover(Message& m, const relaysim::sms::SubmitFinished& e);
  // The other sides of S-schedule, S-marketing: an expiry or a suppression was true.
  void check_ending(const Message& m, relaysim::sms::MessageId id, const relaysim::sms::MessageRow& row,
                    const relaysim::sms::Completion& c);
  const BusinessSpec* business(relaysim::sms::BusinessId id) const;  // null when unknown
  void finalise(Message& m, relaysim::sms::MessageId id, relaysim::sms::Status s, Time at);
  // A move of the message's status: S-lifecycle when kMessageLifecycle has no such move. `from`:
  // the status the store says it had (a claim's prior), else the one the oracle followed.
  void move(Message& m, relaysim::sms::MessageId id, relaysim::sms::Status from, relaysim::sms::Status to, Time at);

  const SmsSpec& spec_;
  Judged judged_;
  Violations violate_;
  std::vector<Message> messages_;  // by id - 1
  std::uint64_t accepted_ = 0;     // messages accepted (known)
  // Every accepted message's key, "business/type/id", back to back in one arena (key_at_[id - 1]:
  // its offset << 24 | its length), indexed by a hash of the text.
  CompactFlatIndex keys_;
  std::string key_arena_;
  static constexpr std::uint64_t kNoKey = ~std::uint64_t{0};  // a message with no key of its own (a second use of one)
  std::vector<std::uint64_t> key_at_;
  // Quota units held per (business, period), as the oracle counts them.
  std::unordered_map<std::uint64_t, std::uint64_t> charged_;
  std::array<std::uint64_t, kDuplicateCauseCount> duplicates_{};
  std::uint64_t sent_ = 0;
  std::uint64_t lost_ = 0;
  std::uint64_t refunds_ = 0;
  std::string scratch_;
  // S-scope: the epochs of grants revoked so far, by business id - 1.
  std::vector<std::vector<std::uint64_t>> revoked_epochs_;
  MarketingRules marketing_;
};

}  // namespace relaysim::sim::sms
