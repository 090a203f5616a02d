// The SMS Store contract (model/sms/store.h), run against every implementation.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/sms/memory_store.h"
#include "model/sms/sqlite_store.h"

namespace relaysim::sms {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

struct StoreFactory {
  const char* name;
  std::function<std::unique_ptr<Store>()> make;
};

void PrintTo(const StoreFactory& f, std::ostream* os) { *os << f.name; }

constexpr BusinessId kShop = 1;
constexpr BusinessId kBank = 2;
constexpr Duration kLease = seconds(30);

class SmsStoreContract : public ::testing::TestWithParam<StoreFactory> {
 protected:
  std::unique_ptr<Store> store = GetParam().make();
  Time t0 = Time{} + seconds(100);

  void SetUp() override {
    store->put_business({kShop, "shop", GrantState::approved, 10, 1, {}, {}});
    store->put_business({kBank, "bank", GrantState::approved, 10, 1, {}, {}});
  }

  static NewMessage msg(std::string_view type, std::string_view id, std::uint64_t content = 7, Time send_at = {}) {
    NewMessage m;
    m.biz_type = type;
    m.biz_id = id;
    m.recipient = 4915112345678ULL;
    m.template_id = 3;
    m.content = content;
    m.send_at = send_at;
    return m;
  }
  AcceptResult accept(BusinessId b, std::vector<NewMessage> ms, Time now = {}, PodId claim_for = 0,
                      std::uint64_t epoch = 1) {
    AcceptRequest r;
    r.business = b;
    r.epoch = epoch;
    r.now = now == Time{} ? t0 : now;
    r.period = 0;
    r.messages = ms;
    r.claim_for = claim_for;
    r.lease = kLease;
    return store->accept(r);
  }
  MessageId accepted(BusinessId b, std::string_view id, Time send_at = {}) {
    const AcceptResult r = accept(b, {msg("otp", id, 7, send_at)});
    EXPECT_EQ(r.outcome, AcceptOutcome::accepted);
    return r.first;
  }
  static Completion done(Status s, Reason why, Time at, bool accepted_by_provider, Time due = {}) {
    Completion c;
    c.status = s;
    c.reason = why;
    c.at = at;
    c.due_at = due;
    c.provider = 0;
    c.pod = 1;
    c.attempts = 1;
    c.accepted = accepted_by_provider;
    return c;
  }
  std::uint64_t in(Status s) { return store->counts().by_status[static_cast<int>(s)]; }
};

// A move happens only from the state it names, in one statement: of two back offices moving one
// business out of one state, one moves it; an epoch moves on only with it.
TEST_P(SmsStoreContract, AMoveOfABusinessHappensOnlyFromTheStateItNames) {
  const BusinessId b = store->add_business({0, "cafe", GrantState::applied, 5, 1, {"CAFE"}, {4}});
  EXPECT_TRUE(store->move_business(b, GrantState::applied, GrantState::approved, false));
  EXPECT_FALSE(store->move_business(b, GrantState::applied, GrantState::rejected, false));
  EXPECT_EQ(store->business(b)->state, GrantState::approved);
  EXPECT_TRUE(store->move_business(b, GrantState::approved, GrantState::revoked, true));
  EXPECT_FALSE(store->move_business(b, GrantState::approved, GrantState::revoked, true));
  EXPECT_EQ(store->business(b)->epoch, 2U);
  EXPECT_EQ(store->business(b)->senders, std::vector<std::string>{"CAFE"});
  EXPECT_FALSE(store->move_business(b + 100, GrantState::applied, GrantState::approved, false));
}

// A new business takes the next id, and its application is read back whole.
TEST_P(SmsStoreContract, AddBusinessTakesTheNextIdAndKeepsItsApplication) {
  const BusinessId a = store->add_business({77, "cafe", GrantState::applied, 5, 1, {"CAFE", "c\"afe"}, {4, 9}});
  const BusinessId b = store->add_business({0, "deli", GrantState::applied, 6, 1, {}, {}});
  EXPECT_EQ(a, kBank + 1);
  EXPECT_EQ(b, kBank + 2);
  const std::optional<BusinessRow> row = store->business(a);
  ASSERT_TRUE(row);
  EXPECT_EQ(*row, (BusinessRow{a, "cafe", GrantState::applied, 5, 1, {"CAFE", "c\"afe"}, {4, 9}}));
  BusinessRow approved = *row;
  approved.state = GrantState::approved;
  store->put_business(approved);
  EXPECT_EQ(store->business(a), approved);
  EXPECT_EQ(store->business(b)->senders, std::vector<std::string>{});
}

TEST_P(SmsStoreContract, ARepeatIsADuplicateAnsweredWithTheFirstOutcome) {
  const MessageId id = accepted(kShop, "o-1");
  const AcceptResult again = accept(kShop, {msg("otp", "o-1")});
  EXPECT_EQ(again.outcome, AcceptOutcome::duplicate);
  EXPECT_EQ(again.first, id);
  EXPECT_EQ(answer_for(again.status), Answer::pending);
  EXPECT_EQ(store->quota_used(kShop, 0), 1u) << "a repeat charges nothing";

  MessageRow row;
  ASSERT_EQ(store->claim_due(t0, 1, kLease, row), Status::pending);
  ASSERT_TRUE(store->complete(id, row.claim_token, done(Status::submitted, Reason::none, t0, true, t0 + minutes(5))));
  EXPECT_EQ(answer_for(accept(kShop, {msg("otp", "o-1")}).status), Answer::success);
  EXPECT_EQ(in(Status::submitted), 1u);
}

TEST_P(SmsStoreContract, TheSameKeyWithOtherContentIsAConflictThatChangesNothing) {
  const MessageId id = accepted(kShop, "o-1");
  const AcceptResult c = accept(kShop, {msg("otp", "o-1", 8)});
  EXPECT_EQ(c.outcome, AcceptOutcome::conflict);
  EXPECT_EQ(c.first, id);
  EXPECT_EQ(store->get(id)->content, 7u);
  EXPECT_EQ(store->quota_used(kShop, 0), 1u);
}

TEST_P(SmsStoreContract, DedupIsPerBusinessAndPerBizType) {
  const MessageId a = accepted(kShop, "o-1");
  EXPECT_EQ(accept(kShop, {msg("marketing", "o-1")}).outcome, AcceptOutcome::accepted) << "another biz_type";
  EXPECT_EQ(accept(kBank, {msg("otp", "o-1")}).outcome, AcceptOutcome::accepted) << "another business";
  EXPECT_EQ(store->find(kShop, "otp", "o-1"), a);
  EXPECT_NE(store->find(kBank, "otp", "o-1"), a);
  EXPECT_FALSE(store->find(kShop, "otp", "o-2").has_value());
}

TEST_P(SmsStoreContract, QuotaIsChargedOncePerMessageAndNeverExceeded) {
  for (int i = 0; i < 10; ++i) accepted(kShop, "m" + std::to_string(i));
  const AcceptResult over = accept(kShop, {msg("otp", "m10")});
  EXPECT_EQ(over.outcome, AcceptOutcome::quota_exhausted);
  EXPECT_EQ(over.quota_left, 0u);
  EXPECT_EQ(store->quota_used(kShop, 0), 10u);
  EXPECT_FALSE(store->find(kShop, "otp", "m10").has_value()) << "a refused request stores nothing";
  EXPECT_EQ(store->quota_used(kBank, 0), 0u) << "quotas are per business";
  AcceptRequest next;  // a new period starts afresh
  const NewMessage m = msg("otp", "m10");
  next.business = kShop;
  next.epoch = 1;
  next.now = t0;
  next.period = 1;
  next.messages = {&m, 1};
  EXPECT_EQ(store->accept(next).outcome, AcceptOutcome::accepted);
}

TEST_P(SmsStoreContract, ABulkRequestIsAllOrNothing) {
  for (int i = 0; i < 7; ++i) accepted(kShop, "m" + std::to_string(i));
  std::vector<NewMessage> bulk;
  for (const char* k : {"b#0", "b#1", "b#2", "b#3"}) bulk.push_back(msg("notice", k));
  EXPECT_EQ(accept(kShop, bulk).outcome, AcceptOutcome::quota_exhausted);
  EXPECT_EQ(store->quota_used(kShop, 0), 7u);
  bulk.pop_back();
  const AcceptResult ok = accept(kShop, bulk);
  ASSERT_EQ(ok.outcome, AcceptOutcome::accepted);
  EXPECT_EQ(ok.quota_left, 0u);
  for (std::size_t i = 0; i < bulk.size(); ++i) {
    EXPECT_EQ(store->find(kShop, "notice", bulk[i].biz_id), ok.first + i) << "consecutive ids in request order";
  }
  EXPECT_EQ(accept(kShop, bulk).outcome, AcceptOutcome::duplicate);
}

TEST_P(SmsStoreContract, ARequestNamingAKeyTwiceOrHalfKnownIsAConflict) {
  EXPECT_EQ(accept(kShop, {msg("n", "x"), msg("n", "x")}).outcome, AcceptOutcome::conflict);
  EXPECT_EQ(store->quota_used(kShop, 0), 0u);
  EXPECT_FALSE(store->find(kShop, "n", "x").has_value());
  accepted(kShop, "k#0");
  EXPECT_EQ(accept(kShop, {msg("otp", "k#0"), msg("otp", "k#1")}).outcome, AcceptOutcome::conflict);
  EXPECT_FALSE(store->find(kShop, "otp", "k#1").has_value());
}

TEST_P(SmsStoreContract, ARevokedOrUnapprovedGrantAcceptsNothing) {
  EXPECT_EQ(accept(kShop, {msg("otp", "a")}, {}, 0, 2).outcome, AcceptOutcome::revoked) << "another epoch";
  store->put_business({kShop, "shop", GrantState::revoked, 10, 2, {}, {}});
  EXPECT_EQ(accept(kShop, {msg("otp", "a")}, {}, 0, 2).outcome, AcceptOutcome::revoked);
  store->put_business({kShop, "shop", GrantState::approved, 10, 3, {}, {}});
  EXPECT_EQ(accept(kShop, {msg("otp", "a")}, {}, 0, 2).outcome, AcceptOutcome::revoked) << "an old token";
  EXPECT_EQ(accept(kShop, {msg("otp", "a")}, {}, 0, 3).outcome, AcceptOutcome::accepted);
  EXPECT_EQ(accept(99, {msg("otp", "a")}).outcome, AcceptOutcome::unknown_business);
  EXPECT_EQ(store->business(kShop)->epoch, 3u);
}

TEST_P(SmsStoreContract, AcceptCanClaimWhatIsDueNowForTheAcceptingPod) {
  std::vector<NewMessage> ms{msg("otp", "now"), msg("otp", "later", 7, t0 + minutes(1))};
  const AcceptResult r = accept(kShop, ms, t0, 4);
  ASSERT_EQ(r.outcome, AcceptOutcome::accepted);
  const MessageRow now = *store->get(r.first);
  EXPECT_EQ(now.status, Status::in_flight);
  EXPECT_EQ(now.lease_owner, 4u);
  EXPECT_EQ(now.claim_token, r.first_token);
  EXPECT_EQ(now.due_at, t0 + kLease);
  const MessageRow later = *store->get(r.first + 1);
  EXPECT_EQ(later.status, Status::pending);
  EXPECT_EQ(later.due_at, t0 + minutes(1));
  MessageRow row;
  EXPECT_FALSE(store->claim_due(t0 + kLease - seconds(1), 1, minutes(10), row));
  EXPECT_EQ(store->claim_due(t0 + kLease, 1, minutes(10), row), Status::in_flight) << "an abandoned claim is rescued";
  EXPECT_EQ(row.id, r.first);
  EXPECT_GT(row.claim_token, r.first_token);
  EXPECT_FALSE(store->claim_due(t0 + seconds(59), 1, kLease, row)) << "never before send_at";
  EXPECT_EQ(store->claim_due(t0 + minutes(1), 1, kLease, row), Status::pending);
  EXPECT_EQ(row.id, r.first + 1);
  EXPECT_FALSE(store->complete(r.first, r.first_token, done(Status::failed, Reason::refused, t0 + minutes(1), false)))
      << "the first claimant is fenced off";
}

TEST_P(SmsStoreContract, ClaimsTheEarliestDueThenTheLowestId) {
  const MessageId late = accepted(kShop, "late", t0 + seconds(5));
  const MessageId a = accepted(kShop, "a");
  const MessageId b = accepted(kShop, "b");
  MessageRow row;
  EXPECT_FALSE(store->claim_due(t0 - seconds(1), 1, kLease, row));
  EXPECT_EQ(store->next_due(), t0);
  ASSERT_TRUE(store->claim_due(t0, 1, kLease, row));
  EXPECT_EQ(row.id, a);
  const ClaimToken first = row.claim_token;
  ASSERT_TRUE(store->claim_due(t0, 1, kLease, row));
  EXPECT_EQ(row.id, b);
  EXPECT_GT(row.claim_token, first) << "tokens strictly increase";
  EXPECT_FALSE(store->claim_due(t0, 1, kLease, row));
  EXPECT_EQ(store->next_due(), t0 + seconds(5));
  ASSERT_TRUE(store->claim_due(t0 + seconds(5), 2, kLease, row));
  EXPECT_EQ(row.id, late);
  EXPECT_EQ(row.status, Status::in_flight);
  EXPECT_EQ(row.lease_owner, 2u);
}

// Asked again after every kind of write, next_due always answers for the store as it is now (a
// batching SQLite store remembers its last answer until it writes).
TEST_P(SmsStoreContract, NextDueFollowsEveryWrite) {
  EXPECT_FALSE(store->next_due().has_value());
  EXPECT_FALSE(store->next_due().has_value());
  const MessageId id = accepted(kShop, "n", t0 + seconds(7));
  EXPECT_EQ(store->next_due(), t0 + seconds(7));
  MessageRow row;
  ASSERT_TRUE(store->claim_due(t0 + seconds(7), 1, kLease, row));
  EXPECT_EQ(store->next_due(), t0 + seconds(7) + kLease);
  ASSERT_TRUE(store->complete(id, row.claim_token, done(Status::submitted, Reason::none, t0 + seconds(8), true, t0 + minutes(9))));
  EXPECT_EQ(store->next_due(), t0 + minutes(9));
  ASSERT_EQ(store->receipt(id, true, t0 + seconds(9)), ReceiptOutcome::applied);
  EXPECT_FALSE(store->next_due().has_value());
}

// The compensation scan: every non-final status comes due, and claim says which it was.
TEST_P(SmsStoreContract, EveryNonFinalStatusComesDue) {
  const MessageId p = accepted(kShop, "p");
  const MessageId u = accepted(kShop, "u");
  const MessageId s = accepted(kShop, "s");
  const MessageId f = accepted(kShop, "f");
  std::vector<MessageRow> claims(4);
  for (MessageRow& c : claims) ASSERT_TRUE(store->claim_due(t0, 1, kLease, c));
  const Time t1 = t0 + seconds(1);
  ASSERT_TRUE(store->complete(p, claims[0].claim_token, done(Status::pending, Reason::none, t1, false, t1 + seconds(10))));
  ASSERT_TRUE(store->complete(u, claims[1].claim_token, done(Status::unknown, Reason::none, t1, false, t1 + seconds(20))));
  ASSERT_TRUE(store->complete(s, claims[2].claim_token, done(Status::submitted, Reason::none, t1, true, t1 + seconds(40))));
  // f stays in flight: its lease ends at t0 + 30 s.
  const Time end = t1 + minutes(1);
  MessageRow row;
  std::vector<std::pair<MessageId, Status>> claimed;
  while (const std::optional<Status> prior = store->claim_due(end, 2, minutes(10), row)) {
    claimed.emplace_back(row.id, *prior);
  }
  const std::vector<std::pair<MessageId, Status>> expected{
      {p, Status::pending}, {u, Status::unknown}, {f, Status::in_flight}, {s, Status::submitted}};
  EXPECT_EQ(claimed, expected);
}

TEST_P(SmsStoreContract, AFailureWithNoCertainAcceptRefundsOnce) {
  const MessageId refused = accepted(kShop, "r");
  const MessageId taken = accepted(kShop, "t");
  MessageRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, kLease, row));
  ASSERT_TRUE(store->complete(refused, row.claim_token, done(Status::failed, Reason::refused, t0, false)));
  EXPECT_EQ(store->quota_used(kShop, 0), 1u);
  EXPECT_FALSE(store->get(refused)->charged);
  ASSERT_TRUE(store->claim_due(t0, 1, kLease, row));
  ASSERT_TRUE(store->complete(taken, row.claim_token, done(Status::submitted, Reason::none, t0, true, t0 + kLease)));
  ASSERT_TRUE(store->claim_due(t0 + kLease, 1, kLease, row));
  ASSERT_TRUE(store->complete(taken, row.claim_token, done(Status::unconfirmed, Reason::no_receipt, t0 + kLease, false)));
  EXPECT_EQ(store->quota_used(kShop, 0), 1u) << "a provider took it: no refund";
  EXPECT_TRUE(store->get(taken)->accepted);
  EXPECT_EQ(store->counts().charged, 1u);
}

