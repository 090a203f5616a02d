// What the tests that start a real server (Redis, PostgreSQL, etcd) share: a private temporary
// directory, a free loopback port, and a child process that dies with the test.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model/core/assert.h"

namespace relaysim::testing_servers {

// A new directory under the system's temporary one: "<tmp>/<stem>-XXXXXX".
inline std::string private_dir(const std::string& stem) {
  std::string dir = (std::filesystem::temp_directory_path() / (stem + "-XXXXXX")).string();
  RELAYSIM_ASSERT(::mkdtemp(dir.data()) != nullptr, "a temporary directory");
  return dir;
}

// A loopback TCP port nothing listens on now.
inline int free_port() {
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

// Starts `args` (the program found on PATH) as `user` (nullptr: as this process), its output
// appended to `log` (empty: left as it is), and returns its pid; -1 if it could not fork. The
// child dies with the test (PR_SET_PDEATHSIG): a test killed by its timeout or an assertion
// leaves no server behind. A program that cannot be run exits 127.
inline pid_t spawn(std::vector<std::string> args, const std::string& log = {}, const passwd* user = nullptr) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (user != nullptr && (::setgid(user->pw_gid) != 0 || ::initgroups(user->pw_name, user->pw_gid) != 0 ||
                          ::setuid(user->pw_uid) != 0)) {
    ::_exit(126);
  }
  // After the change of user, which clears it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the test is gone already
  if (!log.empty()) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
  }
  ::execvp(argv[0], argv.data());
  ::_exit(127);
}

// Runs `args` as spawn() does and waits: its exit status (128 when it did not exit).
inline int run(std::vector<std::string> args, const std::string& log = {}, const passwd* user = nullptr) {
  const pid_t pid = spawn(std::move(args), log, user);
  if (pid < 0) return 128;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// Signals `pid` (if any) and waits for it to end; `pid` is 0 after.
inline void end(pid_t& pid, int signal) {
  if (pid <= 0) return;
  ::kill(pid, signal);
  int status = 0;
  ::waitpid(pid, &status, 0);
  pid = 0;
}

// Whether `pid` (if any) has ended: it is reaped, and `pid` is 0 after.
inline bool ended(pid_t& pid) {
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, WNOHANG) != pid) return false;
  pid = 0;
  return true;
}

}  // namespace relaysim::testing_servers
