// A redis-server of a test's own, for the tests that need a real Redis: started in a temporary
// directory with no TCP port at all (a Unix socket there) and, unless asked to be durable, no
// persistence, so a kill loses everything it held, as a restart that comes back empty does;
// killed when the test ends (and with it, if it dies first).
#pragma once

#include <hiredis/hiredis.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "model/core/assert.h"
#include "tests/live/child_process.h"


namespace relaysim::testing_redis {

// A redis-server of the test's own: start() and kill() as often as asked, the same socket each time.
class RedisServer {
 public:
  // `durable`: an append-only file synced at every write, kept across kills (the outbox relay's
  // log runs so); else nothing is kept.
  explicit RedisServer(bool durable = false)
      : dir_(testing_servers::private_dir("relaysim-redis")), socket_(dir_ + "/redis.sock"), durable_(durable) {}
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
                                     "--dir", dir_, "--save", "", "--appendonly", durable_ ? "yes" : "no", "--appendfsync",
                                     "always", "--logfile", dir_ + "/redis.log"};
    pid_ = testing_servers::spawn(std::move(args));
    if (pid_ < 0) {
      problem = std::string("cannot fork: ") + std::strerror(errno);
      pid_ = 0;
      return false;
    }
    // Wait for its socket: a bound on how long a broken server may keep the test, not a timing check.
    for (int tries = 0; tries < 1000; ++tries) {
      context_.reset(redisConnectUnix(socket_.c_str()));
      if (context_ && context_->err == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    problem = "redis-server did not open " + socket_ + " (is it installed? ./relaysim installs it)";
    return false;
  }
  // SIGKILL: whatever it held is gone.
  void kill() {
    context_.reset();
    if (pid_ == 0) return;
    testing_servers::end(pid_, SIGKILL);
    std::error_code ignored;
    std::filesystem::remove(socket_, ignored);
  }
  redisContext* context() { return context_.get(); }
  const std::string& socket() const { return socket_; }
  // Stops and resumes the server without its knowing (SIGSTOP, SIGCONT): calls meanwhile wait.
  void pause() {
    if (pid_ != 0) ::kill(pid_, SIGSTOP);
  }
  void resume() {
    if (pid_ != 0) ::kill(pid_, SIGCONT);
  }

 private:
  struct Free {
    void operator()(redisContext* c) const { redisFree(c); }
  };
  std::string dir_, socket_;
  bool durable_ = false;
  pid_t pid_ = 0;
  std::unique_ptr<redisContext, Free> context_;
};

}  // namespace relaysim::testing_redis