TEST_P(SmsStoreContract, OnlyABusinesssOwnFailedMessageIsResentAndTheResendIsChargedAgain) {
  const MessageId failed = accepted(kShop, "f");
  const MessageId open = accepted(kShop, "o");
  MessageRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, kLease, row));
  ASSERT_TRUE(store->complete(failed, row.claim_token, done(Status::failed, Reason::refused, t0, false)));
  EXPECT_EQ(store->quota_used(kShop, 0), 1u) << "the failure refunded its unit";
  auto resend = [&](BusinessId b, MessageId of, std::string_view id) {
    NewMessage m = msg("resend", id);
    m.kind = Kind::resend;
    m.resend_of = of;
    return accept(b, {m});
  };
  EXPECT_EQ(resend(kShop, open, "r1").outcome, AcceptOutcome::not_resendable) << "not failed";
  EXPECT_EQ(resend(kBank, failed, "r2").outcome, AcceptOutcome::not_resendable) << "another business's";
  EXPECT_EQ(resend(kShop, 999, "r3").outcome, AcceptOutcome::not_resendable) << "no such message";
  const AcceptResult r = resend(kShop, failed, "r4");
  ASSERT_EQ(r.outcome, AcceptOutcome::accepted);
  EXPECT_EQ(store->get(r.first)->resend_of, failed);
  EXPECT_EQ(store->get(r.first)->kind, Kind::resend);
  EXPECT_EQ(store->quota_used(kShop, 0), 2u) << "a resend is a new message, charged like one";
  EXPECT_EQ(resend(kShop, failed, "r4").outcome, AcceptOutcome::duplicate) << "its own key dedups";
}

