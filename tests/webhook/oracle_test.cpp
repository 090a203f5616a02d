// The oracle must be able to fail: each test plants one violation of an invariant in an event
// stream that is otherwise fine, and the oracle must name that invariant (and nothing else).
#include <gtest/gtest.h>

#include "model/webhook/memory_store.h"
#include "sim/webhook/oracle.h"

namespace relaysim::sim::webhook {
namespace {

using namespace relaysim::webhook;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// The two checkers as the run wires them, fed by hand.
struct Oracle {
  Oracle(const Scenario& s, const ServiceB& b)
      : store_faults(s), ledger(kInvariants), requests(s, b, store_faults, spec_of(s).platform.retention, ledger), breakers(s, b, ledger) {}
  StoreFaults store_faults;
  Ledger ledger;
  RequestChecker requests;
  BreakerChecker breakers;

  template <class E>
  void on(const E& e) {
    if constexpr (std::is_base_of_v<SinkFor<E>, RequestChecker>) requests.on(e);
    if constexpr (std::is_base_of_v<SinkFor<E>, BreakerChecker>) breakers.on(e);
  }
  void finish(Time end, const StoreCounts& counts, const std::vector<BreakerState>& final_breakers,
              const std::vector<Notice>& outbox = {}) {
    requests.finish(end, counts, outbox);
    breakers.finish(end, final_breakers);
  }
  std::uint64_t violations(Invariant i) const { return ledger.count(index(i)); }
  std::uint64_t total_violations() const { return ledger.total(); }
};

class OracleTest : public ::testing::Test {
 protected:
  OracleTest() {
    oracle.on(ProcessStarted{0, Time{}});  // as the world starts its pods at time zero
    oracle.on(ProcessStarted{1, Time{}});
  }
  static Scenario two_pods() {
    Scenario s = make_scenario();
    WebhookSpec& w = spec_of(s);
    w.platform.pods = 2;
    w.endpoints.push_back(EndpointGroup{});
    w.platform.retry.backoff.jitter = Jitter::none;  // min delay = the base delay
    return s;
  }
  Scenario scenario = two_pods();
  ServiceB serviceb{spec_of(scenario).serviceb, 1, 1, 1};
  Oracle oracle{scenario, serviceb};
  MemoryStore store;
  RequestRow row;

  Time at(Duration d) { return Time{} + d; }

