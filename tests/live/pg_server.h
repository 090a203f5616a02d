// A PostgreSQL server of a test's own, for the tests that need a real one: a private cluster made
// with initdb in a temporary directory (as the `postgres` user when the test runs as root, since
// PostgreSQL refuses to run as root), listening on a loopback port and on a Unix socket in that
// directory, with fsync off (a test's cluster need not survive a power cut, but a commit is in the
// operating system's hands before it is answered, so it survives the server's crash); stopped and
// removed when the test ends. The server dies with the test (PR_SET_PDEATHSIG).
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "model/core/assert.h"

namespace relaysim::testing_pg {

class PgServer {
 public:
  PgServer() {
    std::string dir_template = (std::filesystem::temp_directory_path() / "relaysim-pg-XXXXXX").string();
    RELAYSIM_ASSERT(::mkdtemp(dir_template.data()) != nullptr, "a temporary directory");
    dir_ = dir_template;
  }
  ~PgServer() {
    stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // Makes the cluster (once) and starts the server, on the same port each time; false, with the
  // reason in `problem`, if it will not come up.
  bool start(std::string& problem) {
    const std::string bin = bindir();
    if (bin.empty()) {
      problem = "no PostgreSQL server under /usr/lib/postgresql (./relaysim installs it)";
      return false;
    }
    const bool root = ::geteuid() == 0;
    const passwd* pg = root ? ::getpwnam("postgres") : nullptr;
    if (root && pg == nullptr) {
      problem = "running as root, and there is no postgres user to run PostgreSQL as";
      return false;
    }
    if (root) {
      std::error_code ignored;
      if (::chown(dir_.c_str(), pg->pw_uid, pg->pw_gid) != 0) {
        problem = "cannot give " + dir_ + " to the postgres user: " + std::strerror(errno);
        return false;
      }
    }
    if (!std::filesystem::exists(dir_ + "/data/PG_VERSION")) {
      const int status = run_as(pg, {bin + "/initdb", "-D", dir_ + "/data", "-A", "trust", "-U", "postgres", "-E", "UTF8",
                                     "--no-instructions", "--no-sync"},
                                dir_ + "/initdb.log", false);
      if (status != 0) {
        problem = "initdb failed (" + dir_ + "/initdb.log)";
        return false;
      }
    }
    if (port_ == 0) port_ = free_port();  // a restart listens where clients already look
    pid_ = static_cast<pid_t>(run_as(pg, {bin + "/postgres", "-D", dir_ + "/data", "-k", dir_, "-h", "127.0.0.1", "-p",
                                          std::to_string(port_), "-c", "fsync=off", "-c", "full_page_writes=off"},
                                     dir_ + "/postgres.log", true));
    // Wait for it to take connections: a bound on how long a broken server may keep the test,
    // not a timing check.
    for (int tries = 0; tries < 3000; ++tries) {
      PGconn* c = PQconnectdb(conninfo("postgres").c_str());
      const bool up = PQstatus(c) == CONNECTION_OK;
      PQfinish(c);
      if (up) return true;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    problem = "PostgreSQL did not take connections (" + dir_ + "/postgres.log)";
    return false;
  }

  // An immediate stop (SIGQUIT), as a crash would: what was not committed is gone.
  void stop() {
    if (pid_ == 0) return;
    ::kill(pid_, SIGQUIT);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
  }

  // A libpq connection string to database `dbname` over TCP on loopback.
  std::string conninfo(const std::string& dbname) const {
    return "host=127.0.0.1 port=" + std::to_string(port_) + " user=postgres dbname=" + dbname + " connect_timeout=10";
  }
  int port() const { return port_; }

 private:
  // The newest server's bin directory (Debian's /usr/lib/postgresql/VERSION/bin); empty if none.
  static std::string bindir() {
    std::vector<std::filesystem::path> found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      if (std::filesystem::exists(e.path() / "bin" / "postgres")) found.push_back(e.path() / "bin");
    }
    if (found.empty()) return {};
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
      return std::stoi(a.parent_path().filename().string()) < std::stoi(b.parent_path().filename().string());
    });
    return found.back().string();
  }

  static int free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    RELAYSIM_ASSERT(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                        ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0,
                    "a free loopback port");
    ::close(s);
    return ntohs(a.sin_port);
  }

  // Runs `args` as `user` (nullptr: as this process), its output to `log`. `background`: returns
  // the child's pid at once; else waits and returns its exit status.
  static int run_as(const passwd* user, std::vector<std::string> args, const std::string& log, bool background) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    RELAYSIM_ASSERT(pid >= 0, "fork");
    if (pid == 0) {
      if (user != nullptr && (::setgid(user->pw_gid) != 0 || ::initgroups(user->pw_name, user->pw_gid) != 0 ||
                              ::setuid(user->pw_uid) != 0)) {
        ::_exit(126);
      }
      // After the change of user, which clears it.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    if (background) return pid;
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = 0;
};

}  // namespace relaysim::testing_pg