TEST_P(SmsStoreContract, RetriesChargeNothing) {
  const MessageId id = accepted(kShop, "r");
  MessageRow row;
  Time at = t0;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(store->claim_due(at, 1, kLease, row));
    at += seconds(1);
    ASSERT_TRUE(store->complete(id, row.claim_token, done(Status::pending, Reason::none, at, false, at)));
  }
  EXPECT_EQ(store->get(id)->attempts, 4u);
  EXPECT_EQ(store->quota_used(kShop, 0), 1u);
}

TEST_P(SmsStoreContract, AReceiptFinalisesWhateverHoldsTheMessage) {
  const MessageId id = accepted(kShop, "x");
  MessageRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, kLease, row));
  ASSERT_TRUE(store->complete(id, row.claim_token, done(Status::unknown, Reason::none, t0, false, t0 + seconds(5))));
  ASSERT_TRUE(store->claim_due(t0 + seconds(5), 1, kLease, row));
  EXPECT_EQ(store->receipt(id, true, t0 + seconds(6)), ReceiptOutcome::applied) << "proof it was accepted";
  EXPECT_FALSE(store->complete(id, row.claim_token, done(Status::failed, Reason::ambiguous, t0 + seconds(7), false)));
  EXPECT_EQ(store->receipt(id, false, t0 + seconds(8)), ReceiptOutcome::already_final);
  EXPECT_EQ(store->receipt(999, true, t0), ReceiptOutcome::not_found);
  const MessageRow after = *store->get(id);
  EXPECT_EQ(after.status, Status::delivered);
  EXPECT_EQ(after.reason, Reason::receipt);
  EXPECT_TRUE(after.accepted);
  EXPECT_EQ(store->quota_used(kShop, 0), 1u);
  EXPECT_FALSE(store->next_due().has_value());
}

