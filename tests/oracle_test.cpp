// The oracle must be able to fail: each test plants one violation of an invariant in an event
// stream that is otherwise fine, and the oracle must name that invariant (and nothing else).
#include <gtest/gtest.h>

#include "model/store/memory_store.h"
#include "sim/oracle/oracle.h"

namespace relaysim::sim {
namespace {

using namespace relaysim::webhook;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

class OracleTest : public ::testing::Test {
 protected:
  OracleTest() {
    oracle.pod_started(0, Time{});  // as the world starts its pods at time zero
    oracle.pod_started(1, Time{});
  }
  static Scenario two_pods() {
    Scenario s;
    s.platform.pods = 2;
    s.endpoints.push_back(EndpointGroup{});
    s.platform.retry.backoff.jitter = Jitter::none;  // min delay = the base delay
    return s;
  }
  Scenario scenario = two_pods();
  ServiceB serviceb{scenario.serviceb, 1, 1, 1};
  Oracle oracle{scenario, serviceb};
  MemoryStore store;
  RequestRow row;

  Time at(Duration d) { return Time{} + d; }

  // Creates request 1 for cx0 at time zero through the real store, as the platform would.
  void ingest() {
    const NewRequest req{"cx0", "r1", "{}", Time{}, Time{} + hours(24)};
    const CreateResult r = store.create(req);
    oracle.ingested(0, req, r, Time{});
    oracle.client_created(ClientKey{0, 1, 7}, IngestResult{IngestStatus::created, r.id, {}}, Time{});
    row = *store.get(r.id);
  }
  std::string url(std::uint64_t version = 1) {
    std::string u;
    ServiceB::url_for(0, 0, version, u);
    return u;
  }
  // One attempt at `start` that the endpoint answers with `status` after 100 ms.
  void attempt(std::uint32_t n, Time start, int status, Duration retry_after = Duration{-1}) {
    oracle.attempt_started(0, row, n, url(), 1, start);
    SendFate f;
    f.processed = true;
    f.status = status;
    f.received_at = start + std::chrono::milliseconds(50);
    f.result_at = start + std::chrono::milliseconds(100);
    oracle.http_sent(0, row.id, f, start);
    AttemptRow a{row.id, n, 0, 1, start, f.result_at, url(), 1, NetError::none, status};
    oracle.attempt_finished(0, a, HttpResult{NetError::none, status, retry_after}, Verdict::retry);
    const bool ok = status >= 200 && status < 300;
    const Completion c{&a, ok ? Status::delivered : Status::pending, ok ? Reason::ok : Reason::none, f.result_at,
                       f.result_at + seconds(1), f.result_at, {}};
    oracle.completed(0, row, c, true);
  }
  void expect_only(Invariant i) {
    for (int k = 0; k < kInvariantCount; ++k) {
      const auto inv = static_cast<Invariant>(k);
      EXPECT_EQ(oracle.violations(inv) > 0, inv == i) << invariant_id(inv);
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
  oracle.attempt_started(0, row, 1, url(), 1, at(seconds(1)));
  SendFate f;
  f.client_error = NetError::timeout;
  f.result_at = at(seconds(31));
  oracle.http_sent(0, row.id, f, at(seconds(1)));
  oracle.attempt_started(1, row, 1, url(), 1, at(seconds(10)));
  expect_only(Invariant::nodup);
}

TEST_F(OracleTest, AnEndpointDuplicateWithNothingToExplainIt) {
  ingest();
  attempt(1, at(seconds(1)), 200);          // delivered and recorded as such...
  oracle.attempt_started(0, row, 2, url(), 1, at(minutes(5)));  // ...yet attempted again
  EXPECT_GT(oracle.violations(Invariant::nodup), 0u);
}

TEST_F(OracleTest, ADuplicateAfterALostResponseIsExplained) {
  ingest();
  oracle.attempt_started(0, row, 1, url(), 1, at(seconds(1)));
  SendFate lost;
  lost.processed = true;
  lost.status = 200;
  lost.response_lost = true;
  lost.client_error = NetError::timeout;
  lost.result_at = at(seconds(31));
  oracle.http_sent(0, row.id, lost, at(seconds(1)));
  AttemptRow a{row.id, 1, 0, 1, at(seconds(1)), at(seconds(31)), url(), 1, NetError::timeout, 0};
  oracle.attempt_finished(0, a, HttpResult{NetError::timeout, 0, Duration{-1}}, Verdict::retry);
  oracle.completed(0, row, Completion{&a, Status::pending, Reason::none, at(seconds(31)), at(seconds(32)), at(seconds(31)), {}}, true);
  attempt(2, at(seconds(40)), 200);
  EXPECT_EQ(oracle.total_violations(), 0u);
  EXPECT_EQ(oracle.duplicates(DuplicateCause::lost_response), 1u);
}

TEST_F(OracleTest, ARetryThatIgnoresRetryAfter) {
  ingest();
  attempt(1, at(seconds(1)), 429, minutes(2));
  attempt(2, at(seconds(31)), 200);
  expect_only(Invariant::retry);
}

TEST_F(OracleTest, ARetrySoonerThanTheBackoff) {
  scenario.platform.retry.backoff.initial = seconds(10);
  Oracle strict{scenario, serviceb};
  const NewRequest req{"cx0", "r1", "{}", Time{}, Time{} + hours(24)};
  strict.ingested(0, req, store.create(req), Time{});
  row = *store.get(1);
  strict.attempt_started(0, row, 1, url(), 1, at(seconds(1)));
  AttemptRow a{1, 1, 0, 1, at(seconds(1)), at(seconds(2)), url(), 1, NetError::none, 500};
  strict.completed(0, row, Completion{&a, Status::pending, Reason::none, at(seconds(2)), at(seconds(3)), at(seconds(2)), {}}, true);
  strict.attempt_started(0, row, 2, url(), 1, at(seconds(3)));  // 1 s later; the policy asks for 10 s
  EXPECT_EQ(strict.violations(Invariant::retry), 1u);
}

TEST_F(OracleTest, AnAttemptWithAUrlServiceBNeverHeld) {
  ingest();
  oracle.attempt_started(0, row, 1, url(5), 5, at(seconds(1)));
  expect_only(Invariant::url);
}

TEST_F(OracleTest, AServiceBCallThroughAnOpenBreaker) {
  oracle.breaker_changed(1, BreakerState::closed, BreakerState::open, at(seconds(1)));
  oracle.serviceb_called(0, 0, at(seconds(2)), at(seconds(3)), true, false);  // another pod: fine
  EXPECT_EQ(oracle.total_violations(), 0u);
  oracle.serviceb_called(1, 0, at(seconds(2)), at(seconds(3)), true, false);
  expect_only(Invariant::breaker);
}

TEST_F(OracleTest, ADuplicateCreateAnsweredWithAnotherRequest) {
  ingest();
  oracle.client_created(ClientKey{0, 1, 7}, IngestResult{IngestStatus::duplicate, 99, {}}, at(seconds(1)));
  expect_only(Invariant::idem);
}

TEST_F(OracleTest, AnAcknowledgedRequestMissingFromTheStore) {
  const NewRequest req{"cx0", "r1", "{}", Time{}, Time{} + hours(24)};
  oracle.ingested(0, req, CreateResult{CreateOutcome::created, 1}, Time{});  // the store never saw it
  oracle.finish(at(hours(1)), store.counts(), {});
  expect_only(Invariant::noloss);
  EXPECT_EQ(oracle.lost(), 1u);
}

TEST_F(OracleTest, ARequestStillOpenLongAfterItsDeadline) {
  ingest();
  oracle.finish(at(hours(48)), store.counts(), {});
  expect_only(Invariant::deadline);
}

TEST_F(OracleTest, TimeWithNoPodUpStretchesTheDeadlineBound) {
  ingest();
  oracle.pod_crashed(0, at(hours(23)));
  oracle.pod_crashed(1, at(hours(23)));
  oracle.pod_started(0, at(hours(30)));  // nothing could act for 7 hours
  const Completion late{nullptr, Status::dead_lettered, Reason::deadline, at(hours(30) + seconds(1)), {}, {}, {}};
  oracle.claimed(0, row, at(hours(30)));
  oracle.completed(0, row, late, true);
  EXPECT_EQ(oracle.violations(Invariant::deadline), 0u);
}

}  // namespace
}  // namespace relaysim::sim