  // Creates request 1 for cx0 at time zero through the real store, as the platform would.
  void ingest() {
    const NewRequest req{"cx0", "r1", "{}", Time{}, Time{} + hours(24)};
    const ClientKey key{0, 1, 7, 1};
    oracle.on(ClientCalling{key, Time{}});
    const CreateResult r = store.create(req);
    oracle.on(Ingested{0, req, r, Time{}});
    const IngestResult result{IngestStatus::created, r.id, {}};
    oracle.on(ClientCreated{key, result, Time{}});
    row = *store.get(r.id);
  }
  std::string url(std::uint64_t version = 1) {
    std::string u;
    ServiceB::url_for(0, 0, version, u);
    return u;
  }
  // Attempt n by `pod` at `t` with URL `version`, after a lookup of pod's answered then with the
  // version ServiceB holds.
  void started(PodId pod, std::uint32_t n, std::uint64_t version, Time t) {
    oracle.on(ServiceBCalled{pod, 0, t - std::chrono::milliseconds(5), t, true, false, serviceb.version(0)});
    const std::string u = url(version);
    oracle.on(AttemptStarted{pod, row, n, u, version, t});
  }
  void finished(const AttemptRow& a, const HttpResult& h) { oracle.on(AttemptFinished{0, a, h, Verdict::retry}); }
  void completed(const Completion& c, bool applied = true) { oracle.on(Completed{0, row, c, applied}); }
  // What reached the endpoint: by default request 1's own URL, webhook-id and payload (key 1,
  // payload digest 7, as ingest() created it).
  void sent(const SendFate& f, Time t, std::uint64_t version = 1, std::string_view webhook_id = "msg_1",
            std::uint64_t payload = 7) {
    oracle.on(ServiceBCalled{0, 0, t - std::chrono::milliseconds(5), t, true, false, serviceb.version(0)});
    const std::string u = url(version);
    oracle.on(HttpSent{0, request_id_from_webhook_id(webhook_id), f, t, u, webhook_id, 1, payload});
  }
  // One attempt at `start` that the endpoint answers with `status` after 100 ms.
  void attempt(std::uint32_t n, Time start, int status, Duration retry_after = Duration{-1}) {
    // A claim comes before every attempt, and holds the request for the lease from then.
    RequestRow claimed = row;
    claimed.due_at = start + spec_of(scenario).platform.lease;
    oracle.on(Claimed{0, claimed, start});
    started(0, n, 1, start);
    SendFate f;
    f.processed = true;
    f.status = status;
    f.received_at = start + std::chrono::milliseconds(50);
    f.result_at = start + std::chrono::milliseconds(100);
    sent(f, start);
    AttemptRow a{row.id, n, 0, 1, start, f.result_at, url(), 1, NetError::none, status, {}};
    finished(a, HttpResult{NetError::none, status, retry_after, {}});
    const bool ok = status >= 200 && status < 300;
    completed(Completion{&a, ok ? Status::delivered : Status::pending, ok ? Reason::ok : Reason::none, f.result_at,
                         f.result_at + seconds(1), f.result_at, {}});
  }
  // A send the endpoint processed and answered with `status`; the client learns it at `result_at`.
  static SendFate answered(int status, Time result_at) {
    SendFate f;
    f.processed = true;
    f.status = status;
    f.result_at = result_at;
    return f;
  }
  // Request 1 dead-lettered, in the store and to the oracle, a second after its deadline; returns then.
  Time dead_letter_at_deadline() {
    const Time late = at(hours(24) + seconds(1));
    EXPECT_TRUE(store.claim_expired(late, 0, seconds(60), row));
    oracle.on(Claimed{0, row, late});
    Completion c{nullptr, Status::dead_lettered, Reason::deadline, late, late, late, {}};
    c.notify = true;
    EXPECT_TRUE(store.complete(row.id, row.claim_token, c));
    completed(c);
    return late;
  }
  void expect_only(Invariant i) {
    for (std::size_t k = 0; k < kInvariantCount; ++k) {
      EXPECT_EQ(oracle.ledger.count(k) > 0, k == index(i)) << kInvariants[k].id;
    }
  }
};

TEST_F(OracleTest, AHealthyHistoryHasNoViolations) {
  ingest();
  attempt(1, at(seconds(1)), 503);
  attempt(2, at(seconds(3)), 200);
  EXPECT_EQ(oracle.total_violations(), 0u);
}

TEST_F(OracleTest, TheStoreMustAgreeWithWhatThePlatformReported) {
  ingest();
  attempt(1, at(seconds(1)), 200);  // reported delivered; the store was never told
  oracle.finish(at(hours(30)), store.counts(), {BreakerState::closed, BreakerState::closed});
  expect_only(Invariant::noloss);
}

TEST_F(OracleTest, AnAttemptAfterTheDeadline) {
  ingest();
  attempt(1, at(hours(25)), 200);
  expect_only(Invariant::deadline);
}

TEST_F(OracleTest, AnAttemptWhileAnotherIsInFlight) {
  ingest();
  started(0, 1, 1, at(seconds(1)));
  SendFate f;
  f.client_error = NetError::timeout;
  f.result_at = at(seconds(31));
  sent(f, at(seconds(1)));
  started(1, 1, 1, at(seconds(10)));
  expect_only(Invariant::nodup);
}

TEST_F(OracleTest, AnEndpointDuplicateWithNothingToExplainIt) {
  ingest();
  attempt(1, at(seconds(1)), 200);          // delivered and recorded as such...
  started(0, 2, 1, at(minutes(5)));  // ...yet attempted again
  EXPECT_GT(oracle.violations(Invariant::nodup), 0u);
}

TEST_F(OracleTest, ADuplicateAfterALostResponseIsExplained) {
  ingest();
  oracle.on(Claimed{0, row, at(seconds(1))});
  started(0, 1, 1, at(seconds(1)));
  SendFate lost;
  lost.processed = true;
  lost.status = 200;
  lost.response_lost = true;
  lost.client_error = NetError::timeout;
  lost.result_at = at(seconds(31));
  sent(lost, at(seconds(1)));
  AttemptRow a{row.id, 1, 0, 1, at(seconds(1)), at(seconds(31)), url(), 1, NetError::timeout, 0, {}};
  finished(a, HttpResult{NetError::timeout, 0, Duration{-1}, {}});
  completed(Completion{&a, Status::pending, Reason::none, at(seconds(31)), at(seconds(32)), at(seconds(31)), {}});
  attempt(2, at(seconds(40)), 200);
  EXPECT_EQ(oracle.total_violations(), 0u);
  EXPECT_EQ(oracle.requests.duplicates(DuplicateCause::lost_response), 1u);
}

TEST_F(OracleTest, ARetryThatIgnoresRetryAfter) {
  ingest();
  attempt(1, at(seconds(1)), 429, minutes(2));
  attempt(2, at(seconds(31)), 200);
  expect_only(Invariant::retry);
}

// An attempt whose completion the store could not record is made again after the lease; the
// Retry-After it was answered with binds nothing (nobody recorded it).
TEST_F(OracleTest, ARetryAfterOfALostCompletionBindsNothing) {
  ingest();
  attempt(1, at(seconds(1)), 503);  // recorded: the retry is due a second later
  started(0, 2, 1, at(seconds(3)));
  AttemptRow a{row.id, 2, 0, 1, at(seconds(3)), at(seconds(4)), url(), 1, NetError::none, 429, {}};
  finished(a, HttpResult{NetError::none, 429, minutes(2), {}});
  oracle.on(Completed{0, row, Completion{&a, Status::pending, Reason::none, at(seconds(4)), at(seconds(124)),
                                         at(seconds(124)), {}}, false, true});  // the store failed
  started(1, 2, 1, at(seconds(40)));  // rescued after the lease: attempt 2 again, 36 s later
  EXPECT_EQ(oracle.total_violations(), 0u) << oracle.ledger.describe(oracle.ledger.examples().front());
}

TEST_F(OracleTest, ARetrySoonerThanTheBackoff) {
  spec_of(scenario).platform.retry.backoff.initial = seconds(10);
  Oracle strict{scenario, serviceb};
  const NewRequest req{"cx0", "r1", "{}", Time{}, Time{} + hours(24)};
  const CreateResult created = store.create(req);
  strict.on(Ingested{0, req, created, Time{}});
  row = *store.get(1);
  const std::string u = url();
  strict.on(AttemptStarted{0, row, 1, u, 1, at(seconds(1))});
  AttemptRow a{1, 1, 0, 1, at(seconds(1)), at(seconds(2)), url(), 1, NetError::none, 500, {}};
  const Completion c{&a, Status::pending, Reason::none, at(seconds(2)), at(seconds(12)), at(seconds(2)), {}};
  strict.on(Completed{0, row, c, true});  // planned right: 10 s later...
  strict.on(AttemptStarted{0, row, 2, u, 1, at(seconds(3))});  // ...but attempted 1 s later
  EXPECT_EQ(strict.violations(Invariant::retry), 1u);
}

TEST_F(OracleTest, AnAttemptWithAUrlServiceBNeverHeld) {
  ingest();
  started(0, 1, 5, at(seconds(1)));
  expect_only(Invariant::url);
}

// The platform reports the right URL but the request reaches another: judged at the endpoint.
TEST_F(OracleTest, AnEndpointReachedAtAUrlOtherThanTheOneReported) {
  ingest();
  started(0, 1, 1, at(seconds(1)));
  SendFate f = answered(200, at(seconds(2)));
  sent(f, at(seconds(1)), 5);  // version 5: ServiceB never held it
  expect_only(Invariant::url);
}

// The cache's age counts from when the lookup was sent: a slow answer may be used as it arrives
// (even past sent + TTL), but not served from the cache after sent + TTL.
TEST_F(OracleTest, AUrlServedFromTheCachePastSentPlusTtl) {
  ingest();
  const Duration ttl = spec_of(scenario).platform.url_cache_ttl;
  const Time sent = at(seconds(1));
  const Time answered = sent + ttl + seconds(5);
  oracle.on(ServiceBCalled{0, 0, sent, answered, true, false, 1});
  const std::string u = url(1);
  oracle.on(AttemptStarted{0, row, 1, u, 1, answered});  // the answer itself: fine
  EXPECT_EQ(oracle.total_violations(), 0u);
  oracle.on(AttemptStarted{0, row, 1, u, 1, answered + seconds(1)});  // from the cache: stale
  EXPECT_EQ(oracle.violations(Invariant::url), 1u);
  oracle.on(AttemptStarted{1, row, 1, u, 1, answered});  // another pod's answer: never its own
  EXPECT_EQ(oracle.violations(Invariant::url), 2u);
}

TEST_F(OracleTest, AWebhookIdThatChangesBetweenAttempts) {
  ingest();
  SendFate f = answered(503, at(seconds(2)));
  sent(f, at(seconds(1)));
  EXPECT_EQ(oracle.total_violations(), 0u);
  f.result_at = at(seconds(5));
  sent(f, at(seconds(4)), 1, "msg_1_2");
  expect_only(Invariant::url);
}

TEST_F(OracleTest, AWebhookIdThatNamesTheRequestAnotherWay) {
  ingest();
  SendFate f = answered(503, at(seconds(2)));
  sent(f, at(seconds(1)));
  f.result_at = at(seconds(5));
  sent(f, at(seconds(4)), 1, "msg_01");  // the same request, but the endpoint deduplicates by the text
  expect_only(Invariant::url);
}

TEST_F(OracleTest, TwoRequestsReachingTheirEndpointsWithOneWebhookId) {
  ingest();
  SendFate f = answered(200, at(seconds(2)));
  sent(f, at(seconds(1)));
  const NewRequest req{"cx0", "r2", "{}", at(seconds(1)), at(hours(24))};
  const CreateResult r = store.create(req);
  const ClientKey key{0, 2, 8, 2};
  oracle.on(ClientCalling{key, at(seconds(1))});
  oracle.on(Ingested{0, req, r, at(seconds(1))});
  oracle.on(ClientCreated{key, IngestResult{IngestStatus::created, r.id, {}}, at(seconds(1))});
  oracle.on(ServiceBCalled{0, 0, at(seconds(3)), at(seconds(3)), true, false, 1});
  const std::string u = url();
  oracle.on(HttpSent{0, request_id_from_webhook_id("msg_1"), f, at(seconds(3)), u, "msg_1", 2, 8});
  expect_only(Invariant::url);
}

TEST_F(OracleTest, APayloadOtherThanTheStoredOne) {
  ingest();
  SendFate f = answered(200, at(seconds(2)));
  sent(f, at(seconds(1)), 1, "msg_1", 8);
  expect_only(Invariant::url);
}

TEST_F(OracleTest, ARetryPlannedLaterThanThePolicyAllows) {
  ingest();
  AttemptRow a{row.id, 1, 0, 1, at(seconds(1)), at(seconds(2)), url(), 1, NetError::none, 503, {}};
  oracle.on(Claimed{0, row, at(seconds(1))});
  finished(a, HttpResult{NetError::none, 503, Duration{-1}, {}});
  // No jitter: the first retry waits exactly initial (1 s), not 2 s.
  completed(Completion{&a, Status::pending, Reason::none, at(seconds(2)), at(seconds(4)), at(seconds(2)), {}});
  expect_only(Invariant::retry);
}

TEST_F(OracleTest, ADeferralPlannedPastTheDeadline) {
  ingest();
  oracle.on(Claimed{0, row, at(hours(24) - seconds(1))});
  completed(Completion{nullptr, Status::blocked, Reason::none, at(hours(24) - seconds(1)), at(hours(24) + seconds(1)),
                       {}, {}});
  EXPECT_GT(oracle.violations(Invariant::deadline), 0u);
}

TEST_F(OracleTest, ADeadLetteredRequestWhoseTenantIsNeverTold) {
  ingest();
  dead_letter_at_deadline();
  oracle.finish(at(hours(30)), store.counts(), {});
  expect_only(Invariant::noloss);
  EXPECT_NE(oracle.ledger.examples().front().what.find("never told"), std::string::npos)
      << oracle.ledger.examples().front().what;
}

TEST_F(OracleTest, ATenantToldOfADeliveredRequest) {
  ingest();
  attempt(1, at(seconds(1)), 200);
  const Notice n{1, row.id, 0, 1, Status::delivered, Reason::ok, at(seconds(2))};
  oracle.on(TenantNotified{0, n, at(seconds(2))});
  expect_only(Invariant::noloss);
}

// The notice outbox: sent at least once, a second send only as a resend, none left waiting.
TEST_F(OracleTest, ANoticeSentAgainAfterItsSenderDiedIsNoDuplicate) {
  ingest();
  const Time late = dead_letter_at_deadline();
  Notice n;
  ASSERT_TRUE(store.claim_notice(late, seconds(60), n));
  oracle.on(TenantNotified{0, n, late});
  // The sender died before removing it; the lease expires and another pod sends it again.
  ASSERT_TRUE(store.claim_notice(late + seconds(60), seconds(60), n));
  EXPECT_EQ(n.sends, 2u);
  oracle.on(TenantNotified{1, n, late + seconds(60)});
  store.notice_sent(n.id);
  oracle.finish(at(hours(30)), store.counts(), {}, store.notices());
  EXPECT_EQ(oracle.total_violations(), 0u);
}

TEST_F(OracleTest, ATenantToldTwiceByTwoFirstSends) {
  ingest();
  const Time late = dead_letter_at_deadline();
  const Notice n{1, row.id, 0, 1, Status::dead_lettered, Reason::deadline, late};
  oracle.on(TenantNotified{0, n, late});
  oracle.on(TenantNotified{1, n, late});
  expect_only(Invariant::noloss);
}

TEST_F(OracleTest, ANoticeThatSaysAnotherEndThanTheRequestMet) {
  ingest();
  const Time late = dead_letter_at_deadline();
  const Notice n{1, row.id, 0, 1, Status::failed, Reason::gone, late};  // it was dead-lettered for its deadline
  oracle.on(TenantNotified{0, n, late});
  expect_only(Invariant::noloss);
  EXPECT_NE(oracle.ledger.examples().front().what.find("but it ended dead_lettered (deadline)"), std::string::npos)
      << oracle.ledger.examples().front().what;
}

TEST_F(OracleTest, ANoticeStillInTheOutboxAtTheEndIsNotLost) {
  ingest();
  const Time late = dead_letter_at_deadline();
  oracle.finish(late, store.counts(), {}, store.notices());
  EXPECT_EQ(oracle.total_violations(), 0u);
}

TEST_F(OracleTest, ANoticeLeftInTheOutboxPastItsBound) {
  ingest();
  dead_letter_at_deadline();
  oracle.finish(at(hours(30)), store.counts(), {}, store.notices());
  expect_only(Invariant::noloss);
  EXPECT_NE(oracle.ledger.examples().front().what.find("waited in the outbox"), std::string::npos)
      << oracle.ledger.examples().front().what;
}

// Replays. The request is dead-lettered at its deadline (its tenant told), then replayed.
TEST_F(OracleTest, AReplayedRequestLivesAgainWithAFreshDeadline) {
  ingest();
  const Time late = dead_letter_at_deadline();
  Notice n;
  ASSERT_TRUE(store.claim_notice(late, seconds(60), n));
  oracle.on(TenantNotified{0, n, late});
  store.notice_sent(n.id);
  const Time t = at(hours(30));
  const Time deadline = t + spec_of(scenario).platform.retry.deadline;
  ASSERT_EQ(store.replay(row.id, t, deadline), ReplayOutcome::replayed);
  oracle.on(Replayed{0, row.id, ReplayOutcome::replayed, deadline, t});
  ASSERT_EQ(store.replay(row.id, t, deadline), ReplayOutcome::not_terminal);
  oracle.on(Replayed{0, row.id, ReplayOutcome::not_terminal, deadline, t});
  // An attempt long after the old deadline, and the store's counts with the request pending again.
  row = *store.get(row.id);
  attempt(1, t + seconds(1), 503);
  oracle.finish(t + seconds(10), store.counts(), {});
  EXPECT_EQ(oracle.total_violations(), 0u);
}

TEST_F(OracleTest, AnAttemptPastItsClaimsLease) {
  ingest();
  // Claimed at 1s for 9s: another pod may hold the request from 10s on, so no attempt of this
  // claim may start then (a pod paused past its lease must not send when it wakes).
  RequestRow claimed = row;
  claimed.due_at = at(seconds(10));
  oracle.on(Claimed{0, claimed, at(seconds(1))});
  started(0, 1, 1, at(seconds(10)));
  expect_only(Invariant::nodup);
  EXPECT_NE(oracle.ledger.examples().front().what.find("after its claim's lease ended"), std::string::npos)
      << oracle.ledger.examples().front().what;
}

TEST_F(OracleTest, AnAttemptWithinItsClaimsLease) {
  ingest();
  RequestRow claimed = row;
  claimed.due_at = at(seconds(10));
  oracle.on(Claimed{0, claimed, at(seconds(1))});
  started(0, 1, 1, at(seconds(10)) - std::chrono::nanoseconds(1));
  EXPECT_EQ(oracle.total_violations(), 0u);
}

TEST_F(OracleTest, AReplayOfARequestThatIsNotTerminal) {
  ingest();
  oracle.on(Replayed{0, row.id, ReplayOutcome::replayed, at(hours(24) + seconds(5)), at(seconds(5))});
  // Only terminal requests replay (W-noloss), and pending -> pending is no move of a request's
  // lifecycle (W-lifecycle).
  for (std::size_t k = 0; k < kInvariantCount; ++k) {
    EXPECT_EQ(oracle.ledger.count(k) > 0, k == index(Invariant::noloss) || k == index(Invariant::lifecycle)) << kInvariants[k].id;
  }
}

TEST_F(OracleTest, AMoveTheLifecycleDoesNotHave) {
  ingest();
  // Completed without a claim: pending -> delivered skips in_flight.
  completed(Completion{nullptr, Status::delivered, Reason::ok, at(seconds(2)), at(seconds(2)), at(seconds(2)), {}});
  EXPECT_GT(oracle.violations(Invariant::lifecycle), 0u);
  EXPECT_NE(oracle.ledger.examples().front().what.find("pending -> delivered"), std::string::npos) << oracle.ledger.examples().front().what;
}

TEST_F(OracleTest, AReplayRefusedThoughTheRequestIsTerminal) {
  ingest();
  attempt(1, at(seconds(1)), 200);
  oracle.on(Replayed{0, row.id, ReplayOutcome::not_terminal, at(hours(24) + seconds(5)), at(seconds(5))});
  expect_only(Invariant::noloss);
}

TEST_F(OracleTest, AReplayThatFindsNoStoredRequest) {
  ingest();
  attempt(1, at(seconds(1)), 200);
  oracle.on(Replayed{0, row.id, ReplayOutcome::not_found, at(hours(24) + seconds(5)), at(seconds(5))});
  expect_only(Invariant::noloss);
}

TEST_F(OracleTest, AReplayWhoseDeadlineIsNotCountedFromTheReplay) {
  ingest();
  attempt(1, at(seconds(1)), 200);
  oracle.on(Replayed{0, row.id, ReplayOutcome::replayed, row.deadline_at, at(seconds(5))});  // the old deadline
  expect_only(Invariant::deadline);
}

// Pod 1's breaker opens at `t` on min_calls failures, the last answered then.
void trip(Oracle& oracle, Time t) {
  for (int i = 0; i < 20; ++i) {
    const Time answered = i == 19 ? t : t - std::chrono::milliseconds(20 - i);
    oracle.on(ServiceBCalled{1, 0, t - std::chrono::milliseconds(500), answered, false, false});
  }
  oracle.on(BreakerChanged{1, BreakerState::closed, BreakerState::open, t});
}

TEST_F(OracleTest, ABreakerThatOpensOnItsOwnFailures) {
  trip(oracle, at(seconds(5)));
  EXPECT_EQ(oracle.total_violations(), 0u);
}

TEST_F(OracleTest, ABreakerThatOpensOnFewerThanMinCalls) {
  for (int i = 0; i < 5; ++i) oracle.on(ServiceBCalled{1, 0, at(seconds(1)), at(seconds(2)), false, false});
  oracle.on(BreakerChanged{1, BreakerState::closed, BreakerState::open, at(seconds(2))});
  expect_only(Invariant::breaker);
}

TEST_F(OracleTest, ABreakerThatClosesBeforeEnoughProbesSucceed) {
  trip(oracle, at(seconds(5)));
  oracle.on(BreakerChanged{1, BreakerState::open, BreakerState::half_open, at(seconds(40))});  // open_for 30 s
  oracle.on(ServiceBCalled{1, 0, at(seconds(40)), at(seconds(41)), true, false});
  oracle.on(BreakerChanged{1, BreakerState::half_open, BreakerState::closed, at(seconds(41))});  // 1 of 3 probes
  expect_only(Invariant::breaker);
}

TEST_F(OracleTest, ABreakerMovedByAResultOfAnEarlierGeneration) {
  oracle.on(ServiceBCalled{1, 0, at(seconds(4)), at(seconds(7)), false, false});  // made while closed
  trip(oracle, at(seconds(5)));
  oracle.on(BreakerChanged{1, BreakerState::open, BreakerState::half_open, at(seconds(6))});  // before open_for
  EXPECT_EQ(oracle.violations(Invariant::breaker), 1u);
  // The slow failure from the closed period lands in half-open: it must not reopen the breaker.
  oracle.on(BreakerChanged{1, BreakerState::half_open, BreakerState::open, at(seconds(7))});
  EXPECT_EQ(oracle.violations(Invariant::breaker), 2u);
}

TEST_F(OracleTest, AServiceBCallThroughAnOpenBreaker) {
  trip(oracle, at(seconds(1)));
  oracle.on(ServiceBCalled{0, 0, at(seconds(2)), at(seconds(3)), true, false});  // another pod: fine
  EXPECT_EQ(oracle.total_violations(), 0u);
  oracle.on(ServiceBCalled{1, 0, at(seconds(2)), at(seconds(3)), true, false});
  expect_only(Invariant::breaker);
}

TEST_F(OracleTest, ABlockedRequestClaimedWhileItsPodsBreakerRefuses) {
  ingest();
  const Completion deferred{nullptr, Status::blocked, Reason::none, at(seconds(1)), at(seconds(6)), {}, {}};
  oracle.on(Claimed{0, row, at(seconds(1))});
  completed(deferred);
  trip(oracle, at(seconds(5)));  // pod 1 refuses until 5 s + open_for
  oracle.on(Claimed{0, row, at(seconds(6))});  // pod 0's breaker is closed: fine
  completed(deferred);
  EXPECT_EQ(oracle.total_violations(), 0u);
  oracle.on(Claimed{1, row, at(seconds(7))});  // it could only defer it again
  expect_only(Invariant::breaker);
}

TEST_F(OracleTest, ADuplicateCreateAnsweredWithAnotherRequest) {
  ingest();
  const ClientKey key{0, 1, 7, 1};
  const IngestResult dup{IngestStatus::duplicate, 99, {}};
  oracle.on(ClientCreated{key, dup, at(seconds(1))});
  expect_only(Invariant::idem);
}

// A key whose first create was refused (the store failed, or no pod was up) may be stored after
// younger keys; its duplicates are judged like any other's.
TEST_F(OracleTest, AKeyStoredAfterYoungerKeysIsStillJudged) {
  auto create = [&](std::uint64_t number, Time t) {
    const std::string rid = "r" + std::to_string(number);
    const NewRequest req{"cx0", rid, "{}", t, t + hours(24)};
    const CreateResult r = store.create(req);
    oracle.on(Ingested{0, req, r, t});
    const ClientKey key{0, number, 7, number};
    const IngestResult result{r.outcome == CreateOutcome::created ? IngestStatus::created : IngestStatus::duplicate, r.id, {}};
    oracle.on(ClientCreated{key, result, t});
    return r.id;
  };
  const ClientKey refused_key{0, 1, 7, 1};
  const IngestResult refused{IngestStatus::unavailable, 0, {}};
  oracle.on(ClientCreated{refused_key, refused, Time{}});  // r1's first create: the store failed
  create(2, at(seconds(1)));
  const RequestId r1 = create(1, at(seconds(2)));  // r1 stored after r2
  create(1, at(seconds(3)));                       // a duplicate: answered with r1
  EXPECT_EQ(oracle.total_violations(), 0u);
  const ClientKey key{0, 1, 7, 1};
  const IngestResult wrong{IngestStatus::duplicate, r1 + 7, {}};
  oracle.on(ClientCreated{key, wrong, at(seconds(4))});  // answered with another request: caught
  expect_only(Invariant::idem);
}

TEST_F(OracleTest, AnAcknowledgedRequestMissingFromTheStore) {
  const NewRequest req{"cx0", "r1", "{}", Time{}, Time{} + hours(24)};
  const CreateResult created{CreateOutcome::created, 1};
  oracle.on(Ingested{0, req, created, Time{}});  // the store never saw it
  oracle.finish(at(hours(1)), store.counts(), {});
  expect_only(Invariant::noloss);
  EXPECT_EQ(oracle.requests.lost(), 1u);
}

TEST_F(OracleTest, ARequestStillOpenLongAfterItsDeadline) {
  ingest();
  oracle.finish(at(hours(48)), store.counts(), {});
  expect_only(Invariant::deadline);
}

TEST_F(OracleTest, ADeadlineViolationNamesTheBoundAndTheClientsKey) {
  ingest();
  oracle.finish(at(hours(48)), store.counts(), {});
  ASSERT_EQ(oracle.ledger.examples().size(), 1u);
  const Violation& v = oracle.ledger.examples().front();
  EXPECT_EQ(v.subject, "request 1 (cx0, r1)");
  // No crashes: lookup_timeout 2s + http_timeout 30s + the default slack of 1s.
  EXPECT_NE(v.what.find("the bound is deadline + 33.000s"), std::string::npos) << v.what;
  EXPECT_NE(v.what.find("deadline_at 24h00m00.000s"), std::string::npos) << v.what;
}

TEST_F(OracleTest, TimeWithNoPodUpStretchesTheDeadlineBound) {
  ingest();
  oracle.on(ProcessCrashed{0, at(hours(23))});
  oracle.on(ProcessCrashed{1, at(hours(23))});
  oracle.on(ProcessStarted{0, at(hours(30))});  // nothing could act for 7 hours
  const Completion late{nullptr, Status::dead_lettered, Reason::deadline, at(hours(30) + seconds(1)), {}, {}, {}};
  oracle.on(Claimed{0, row, at(hours(30))});
  completed(late);
  EXPECT_EQ(oracle.violations(Invariant::deadline), 0u);
}

}  // namespace
}  // namespace relaysim::sim::webhook