TEST_P(SmsStoreContract, TheHistoryKeepsEveryStatusInOrder) {
  const MessageId id = accepted(kShop, "h");
  MessageRow row;
  ASSERT_TRUE(store->claim_due(t0, 3, kLease, row));
  ASSERT_TRUE(store->complete(id, row.claim_token, done(Status::submitted, Reason::none, t0 + seconds(1), true, t0 + minutes(1))));
  ASSERT_EQ(store->receipt(id, false, t0 + seconds(9)), ReceiptOutcome::applied);
  const std::vector<StatusChange> h = store->history(id);
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0].status, Status::pending);
  EXPECT_EQ(h[1].status, Status::in_flight);
  EXPECT_EQ(h[1].pod, 3u);
  EXPECT_EQ(h[2].status, Status::submitted);
  EXPECT_EQ(h[2].provider, 0u);
  EXPECT_EQ(h[3].status, Status::undelivered);
  EXPECT_EQ(h[3].reason, Reason::receipt);
  EXPECT_EQ(h[3].at, t0 + seconds(9));
  EXPECT_TRUE(store->history(999).empty());
}

TEST_P(SmsStoreContract, MessagesByBusinessStatusAndTime) {
  const MessageId a = accepted(kShop, "a");
  const MessageId b = accepted(kShop, "b");
  accepted(kBank, "a");
  const AcceptResult late = accept(kShop, {msg("otp", "c")}, t0 + minutes(1));
  MessageRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, kLease, row));  // a
  EXPECT_EQ(store->messages({kShop, std::nullopt, Time{}, kTimeNever, 10}), (std::vector<MessageId>{a, b, late.first}));
  EXPECT_EQ(store->messages({kShop, Status::pending, Time{}, kTimeNever, 10}), (std::vector<MessageId>{b, late.first}));
  EXPECT_EQ(store->messages({kShop, std::nullopt, t0 + seconds(1), kTimeNever, 10}), (std::vector<MessageId>{late.first}));
  EXPECT_EQ(store->messages({kShop, std::nullopt, Time{}, kTimeNever, 1}), (std::vector<MessageId>{a}));
  EXPECT_TRUE(store->messages({77, std::nullopt, Time{}, kTimeNever, 10}).empty());
}

