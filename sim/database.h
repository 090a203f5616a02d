// A run's database (`--sqlite-path`): checked before a run so nothing is overwritten by accident,
// and labelled with the run it holds.
//
// relaysim writes into an empty (or new) database file only. A database that holds an earlier
// run is refused unless the caller says to replace it; a database that is not relaysim's — any
// other tables — is never touched. Every run records what it is in a `relaysim_run` table:
// scenario, file, seed, version, when it was written, and whether the run finished (and with
// which verdict and fingerprint), so a database left by a killed run says so.
#pragma once

#include <optional>
#include <string>

#include "sim/run.h"

namespace relaysim::sim {

// A run's hold on its database file for as long as it lives (an advisory lock of the file, which
// SQLite's own locks do not see): a second run cannot --overwrite a database a run still writes.
class DatabaseLock {
 public:
  DatabaseLock() = default;
  ~DatabaseLock();
  DatabaseLock(DatabaseLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DatabaseLock& operator=(DatabaseLock&& other) noexcept;
  DatabaseLock(const DatabaseLock&) = delete;
  DatabaseLock& operator=(const DatabaseLock&) = delete;

 private:
  friend std::optional<std::string> prepare_database(const std::string& path, bool overwrite, DatabaseLock& lock);
  int fd_ = -1;
};

// Returns why `path` cannot take a new run, or nothing and `lock` holding the file (made if it
// was missing). With `overwrite`, a database that holds an earlier relaysim run, and that no
// running relaysim holds, is removed (with its -wal and -shm files) to make room.
std::optional<std::string> prepare_database(const std::string& path, bool overwrite, DatabaseLock& lock);
// Labels the database before the run: the scenario, and "finished: no".
void record_run_start(const std::string& path, const Scenario& s);
// After the run: whether it finished, its verdict, fingerprint and ending.
void record_run_end(const std::string& path, const RunResult& r);

}  // namespace relaysim::sim
