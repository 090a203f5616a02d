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
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "model/core/random.h"
#include "model/resilience/kv.h"
#include "model/resilience/limiters.h"

extern char** environ;

namespace relaysim {
namespace {

// A redis-server of the test's own: start() and kill() as often as asked, the same socket each time.
class RedisServer {
 public:
  RedisServer() {
    std::string dir_template = (std::filesystem::temp_directory_path() / "relaysim-redis-XXXXXX").string();
    RELAYSIM_ASSERT(::mkdtemp(dir_template.data()) != nullptr, "a temporary directory");
    dir_ = dir_template;
    socket_ = dir_ + "/redis.sock";
  }
  ~RedisServer() {
    kill();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // Starts the server and connects to it; false (with the reason in `problem`) if it will not come up.
  bool start(std::string& problem) {
    std::vector<std::string> args = {"redis-server", "--port", "0", "--unixsocket", socket_, "--unixsocketperm", "700",
                                     "--dir", dir_, "--save", "", "--appendonly", "no", "--logfile", dir_ + "/redis.log"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (const int rc = ::posix_spawnp(&pid_, "redis-server", nullptr, nullptr, argv.data(), environ); rc != 0) {
      problem = "cannot run redis-server (" + std::string(std::strerror(rc)) + "); ./relaysim installs it";
      pid_ = 0;
      return false;
    }
    // Wait for its socket: a bound on how long a broken server may keep the test, not a timing check.
    for (int tries = 0; tries < 1000; ++tries) {
      context_.reset(redisConnectUnix(socket_.c_str()));
      if (context_ && context_->err == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    problem = "redis-server did not open " + socket_;
    return false;
  }
  // SIGKILL: whatever it held is gone.
  void kill() {
    context_.reset();
    if (pid_ == 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
    std::error_code ignored;
    std::filesystem::remove(socket_, ignored);
  }
  redisContext* context() { return context_.get(); }

 private:
  struct Free {
    void operator()(redisContext* c) const { redisFree(c); }
  };
  std::string dir_, socket_;
  pid_t pid_ = 0;
  std::unique_ptr<redisContext, Free> context_;
};

struct Reply {
  struct Free {
    void operator()(redisReply* r) const { freeReplyObject(r); }
  };
  std::unique_ptr<redisReply, Free> reply;
  explicit Reply(void* r) : reply(static_cast<redisReply*>(r)) {}
};

std::string read_script() {
  std::ifstream in(std::string(RELAYSIM_SOURCE_DIR) + "/model/resilience/limiter.lua");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

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
  const std::string script = read_script();
  ASSERT_FALSE(script.empty());
  std::string sha;
  const auto load = [&] {
    Reply r(redisCommand(redis.context(), "SCRIPT LOAD %b", script.data(), script.size()));
    ASSERT_TRUE(r.reply && r.reply->type == REDIS_REPLY_STRING) << (r.reply ? r.reply->str : redis.context()->errstr);
    sha = r.reply->str;
  };
  load();

  using std::chrono::hours;
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  const std::vector<std::pair<std::uint32_t, Duration>> shapes = {
      {1, seconds(1)}, {3, seconds(1)}, {5, milliseconds(1)}, {7, milliseconds(250)}, {1'000'000, hours(24)}};
  std::vector<Keyed> keys;
  for (const LimiterAlgorithm a : {LimiterAlgorithm::sliding_log, LimiterAlgorithm::sliding_counter,
                                   LimiterAlgorithm::token_bucket, LimiterAlgorithm::gcra}) {
    for (const auto& [limit, window] : shapes) {
      for (const std::uint32_t burst : {0U, 2U, limit + 5}) {
        LimiterSpec spec{a, limit, window, burst};
        if (!valid(spec)) continue;
        keys.push_back({"limit:" + std::string(to_string(a)) + ":" + std::to_string(keys.size()), spec,
                        std::make_unique<Limiter>(spec), time_from_ns(1'795'000'000'000'000'000)});
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
      load();
      for (Keyed& k : keys) k.limiter = std::make_unique<Limiter>(k.spec);
    }
    for (Keyed& k : keys) {
      const std::int64_t w = to_ns(k.spec.window);
      // The next call's time: at once, a nanosecond on, exactly a window on or a nanosecond either
      // side of it, or anywhere within two windows.
      const std::int64_t steps[] = {0, 1, w, w - 1, w + 1, static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(2 * w)))};
      k.now += Duration{steps[rng.below(std::size(steps))]};
      const std::uint32_t max_cost = k.spec.max_cost();
      const std::uint32_t cost = rng.chance(0.05) ? max_cost + 1 : 1 + static_cast<std::uint32_t>(rng.below(std::min<std::uint32_t>(max_cost, 4)));
      const LimitOp op = rng.chance(0.7) ? LimitOp::take : rng.chance(0.5) ? LimitOp::peek : LimitOp::force;
      const std::uint64_t member = rng.chance(0.5) ? 0 : 1 + rng.below(6);

      const Answer model = apply(*k.limiter, op, k.now, cost, member);
      const std::string key = k.key;
      Reply r(redisCommand(redis.context(), "EVALSHA %s 3 %s %s:log %s:members %s %s %u %lld %u %u %llu %lld", sha.c_str(),
                           key.c_str(), key.c_str(), key.c_str(), std::string(to_string(op)).c_str(),
                           std::string(to_string(k.spec.algorithm)).c_str(), k.spec.limit,
                           static_cast<long long>(w), k.spec.burst, cost, static_cast<unsigned long long>(member),
                           static_cast<long long>(to_ns(k.now))));
      ASSERT_TRUE(r.reply) << redis.context()->errstr;
      ASSERT_EQ(r.reply->type, REDIS_REPLY_ARRAY) << (r.reply->type == REDIS_REPLY_ERROR ? r.reply->str : "not an array");
      ASSERT_EQ(r.reply->elements, 2u);
      const Answer lua{r.reply->element[0]->integer == 1, std::string(r.reply->element[1]->str, r.reply->element[1]->len)};
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

// A call by the server's own clock (no time given) is answered, and its retry-after is a number.
TEST(RedisLimiter, ReadsTheServersClockWhenNoTimeIsGiven) {
  RedisServer redis;
  std::string problem;
  ASSERT_TRUE(redis.start(problem)) << problem;
  const std::string script = read_script();
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
