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
      : store_faults(s), ledger(kInvariants), requests(s, b, store_faults, ledger), breakers(s, b, ledger) {}
  StoreFaults store_faults;
  Ledger ledger;
  RequestChecker requests;
  BreakerChecker breakers;

  template <class E>
  void on(const E& e) {
    if constexpr (std::is_base_of_v<SinkFor<E>, RequestChecker>) requests.on(e);
    if constexpr (std::is_base_of_v<SinkFor<E>, BreakerChecker>) breakers.on(e);
  }
  void finish(Time end, const StoreCounts& counts, const std::vector<BreakerState>& final_breakers) {
    requests.finish(end, counts);
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
    const CreateResult r = store.create(req);
    oracle.on(Ingested{0, req, r, Time{}});
    const ClientKey key{0, 1, 7};
    const IngestResult result{IngestStatus::created, r.id, {}};
    oracle.on(ClientCreated{key, result, Time{}});
    row = *store.get(r.id);
  }
  std::string url(std::uint64_t version = 1) {
    std::string u;
    ServiceB::url_for(0, 0, version, u);
    return u;
  }
  void started(PodId pod, std::uint32_t n, std::uint64_t version, Time t) {
    const std::string u = url(version);
    oracle.on(AttemptStarted{pod, row, n, u, version, t});
  }
  void finished(const AttemptRow& a, const HttpResult& h) { oracle.on(AttemptFinished{0, a, h, Verdict::retry}); }
  void completed(const Completion& c, bool applied = true) { oracle.on(Completed{0, row, c, applied}); }
  // One attempt at `start` that the endpoint answers with `status` after 100 ms.
  void attempt(std::uint32_t n, Time start, int status, Duration retry_after = Duration{-1}) {
    started(0, n, 1, start);
    SendFate f;
    f.processed = true;
    f.status = status;
    f.received_at = start + std::chrono::milliseconds(50);
    f.result_at = start + std::chrono::milliseconds(100);
    oracle.on(HttpSent{0, row.id, f, start});
    AttemptRow a{row.id, n, 0, 1, start, f.result_at, url(), 1, NetError::none, status};
    finished(a, HttpResult{NetError::none, status, retry_after});
    const bool ok = status >= 200 && status < 300;
    completed(Completion{&a, ok ? Status::delivered : Status::pending, ok ? Reason::ok : Reason::none, f.result_at,
                         f.result_at + seconds(1), f.result_at, {}});
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
  oracle.on(HttpSent{0, row.id, f, at(seconds(1))});
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
  started(0, 1, 1, at(seconds(1)));
  SendFate lost;
  lost.processed = true;
  lost.status = 200;
  lost.response_lost = true;
  lost.client_error = NetError::timeout;
  lost.result_at = at(seconds(31));
  oracle.on(HttpSent{0, row.id, lost, at(seconds(1))});
  AttemptRow a{row.id, 1, 0, 1, at(seconds(1)), at(seconds(31)), url(), 1, NetError::timeout, 0};
  finished(a, HttpResult{NetError::timeout, 0, Duration{-1}});
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

TEST_F(OracleTest, ARetrySoonerThanTheBackoff) {
  spec_of(scenario).platform.retry.backoff.initial = seconds(10);
  Oracle strict{scenario, serviceb};
  const NewRequest req{"cx0", "r1", "{}", Time{}, Time{} + hours(24)};
  const CreateResult created = store.create(req);
  strict.on(Ingested{0, req, created, Time{}});
  row = *store.get(1);
  const std::string u = url();
  strict.on(AttemptStarted{0, row, 1, u, 1, at(seconds(1))});
  AttemptRow a{1, 1, 0, 1, at(seconds(1)), at(seconds(2)), url(), 1, NetError::none, 500};
  const Completion c{&a, Status::pending, Reason::none, at(seconds(2)), at(seconds(3)), at(seconds(2)), {}};
  strict.on(Completed{0, row, c, true});
  strict.on(AttemptStarted{0, row, 2, u, 1, at(seconds(3))});  // 1 s later; the policy asks for 10 s
  EXPECT_EQ(strict.violations(Invariant::retry), 1u);
}

TEST_F(OracleTest, AnAttemptWithAUrlServiceBNeverHeld) {
  ingest();
  started(0, 1, 5, at(seconds(1)));
  expect_only(Invariant::url);
}

TEST_F(OracleTest, AServiceBCallThroughAnOpenBreaker) {
  oracle.on(BreakerChanged{1, BreakerState::closed, BreakerState::open, at(seconds(1))});
  oracle.on(ServiceBCalled{0, 0, at(seconds(2)), at(seconds(3)), true, false});  // another pod: fine
  EXPECT_EQ(oracle.total_violations(), 0u);
  oracle.on(ServiceBCalled{1, 0, at(seconds(2)), at(seconds(3)), true, false});
  expect_only(Invariant::breaker);
}

TEST_F(OracleTest, ADuplicateCreateAnsweredWithAnotherRequest) {
  ingest();
  const ClientKey key{0, 1, 7};
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
    const ClientKey key{0, number, 7};
    const IngestResult result{r.outcome == CreateOutcome::created ? IngestStatus::created : IngestStatus::duplicate, r.id, {}};
    oracle.on(ClientCreated{key, result, t});
    return r.id;
  };
  const ClientKey refused_key{0, 1, 7};
  const IngestResult refused{IngestStatus::unavailable, 0, {}};
  oracle.on(ClientCreated{refused_key, refused, Time{}});  // r1's first create: the store failed
  create(2, at(seconds(1)));
  const RequestId r1 = create(1, at(seconds(2)));  // r1 stored after r2
  create(1, at(seconds(3)));                       // a duplicate: answered with r1
  EXPECT_EQ(oracle.total_violations(), 0u);
  const ClientKey key{0, 1, 7};
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
