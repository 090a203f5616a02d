// A PostgreSQL server of a test's own, for the tests that need a real one: a private cluster made
// with initdb in a temporary directory (as the `postgres` user when the test runs as root, since
// PostgreSQL refuses to run as root), listening on a loopback port and on a Unix socket in that
// directory, with fsync off (a test's cluster need not survive a power cut, but a commit is in the
// operating system's hands before it is answered, so it survives the server's crash); stopped and
// removed when the test ends. The server dies with the test (PR_SET_PDEATHSIG).
#pragma once

#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
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
#include "tests/live/child_process.h"

namespace relaysim::testing_pg {

class PgServer {
 public:
  PgServer() : dir_(testing_servers::private_dir("relaysim-pg")) {}
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
      if (::chown(dir_.c_str(), pg->pw_uid, pg->pw_gid) != 0) {
        problem = "cannot give " + dir_ + " to the postgres user: " + std::strerror(errno);
        return false;
      }
    }
    if (!std::filesystem::exists(dir_ + "/data/PG_VERSION")) {
      const int status = testing_servers::run({bin + "/initdb", "-D", dir_ + "/data", "-A", "trust", "-U", "postgres", "-E", "UTF8",
                                                "--no-instructions", "--no-sync"},
                                               dir_ + "/initdb.log", pg);
      if (status != 0) {
        problem = "initdb failed (" + dir_ + "/initdb.log)";
        return false;
      }
    }
    if (port_ == 0) port_ = testing_servers::free_port();  // a restart listens where clients already look
    pid_ = testing_servers::spawn({bin + "/postgres", "-D", dir_ + "/data", "-k", dir_, "-h", "127.0.0.1", "-p",
                                   std::to_string(port_), "-c", "fsync=off", "-c", "full_page_writes=off"},
                                  dir_ + "/postgres.log", pg);
    // Wait for it to take connections: a bound on how long a broken server may keep the test,
    // not a timing check.
    for (int tries = 0; tries < 3000; ++tries) {
      PGconn* c = PQconnectdb(conninfo("postgres").c_str());
      const bool up = PQstatus(c) == CONNECTION_OK;
      PQfinish(c);
      if (up) return true;
      if (testing_servers::ended(pid_)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    problem = "PostgreSQL did not take connections (" + dir_ + "/postgres.log)";
    return false;
  }

  // An immediate stop (SIGQUIT), as a crash would: what was not committed is gone.
  void stop() { testing_servers::end(pid_, SIGQUIT); }

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

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = 0;
};

}  // namespace relaysim::testing_pg
