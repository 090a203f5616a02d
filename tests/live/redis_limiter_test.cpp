// The limiter twin: one trace of calls — (time, key, operation, cost, member) — run through
// relaysim::Limiter, the rule the simulated Redis applies (sim/world/kv.cpp), and through
// model/resilience/limiter.lua on a real redis-server gives the same answer to every call: admitted
// or not, and the same retry-after to the nanosecond. All four algorithms, specs from one call per
// second to a million per day, times at and one nanosecond either side of window edges, costs past
// what a limit can ever admit, repeated sliding-log members, and a restart of Redis in the middle
// (it keeps nothing: both sides start afresh). This is what lets the simulator's Redis stand for
// the real one.
//
// The server is the system's redis-server (Debian's, installed by ./relaysim), started by the test
// in a temporary directory with no TCP port at all (a Unix socket there), no persistence, and
// killed at the end.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

#include "live/limiter_script.h"
#include "model/core/random.h"
#include "model/resilience/kv.h"
#include "model/resilience/limiters.h"
#include "tests/live/redis_server.h"

namespace relaysim {
namespace {

using testing_redis::RedisServer;

struct Reply {
  struct Free {
    void operator()(redisReply* r) const { freeReplyObject(r); }
  };
  std::unique_ptr<redisReply, Free> reply;
  explicit Reply(void* r) : reply(static_cast<redisReply*>(r)) {}
};

// What one call answered, on either side.
struct Answer {
  bool admitted = false;
  std::string retry_after;  // ns, or "max"
  bool operator==(const Answer&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Answer& a) {
  return out << (a.admitted ? "admitted" : "refused") << " (retry after " << a.retry_after << ")";
}

Answer of(const LimitDecision& d) {
  return {d.admitted, d.retry_after == Duration::max() ? "max" : std::to_string(to_ns(d.retry_after))};
}

// The model's side, as the simulated store applies a call (sim/world/kv.cpp).
Answer apply(Limiter& limiter, LimitOp op, Time now, std::uint32_t cost, std::uint64_t member) {
  switch (op) {
    case LimitOp::take: return of(limiter.take(now, cost, member));
    case LimitOp::peek: return of(limiter.peek(now, cost));
    case LimitOp::force: {
      const LimitDecision d = limiter.peek(now, cost);
      limiter.force(now, cost, member);
      return of(d);
    }
  }
  return {};
}

// Loads the limiter's script into Redis: its SHA-1, or empty when Redis would not take it.
std::string load_script(redisContext* redis) {
  const std::string_view script = live::kLimiterScript;
  Reply r(redisCommand(redis, "SCRIPT LOAD %b", script.data(), script.size()));
  return r.reply && r.reply->type == REDIS_REPLY_STRING ? std::string(r.reply->str, r.reply->len) : std::string();
}

// The script's side: one EVALSHA on the key's three Redis keys, at `now`.
Answer eval(redisContext* redis, const std::string& sha, const std::string& key, const LimiterSpec& spec, LimitOp op,
            std::uint32_t cost, std::uint64_t member, Time now) {
  Reply r(redisCommand(redis, "EVALSHA %s 3 {%s} {%s}:log {%s}:members %s %s %u %lld %u %u %llu %lld", sha.c_str(),
                       key.c_str(), key.c_str(), key.c_str(), std::string(to_string(op)).c_str(),
                       std::string(to_string(spec.algorithm)).c_str(), spec.limit, static_cast<long long>(to_ns(spec.window)),
                       spec.burst, cost, static_cast<unsigned long long>(member), static_cast<long long>(to_ns(now))));
  EXPECT_TRUE(r.reply) << redis->errstr;
  if (!r.reply) return {};
  EXPECT_EQ(r.reply->type, REDIS_REPLY_ARRAY) << (r.reply->type == REDIS_REPLY_ERROR ? r.reply->str : "not an array");
  if (r.reply->type != REDIS_REPLY_ARRAY || r.reply->elements != 2) return {};
  return {r.reply->element[0]->integer == 1, std::string(r.reply->element[1]->str, r.reply->element[1]->len)};
}

struct Keyed {
  std::string key;
  LimiterSpec spec;
  std::unique_ptr<Limiter> limiter;
  Time now;
};

TEST(RedisLimiter, MakesTheSimulatorsDecisionsCallForCallAcrossARestart) {
  RedisServer redis;
  std::string problem;
  ASSERT_TRUE(redis.start(problem)) << problem;
  std::string sha = load_script(redis.context());
  ASSERT_FALSE(sha.empty()) << "Redis refused the script";

  using std::chrono::hours;
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  // Limits from one a day to a million a day; bursts up to the bound, where one costly call can
  // ask for a wait longer than a Duration holds ("max" on both sides).
  const std::vector<std::pair<std::uint32_t, Duration>> shapes = {
      {1, seconds(1)}, {3, seconds(1)}, {5, milliseconds(1)}, {7, milliseconds(250)}, {1, hours(24)}, {1'000'000, hours(24)}};
  std::vector<Keyed> keys;
  for (const LimiterAlgorithm a : {LimiterAlgorithm::sliding_log, LimiterAlgorithm::sliding_counter,
                                   LimiterAlgorithm::token_bucket, LimiterAlgorithm::gcra}) {
    for (const auto& [limit, window] : shapes) {
      for (const std::uint32_t burst : {0U, 2U, limit + 5, 1'000'000U}) {
        LimiterSpec spec{a, limit, window, burst};
        if (!valid(spec)) continue;
        // Half the keys live in 2026, half near the end of what a signed 64-bit count of
        // nanoseconds holds (2262), where every product needs its 128 bits.
        const Time start = time_from_ns(keys.size() % 2 == 0 ? 1'795'000'000'000'000'000 : 9'150'000'000'000'000'000);
        keys.push_back({"limit:" + std::string(to_string(a)) + ":" + std::to_string(keys.size()), spec,
                        std::make_unique<Limiter>(spec), start});
      }
    }
  }

  Rng rng(20261205);
  std::size_t calls = 0, admitted = 0, refused = 0, never = 0;
  constexpr int kRounds = 120;
  for (int round = 0; round < kRounds; ++round) {
    if (round == kRounds / 2) {
      // A restart: Redis comes back empty, and so does every limiter of the model.
      redis.kill();
      ASSERT_TRUE(redis.start(problem)) << problem;
      sha = load_script(redis.context());
      ASSERT_FALSE(sha.empty()) << "Redis refused the script after its restart";
      for (Keyed& k : keys) k.limiter = std::make_unique<Limiter>(k.spec);
    }
    for (Keyed& k : keys) {
      const std::int64_t w = to_ns(k.spec.window);
      // The next call's time: at once, a nanosecond on, exactly a window on or a nanosecond either
      // side of it, or anywhere within two windows.
      const std::int64_t steps[] = {0, 1, w, w - 1, w + 1, static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(2 * w)))};
      k.now += Duration{steps[rng.below(std::size(steps))]};
      // Now and then the key is met with another spec: both sides start it afresh.
      if (rng.chance(0.02)) {
        k.spec.burst = k.spec.burst == 0 ? k.spec.limit : 0;
        k.limiter = std::make_unique<Limiter>(k.spec);
      }
      const std::uint32_t max_cost = k.spec.max_cost();
      const std::uint32_t cost = rng.chance(0.05)   ? max_cost + 1
                                 : rng.chance(0.05) ? max_cost
                                                    : 1 + static_cast<std::uint32_t>(rng.below(std::min<std::uint32_t>(max_cost, 4)));
      const LimitOp op = rng.chance(0.7) ? LimitOp::take : rng.chance(0.5) ? LimitOp::peek : LimitOp::force;
      const std::uint64_t member = rng.chance(0.5) ? 0 : 1 + rng.below(6);

      const Answer model = apply(*k.limiter, op, k.now, cost, member);
      Answer lua;
      ASSERT_NO_FATAL_FAILURE(lua = eval(redis.context(), sha, k.key, k.spec, op, cost, member, k.now));
      ASSERT_EQ(lua, model) << "call " << calls << ": " << to_string(op) << " of cost " << cost << " (member " << member
                            << ") at " << to_ns(k.now) << " ns on " << k.key << " (" << to_string(k.spec.algorithm)
                            << ", limit " << k.spec.limit << " per " << w << " ns, burst " << k.spec.burst << ")";
      ++calls;
      (model.admitted ? admitted : refused) += 1;
      if (model.retry_after == "max") ++never;
    }
  }
  // The trace must have asked both questions of every kind, or agreeing proves little.
  EXPECT_GT(admitted, calls / 10);
  EXPECT_GT(refused, calls / 10);
  EXPECT_GT(never, 0u);
  std::cout << "limiter twin: " << calls << " calls on " << keys.size() << " keys, " << admitted << " admitted, "
            << refused << " refused (" << never << " never admissible), one Redis restart: every answer the same\n";
}

// A sliding log longer than the script's pages (128 entries): 300 admissions in one window,
// refusals that look past two pages for their wait, then expiry a page and a part at a time.
TEST(RedisLimiter, ALongLogIsReadAndTrimmedAPageAtATime) {
  RedisServer redis;
  std::string problem;
  ASSERT_TRUE(redis.start(problem)) << problem;
  const std::string sha = load_script(redis.context());
  ASSERT_FALSE(sha.empty()) << "Redis refused the script";
  const LimiterSpec spec{LimiterAlgorithm::sliding_log, 300, std::chrono::seconds(1), 0};
  Limiter model(spec);
  Time now = time_from_ns(1'795'000'000'000'000'000);
  std::size_t refused = 0;
  const auto both = [&](LimitOp op, std::uint32_t cost, std::uint64_t member) {
    const Answer expected = apply(model, op, now, cost, member);
    EXPECT_EQ(eval(redis.context(), sha, "long", spec, op, cost, member, now), expected) << to_ns(now);
    refused += expected.admitted ? 0 : 1;
  };
  for (std::uint64_t i = 0; i < 300; ++i, now += std::chrono::milliseconds(1)) both(LimitOp::take, 1, i % 2 == 0 ? 0 : 1 + i);
  for (const std::uint32_t cost : {1U, 150U, 290U, 300U}) both(LimitOp::take, cost, 0);  // waits from page 1 to page 3
  now += std::chrono::milliseconds(850);  // about 150 entries have left: pages 1 and a part of 2
  for (const std::uint32_t cost : {100U, 200U, 1U}) both(LimitOp::take, cost, 0);
  now += std::chrono::seconds(2);  // all have left
  both(LimitOp::take, 300, 0);
  EXPECT_GE(refused, 4u);
}

// A wait longer than a Duration holds (about 292 years) is "never" on both sides: one a day with
// a burst of a million, emptied by one call, then asked for a million more.
TEST(RedisLimiter, AWaitPastWhatADurationHoldsIsNeverOnBothSides) {
  RedisServer redis;
  std::string problem;
  ASSERT_TRUE(redis.start(problem)) << problem;
  const std::string sha = load_script(redis.context());
  ASSERT_FALSE(sha.empty()) << "Redis refused the script";
  for (const LimiterAlgorithm a : {LimiterAlgorithm::token_bucket, LimiterAlgorithm::gcra}) {
    const LimiterSpec spec{a, 1, std::chrono::hours(24), 1'000'000};
    Limiter model(spec);
    Time now = time_from_ns(1'795'000'000'000'000'000);
    for (int i = 0; i < 2; ++i, now += Duration{1}) {
      const Answer expected = apply(model, LimitOp::take, now, 1'000'000, 0);
      EXPECT_EQ(eval(redis.context(), sha, std::string("never:") + std::string(to_string(a)), spec, LimitOp::take, 1'000'000, 0, now),
                expected);
      EXPECT_EQ(expected, (i == 0 ? Answer{true, "0"} : Answer{false, "max"})) << to_string(a);
    }
  }
}

// A call by the server's own clock (no time given) is answered, and its retry-after is a number.
TEST(RedisLimiter, ReadsTheServersClockWhenNoTimeIsGiven) {
  RedisServer redis;
  std::string problem;
  ASSERT_TRUE(redis.start(problem)) << problem;
  const std::string script(live::kLimiterScript);
  // One a day: the second call is refused however slowly the machine runs.
  for (const char* expected_admitted : {"1", "0"}) {
    Reply r(redisCommand(redis.context(), "EVAL %b 3 k k:log k:members take gcra 1 86400000000000 0 1 0 %s", script.data(),
                         script.size(), ""));
    ASSERT_TRUE(r.reply && r.reply->type == REDIS_REPLY_ARRAY) << (r.reply && r.reply->str ? r.reply->str : "no reply");
    EXPECT_EQ(std::to_string(r.reply->element[0]->integer), expected_admitted);
    const std::string retry(r.reply->element[1]->str, r.reply->element[1]->len);
    EXPECT_FALSE(retry.empty());
    EXPECT_EQ(retry.find_first_not_of("0123456789"), std::string::npos) << retry;
  }
}

}  // namespace
}  // namespace relaysim