TEST_P(SmsStoreContract, CountsFollowEveryChange) {
  const MessageId a = accepted(kShop, "a");
  accepted(kShop, "b");
  MessageRow row;
  ASSERT_TRUE(store->claim_due(t0, 1, kLease, row));
  ASSERT_TRUE(store->complete(a, row.claim_token, done(Status::failed, Reason::exhausted, t0, false)));
  const StoreCounts c = store->counts();
  EXPECT_EQ(c.by_status[static_cast<int>(Status::pending)], 1u);
  EXPECT_EQ(c.by_status[static_cast<int>(Status::failed)], 1u);
  EXPECT_EQ(c.by_reason[static_cast<int>(Reason::exhausted)], 1u);
  EXPECT_EQ(c.charged, 1u);
}

NewCampaign campaign_of(BusinessId b, std::string_view id, Time now, std::string_view filter = "all") {
  NewCampaign c;
  c.business = b;
  c.epoch = 1;
  c.biz_type = "marketing";
  c.biz_id = id;
  c.filter = filter;
  c.template_id = 4;
  c.content = 99;
  c.now = now;
  c.send_at = now;
  return c;
}

TEST_P(SmsStoreContract, ACampaignIsJudgedLikeARequestAndDedupedOnItsKey) {
  const CampaignStart first = store->start_campaign(campaign_of(kShop, "c1", t0));
  ASSERT_EQ(first.outcome, AcceptOutcome::accepted);
  EXPECT_EQ(first.id, 1u);
  NewCampaign repeat = campaign_of(kShop, "c1", t0);
  repeat.now = t0 + seconds(5);  // a client's retry: the same campaign, later
  const CampaignStart again = store->start_campaign(repeat);
  EXPECT_EQ(again.outcome, AcceptOutcome::duplicate);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(store->start_campaign(campaign_of(kShop, "c1", t0, "opt_in")).outcome, AcceptOutcome::conflict);
  EXPECT_EQ(store->start_campaign(campaign_of(kBank, "c1", t0)).outcome, AcceptOutcome::accepted);
  NewCampaign stale = campaign_of(kShop, "c2", t0);
  stale.epoch = 0;
  EXPECT_EQ(store->start_campaign(stale).outcome, AcceptOutcome::revoked);
  EXPECT_EQ(store->start_campaign(campaign_of(77, "c3", t0)).outcome, AcceptOutcome::unknown_business);
  EXPECT_EQ(store->counts().charged, 0u) << "a campaign charges as its chunks are accepted";
  const std::optional<CampaignRow> row = store->campaign(first.id);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->filter, "all");
  EXPECT_EQ(row->state, CampaignState::expanding);
  EXPECT_EQ(row->due_at, t0);
}

