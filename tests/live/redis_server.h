// A redis-server of a test's own, for the tests that need a real Redis: started in a temporary
// directory with no TCP port at all (a Unix socket there) and no persistence, so a kill loses
// everything it held, as a restart that comes back empty does; killed when the test ends.
#pragma once

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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


namespace relaysim::testing_redis {

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
    // The child dies with the test (PR_SET_PDEATHSIG): a test killed by its timeout or an
    // assertion leaves no server behind.
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) {
      problem = std::string("cannot fork: ") + std::strerror(errno);
      pid_ = 0;
      return false;
    }
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the test is gone already
      ::execvp("redis-server", argv.data());
      ::_exit(127);  // no redis-server: the connection below never comes, and says so
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
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
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
  pid_t pid_ = 0;
  std::unique_ptr<redisContext, Free> context_;
};

}  // namespace relaysim::testing_redis
