// A whole day of retries, attempt by attempt: one request to an endpoint that always answers 503,
// no jitter, no cache, nothing else in the world to wake a pod. Every attempt must start exactly
// when the policy says — computed here by hand from the scenario's own numbers, not by the
// model's backoff code — and the request must be dead-lettered at its deadline, not later.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "model/webhook/sqlite_store.h"
#include "sim/run.h"
#include "sim/loader.h"

namespace relaysim::sim::webhook {
namespace {

using namespace relaysim::webhook;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr const char* kScenario = R"(name: retry-schedule
seed: 7
duration: 25h
system: webhook
webhook:
  platform:
    pods: 2
    retry: {backoff: exponential, initial: 1s, multiplier: 2, max_interval: 15m, jitter: none, deadline: 24h}
    url_cache: {ttl: 0s}
  world:
    serviceb: {latency: {p50: 20ms, p99: 20ms}}
    endpoints:
      - {name: broken, count: 1, latency: {p50: 150ms, p99: 150ms}, errors: {rate: 100%, status: 503}}
    cxids: 1
  load:
    - {burst: 1, at: 10s}
)";

// The policy above, by hand: 1 s doubling, capped at 15 minutes.
Duration backoff(std::uint32_t retry) {
  return retry > 20 ? Duration{minutes(15)} : std::min<Duration>(seconds(1LL << (retry - 1)), minutes(15));
}

TEST(RetrySchedule, EveryAttemptOfAFullDayIsWhereThePolicyPutsIt) {
  const std::string db = ::testing::TempDir() + "retry-schedule.db";
  std::filesystem::remove(db);
  RunOptions o;
  o.store = StoreKind::sqlite;
  o.sqlite_path = db;
  const RunResult r = run_scenario(parse_scenario(kScenario, "retry-schedule.yaml"), std::move(o));
  ASSERT_EQ(r.ledger.total(), 0u) << r.ledger.describe(r.ledger.examples().front());

  SqliteStore store(db);
  const std::optional<RequestRow> row = store.get(1);
  ASSERT_TRUE(row.has_value());
  const std::vector<AttemptRow> attempts = store.attempts(1);
  ASSERT_GE(attempts.size(), 2u);
  const Time created = Time{} + seconds(10);
  const Time deadline = created + hours(24);
  EXPECT_EQ(row->deadline_at, deadline);

  // The world's two constant latencies, read off the first attempt: the lookup before it (no
  // cache) and the endpoint's answer.
  const Duration lookup = attempts[0].started_at - created;
  const Duration answer = attempts[0].finished_at - attempts[0].started_at;
  ASSERT_GT(lookup, Duration::zero());
  ASSERT_GT(answer, Duration::zero());

  // The schedule: attempt n+1 starts one lookup after attempt n's backoff has passed, the
  // backoff clamped to the deadline; no attempt starts after the deadline.
  std::vector<Time> expected;
  Time start = created + lookup;
  for (std::uint32_t n = 1; start <= deadline; ++n) {
    expected.push_back(start);
    const Time finished = start + answer;
    start = std::min(finished + backoff(n), deadline) + lookup;
  }
  ASSERT_EQ(attempts.size(), expected.size());
  EXPECT_EQ(attempts.size(), 105u);  // the first, 10 doubling retries up to the cap, then one every 15 minutes
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    EXPECT_EQ(attempts[i].number, i + 1);
    EXPECT_EQ(attempts[i].http_status, 503);
    EXPECT_EQ(attempts[i].started_at, expected[i]) << "attempt " << i + 1 << " started at "
                                                   << format_time(attempts[i].started_at) << ", the policy says "
                                                   << format_time(expected[i]);
    EXPECT_EQ(attempts[i].finished_at, expected[i] + answer) << "attempt " << i + 1;
  }
  // Dead-lettered the moment its last retry, due at the deadline, finds the deadline passed.
  EXPECT_EQ(row->status, Status::dead_lettered);
  EXPECT_EQ(row->reason, Reason::deadline);
  EXPECT_EQ(row->terminal_at, deadline + lookup);
  std::filesystem::remove(db);
}

}  // namespace
}  // namespace relaysim::sim::webhook