TEST_P(SmsStoreContract, ACampaignIsClaimedByOnePodAtATimeAndAdvancedOnlyUnderItsToken) {
  const CampaignId id = store->start_campaign(campaign_of(kShop, "c1", t0)).id;
  EXPECT_EQ(store->next_campaign_due(), t0);
  CampaignRow mine, theirs;
  ASSERT_TRUE(store->claim_campaign(t0, 1, kLease, mine));
  EXPECT_EQ(mine.id, id);
  EXPECT_EQ(mine.owner, 1u);
  EXPECT_FALSE(store->claim_campaign(t0 + seconds(1), 2, kLease, theirs)) << "claimed until its lease ends";
  EXPECT_EQ(store->next_campaign_due(), t0 + kLease);
  // The lease ran out: another pod takes it over, and the first one's progress is fenced off.
  ASSERT_TRUE(store->claim_campaign(t0 + kLease, 2, kLease, theirs));
  EXPECT_GT(theirs.claim_token, mine.claim_token);
  CampaignProgress p;
  p.cursor = 100;
  p.messages = 40;
  p.skipped = 2;
  p.due_at = t0 + kLease + seconds(1);
  EXPECT_FALSE(store->advance_campaign(id, mine.claim_token, p));
  ASSERT_TRUE(store->advance_campaign(id, theirs.claim_token, p));
  std::optional<CampaignRow> row = store->campaign(id);
  EXPECT_EQ(row->cursor, 100u);
  EXPECT_EQ(row->messages, 40u);
  EXPECT_EQ(row->skipped, 2u);
  EXPECT_EQ(row->due_at, p.due_at);
  ASSERT_TRUE(store->claim_campaign(p.due_at, 1, kLease, mine));
  p.cursor = 250;
  p.state = CampaignState::stopped;
  p.stopped_by = AcceptOutcome::quota_exhausted;
  ASSERT_TRUE(store->advance_campaign(id, mine.claim_token, p));
  row = store->campaign(id);
  EXPECT_EQ(row->state, CampaignState::stopped);
  EXPECT_EQ(row->stopped_by, AcceptOutcome::quota_exhausted);
  EXPECT_EQ(row->messages, 80u);
  EXPECT_FALSE(store->next_campaign_due()) << "a stopped campaign is never due";
  EXPECT_FALSE(store->claim_campaign(p.due_at + std::chrono::hours(1), 1, kLease, mine));
  EXPECT_FALSE(store->advance_campaign(id, mine.claim_token, p)) << "an ended campaign takes no more progress";
}

