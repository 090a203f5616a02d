// An etcd of a test's own, for the tests that need a real one: a one-member cluster in a temporary
// directory, its client and peer ports on loopback, killed and removed when the test ends (and
// with it, if it dies first). Its clients talk to it through the v3 JSON gateway on the client
// port.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "tests/live/child_process.h"

namespace relaysim::testing_etcd {

class EtcdServer {
 public:
  EtcdServer() : dir_(testing_servers::private_dir("relaysim-etcd")) {}
  ~EtcdServer() {
    kill();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  // Starts the server, on the same ports and data each time; false, with the reason in `problem`,
  // if it will not come up.
  bool start(std::string& problem) {
    if (client_ == 0) {
      client_ = testing_servers::free_port();
      peer_ = testing_servers::free_port();
    }
    const std::string client = "http://127.0.0.1:" + std::to_string(client_);
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_);
    pid_ = testing_servers::spawn({"etcd", "--name", "test", "--data-dir", dir_ + "/data", "--listen-client-urls", client,
                                   "--advertise-client-urls", client, "--listen-peer-urls", peer,
                                   "--initial-advertise-peer-urls", peer, "--initial-cluster", "test=" + peer},
                                  dir_ + "/etcd.log");
    // Wait for it to answer: a bound on how long a broken server may keep the test, not a timing
    // check.
    for (int tries = 0; tries < 1000; ++tries) {
      if (answers()) return true;
      if (testing_servers::ended(pid_)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    problem = "etcd did not answer on " + client + " (" + dir_ + "/etcd.log; ./relaysim installs etcd-server)";
    return false;
  }
  // SIGKILL: its data stays for the next start.
  void kill() { testing_servers::end(pid_, SIGKILL); }
  // Stops and resumes the server without its knowing (SIGSTOP, SIGCONT): calls meanwhile wait.
  void pause() {
    if (pid_ != 0) ::kill(pid_, SIGSTOP);
  }
  void resume() {
    if (pid_ != 0) ::kill(pid_, SIGCONT);
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(client_); }

 private:
  // Whether the gateway answers a status request with 200 (blocking, a second at most).
  bool answers() const {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return false;
    timeval limit{1, 0};
    ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(client_));
    bool ok = false;
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      const std::string request =
          "POST /v3/maintenance/status HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
      char head[16] = {};
      ok = ::write(s, request.data(), request.size()) == static_cast<ssize_t>(request.size()) &&
           ::read(s, head, sizeof head - 1) >= 12 && std::string(head).starts_with("HTTP/1.1 200");
    }
    ::close(s);
    return ok;
  }

  std::string dir_;
  int client_ = 0;
  int peer_ = 0;
  pid_t pid_ = 0;
};

}  // namespace relaysim::testing_etcd
