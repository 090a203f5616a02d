#include "sim/database.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "model/core/assert.h"
#include "model/store/sqlite_db.h"

namespace relaysim::sim {

namespace {
constexpr const char* kTable = "relaysim_run";

// What an earlier run left in its label, as one line.
std::string describe_run(const std::string& path) {
  try {
    Db db(path, Durability::normal);
    Db::Statement q(db, "SELECT key, value FROM relaysim_run ORDER BY key");
    std::string scenario, seed, finished;
    while (q.step()) {
      const std::string_view key = q.text_view(0);
      if (key == "scenario") scenario = q.text_view(1);
      if (key == "seed") seed = q.text_view(1);
      if (key == "finished") finished = q.text_view(1);
    }
    q.reset();
    return "scenario '" + scenario + "', seed " + seed + (finished == "yes" ? ", finished" : ", did not finish");
  } catch (const StoreError&) {
    return "an earlier run";
  }
}

void put(Db& db, const std::string& key, const std::string& value) {
  Db::Statement q(db, "INSERT INTO relaysim_run (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2");
  q.bind(1, key).bind(2, value);
  q.run();
}
}  // namespace

DatabaseLock::~DatabaseLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the file lets go of its lock
}

DatabaseLock& DatabaseLock::operator=(DatabaseLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

namespace {

// Opens `path` (making it when `create`) and takes its lock; -1 when another process holds it or
// it cannot be opened (`busy` says which).
int lock_file(const std::string& path, bool create, bool& busy) {
  busy = false;
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    busy = errno == EWOULDBLOCK;
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::optional<std::string> prepare_database(const std::string& path, bool overwrite, DatabaseLock& lock) {
  if (path == ":memory:") return std::nullopt;
  const auto in_use = [&path] { return "'" + path + "' is in use by another relaysim run; choose another path, or wait for it to end"; };
  const DbInspection d = inspect_database(path);
  if (d.exists) {
    if (d.is_directory) return "'" + path + "' is a directory; give the path of a database file";
    if (!d.is_sqlite) return "'" + path + "' is not an SQLite database (" + d.error + "); relaysim will not touch it";
    if (!d.tables.empty()) {
      bool ours = false;
      std::string names;
      for (const auto& t : d.tables) {
        ours = ours || t == kTable;
        names += (names.empty() ? "" : ", ") + t;
      }
      if (!ours) {
        return "'" + path + "' is not a relaysim database (it holds the tables " + names +
               "); relaysim will not touch it: choose another path";
      }
      if (!overwrite) {
        return "'" + path + "' holds an earlier run (" + describe_run(path) +
               "); pass --overwrite to replace it, or choose another path";
      }
      // Removed only while held: a run still writing it holds its lock.
      bool busy = false;
      const int held = lock_file(path, false, busy);
      if (held < 0) return busy ? in_use() : "cannot open '" + path + "': " + std::strerror(errno);
      std::error_code ec;
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path + suffix, ec);
      ::close(held);
      if (ec) return "cannot remove '" + path + "': " + ec.message();
    }
  }
  bool busy = false;
  const int fd = lock_file(path, true, busy);
  if (fd < 0) return busy ? in_use() : "cannot write '" + path + "': " + std::strerror(errno);
  lock.fd_ = fd;
  // Another run may have made and filled it between the look above and the lock.
  if (!inspect_database(path).tables.empty()) {
    lock = DatabaseLock();
    return "'" + path + "' was just written by another run; choose another path";
  }
  return std::nullopt;
}

void record_run_start(const std::string& path, const Scenario& s) {
  if (path == ":memory:") return;
  RELAYSIM_ASSERT(s.system != nullptr, "a run's scenario names its system");
  Db db(path, Durability::normal);
  db.exec("CREATE TABLE IF NOT EXISTS relaysim_run (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID");
  Db::Transaction tx(db);
  put(db, "scenario", s.name);
  put(db, "file", s.file);
  put(db, "system", std::string(s.system->name()));
  put(db, "seed", std::to_string(s.seed));
  put(db, "version", RELAYSIM_VERSION);
  put(db, "finished", "no");
  tx.commit();
}

void record_run_end(const std::string& path, const RunResult& r) {
  if (path == ":memory:") return;
  Db db(path, Durability::normal);
  Db::Transaction tx(db);
  std::ostringstream fp;
  fp << std::hex << r.fingerprint;
  put(db, "finished", r.judged() ? "yes" : "no");
  put(db, "ending", std::string(to_string(r.ending)));
  put(db, "verdict", r.pass() ? "pass" : "fail");
  put(db, "fingerprint", fp.str());
  put(db, "virtual_seconds", std::to_string(to_seconds(r.end)));
  tx.commit();
}

}  // namespace relaysim::sim