TEST_P(SmsStoreContract, TheFrequencyCapCountsMessagesInARollingWindowOncePerMessage) {
  const FrequencyCap cap{2, minutes(60)};
  constexpr Recipient kAnn = 4470000000001;
  constexpr Recipient kBob = 4470000000002;
  EXPECT_TRUE(store->take_cap(kAnn, 1, t0, cap));
  EXPECT_TRUE(store->take_cap(kAnn, 1, t0 + minutes(5), cap)) << "a retry of a message holds its place";
  EXPECT_TRUE(store->take_cap(kAnn, 2, t0 + minutes(10), cap));
  EXPECT_FALSE(store->take_cap(kAnn, 3, t0 + minutes(20), cap)) << "two in the hour already";
  EXPECT_TRUE(store->take_cap(kBob, 3, t0 + minutes(20), cap)) << "the cap is per recipient";
  EXPECT_FALSE(store->take_cap(kAnn, 3, t0 + minutes(59), cap));
  EXPECT_TRUE(store->take_cap(kAnn, 3, t0 + minutes(60), cap)) << "the window is (now - per, now]: the place at t0 is out";
  EXPECT_FALSE(store->take_cap(kAnn, 4, t0 + minutes(61), cap));
  EXPECT_TRUE(store->take_cap(kAnn, 4, t0 + minutes(61), FrequencyCap{0, minutes(60)})) << "count 0: no cap";
  EXPECT_TRUE(store->take_cap(kAnn, 2, t0 + minutes(75), cap))
      << "its place at t0 + 10 minutes is out of the window: message 2 takes another";
  const std::vector<CapPlaceRow> expected{{kAnn, 1, t0},
                                          {kAnn, 2, t0 + minutes(10)},
                                          {kAnn, 3, t0 + minutes(60)},
                                          {kAnn, 2, t0 + minutes(75)},
                                          {kBob, 3, t0 + minutes(20)}};
  EXPECT_EQ(store->cap_places(), expected) << "every place taken is kept, by recipient, oldest first";
}

INSTANTIATE_TEST_SUITE_P(
    Stores, SmsStoreContract,
    ::testing::Values(StoreFactory{"memory", [] { return std::unique_ptr<Store>(new MemoryStore()); }},
                      StoreFactory{"sqlite", [] { return std::unique_ptr<Store>(new SqliteStore(":memory:")); }},
                      // As simulations run it: one long transaction, each call in a savepoint.
                      StoreFactory{"sqlite_batched",
                                   [] { return std::unique_ptr<Store>(new SqliteStore(":memory:", Durability::off)); }}),
    [](const ::testing::TestParamInfo<StoreFactory>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace relaysim::sms
