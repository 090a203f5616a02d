// Group commit keeps the durability promise through a power loss: a write whose commit was
// reported (Db::when_committed ran) is on the disk, at every moment the power could fail.
//
// A recording VFS sits between SQLite and the disk and notes every write, truncation and sync of
// the database and its WAL, in order. For every point in that sequence (a cut), two disks are
// built as a power loss there could leave them:
//   - in order: every write before the cut arrived, none after it (a WAL cut at each write);
//   - synced only: each file holds what its last sync before the cut made durable, and nothing
//     written since (the page cache is gone).
// Each is opened (SQLite recovers the WAL), must pass integrity_check, and must hold every row
// acknowledged before the cut. The same check run on synchronous=NORMAL, which skips the sync of
// each commit, must find a loss: the check can fail.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/store/sqlite_db.h"

namespace relaysim {
namespace {

namespace fs = std::filesystem;

enum class FileKind : int { db = 0, wal = 1 };

struct Op {
  enum class Kind : std::uint8_t { write, truncate, sync } kind;
  FileKind file;
  std::int64_t offset = 0;  // write: where; truncate: the new size
  std::string data;
};

// The recording VFS: the system's own, with every file's writes, truncations and syncs noted.
class Recorder {
 public:
  Recorder() {
    real_ = sqlite3_vfs_find(nullptr);
    vfs_ = *real_;
    vfs_.iVersion = 2;  // no system call overrides
    vfs_.szOsFile = static_cast<int>(sizeof(File)) + real_->szOsFile;
    vfs_.zName = "relaysim-recorder";
    vfs_.pAppData = this;
    vfs_.pNext = nullptr;
    vfs_.xOpen = &open;
    vfs_.xDelete = [](sqlite3_vfs* v, const char* name, int sync) { return self(v)->real_->xDelete(self(v)->real_, name, sync); };
    vfs_.xAccess = [](sqlite3_vfs* v, const char* name, int flags, int* out) {
      return self(v)->real_->xAccess(self(v)->real_, name, flags, out);
    };
    vfs_.xFullPathname = [](sqlite3_vfs* v, const char* name, int n, char* out) {
      return self(v)->real_->xFullPathname(self(v)->real_, name, n, out);
    };
    vfs_.xRandomness = [](sqlite3_vfs* v, int n, char* out) { return self(v)->real_->xRandomness(self(v)->real_, n, out); };
    vfs_.xSleep = [](sqlite3_vfs* v, int us) { return self(v)->real_->xSleep(self(v)->real_, us); };
    vfs_.xCurrentTime = [](sqlite3_vfs* v, double* out) { return self(v)->real_->xCurrentTime(self(v)->real_, out); };
    vfs_.xGetLastError = [](sqlite3_vfs* v, int n, char* out) { return self(v)->real_->xGetLastError(self(v)->real_, n, out); };
    vfs_.xCurrentTimeInt64 = [](sqlite3_vfs* v, sqlite3_int64* out) {
      return self(v)->real_->xCurrentTimeInt64(self(v)->real_, out);
    };
    vfs_.xDlOpen = nullptr;
    vfs_.xDlError = nullptr;
    vfs_.xDlSym = nullptr;
    vfs_.xDlClose = nullptr;
    // The default while recording: Db opens with the default VFS.
    EXPECT_EQ(sqlite3_vfs_register(&vfs_, 1), SQLITE_OK);
  }
  ~Recorder() { restore(); }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // The system's VFS is the default again (connections already open keep recording).
  void restore() {
    if (restored_) return;
    restored_ = true;
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(real_, 1);
  }
  void stop() { recording_ = false; }
  const std::vector<Op>& ops() const { return ops_; }

 private:
  struct File {
    sqlite3_file base;
    Recorder* recorder;
    int kind;  // a FileKind, or -1: not recorded
    sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
  };
  static Recorder* self(sqlite3_vfs* v) { return static_cast<Recorder*>(v->pAppData); }
  static File* file(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
  void note(const File* f, Op op) {
    if (recording_ && f->kind >= 0) ops_.push_back(std::move(op));
  }

  static int open(sqlite3_vfs* v, const char* name, sqlite3_file* out, int flags, int* out_flags) {
    Recorder* r = self(v);
    File* f = file(out);
    f->base.pMethods = nullptr;
    f->recorder = r;
    f->kind = (flags & SQLITE_OPEN_MAIN_DB) != 0 ? static_cast<int>(FileKind::db)
              : (flags & SQLITE_OPEN_WAL) != 0   ? static_cast<int>(FileKind::wal)
                                                 : -1;
    const int rc = r->real_->xOpen(r->real_, name, f->real(), flags, out_flags);
    if (rc == SQLITE_OK) f->base.pMethods = &kMethods;
    return rc;
  }

  static const sqlite3_io_methods kMethods;

  sqlite3_vfs* real_ = nullptr;
  sqlite3_vfs vfs_{};
  std::vector<Op> ops_;
  bool recording_ = true;
  bool restored_ = false;
};

#define REAL(f) file(f)->real()->pMethods
const sqlite3_io_methods Recorder::kMethods = {
    3,
    [](sqlite3_file* f) {
      const int rc = REAL(f)->xClose(file(f)->real());
      f->pMethods = nullptr;
      return rc;
    },
    [](sqlite3_file* f, void* out, int n, sqlite3_int64 at) { return REAL(f)->xRead(file(f)->real(), out, n, at); },
    [](sqlite3_file* f, const void* data, int n, sqlite3_int64 at) {
      file(f)->recorder->note(file(f), Op{Op::Kind::write, static_cast<FileKind>(file(f)->kind), at,
                                          std::string(static_cast<const char*>(data), static_cast<std::size_t>(n))});
      return REAL(f)->xWrite(file(f)->real(), data, n, at);
    },
    [](sqlite3_file* f, sqlite3_int64 size) {
      file(f)->recorder->note(file(f), Op{Op::Kind::truncate, static_cast<FileKind>(file(f)->kind), size, {}});
      return REAL(f)->xTruncate(file(f)->real(), size);
    },
    [](sqlite3_file* f, int flags) {
      const int rc = REAL(f)->xSync(file(f)->real(), flags);
      // Durable only once the sync has returned.
      file(f)->recorder->note(file(f), Op{Op::Kind::sync, static_cast<FileKind>(file(f)->kind), 0, {}});
      return rc;
    },
    [](sqlite3_file* f, sqlite3_int64* size) { return REAL(f)->xFileSize(file(f)->real(), size); },
    [](sqlite3_file* f, int lock) { return REAL(f)->xLock(file(f)->real(), lock); },
    [](sqlite3_file* f, int lock) { return REAL(f)->xUnlock(file(f)->real(), lock); },
    [](sqlite3_file* f, int* out) { return REAL(f)->xCheckReservedLock(file(f)->real(), out); },
    [](sqlite3_file* f, int op, void* arg) { return REAL(f)->xFileControl(file(f)->real(), op, arg); },
    [](sqlite3_file* f) { return REAL(f)->xSectorSize(file(f)->real()); },
    [](sqlite3_file* f) { return REAL(f)->xDeviceCharacteristics(file(f)->real()); },
    [](sqlite3_file* f, int page, int size, int extend, void volatile** out) {
      return REAL(f)->xShmMap(file(f)->real(), page, size, extend, out);
    },
    [](sqlite3_file* f, int offset, int n, int flags) { return REAL(f)->xShmLock(file(f)->real(), offset, n, flags); },
    [](sqlite3_file* f) { REAL(f)->xShmBarrier(file(f)->real()); },
    [](sqlite3_file* f, int remove) { return REAL(f)->xShmUnmap(file(f)->real(), remove); },
    [](sqlite3_file* f, sqlite3_int64 at, int n, void** out) { return REAL(f)->xFetch(file(f)->real(), at, n, out); },
    [](sqlite3_file* f, sqlite3_int64 at, void* p) { return REAL(f)->xUnfetch(file(f)->real(), at, p); },
};
#undef REAL

// A file's bytes after `ops` (those of `kind`, up to `end`), from nothing.
std::string replay(const std::vector<Op>& ops, std::size_t end, FileKind kind) {
  std::string bytes;
  for (std::size_t i = 0; i < end; ++i) {
    const Op& op = ops[i];
    if (op.file != kind) continue;
    if (op.kind == Op::Kind::truncate) bytes.resize(static_cast<std::size_t>(op.offset));
    if (op.kind != Op::Kind::write) continue;
    const auto at = static_cast<std::size_t>(op.offset);
    if (bytes.size() < at + op.data.size()) bytes.resize(at + op.data.size());
    std::memcpy(bytes.data() + at, op.data.data(), op.data.size());
  }
  return bytes;
}

// The end of what the last sync of `kind` before `cut` made durable (0: none yet).
std::size_t synced_until(const std::vector<Op>& ops, std::size_t cut, FileKind kind) {
  for (std::size_t i = cut; i > 0; --i) {
    if (ops[i - 1].kind == Op::Kind::sync && ops[i - 1].file == kind) return i;
  }
  return 0;
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Opens the disk `db` and `wal` make, as a restart after the power loss would; the ids it holds,
// or `problem` set.
std::vector<std::int64_t> recover(const fs::path& dir, const std::string& db, const std::string& wal, std::string& problem) {
  const fs::path path = dir / "cut.db";
  fs::remove(dir / "cut.db-shm");  // shared memory does not survive a power loss
  write_file(path, db);
  if (wal.empty()) {
    fs::remove(dir / "cut.db-wal");
  } else {
    write_file(dir / "cut.db-wal", wal);
  }
  std::vector<std::int64_t> ids;
  try {
    Db d(path.string(), Durability::normal);
    {
      Db::Statement check(d, "PRAGMA integrity_check");
      if (check.step() && check.text_view(0) != "ok") problem = "integrity_check: " + std::string(check.text_view(0));
      check.reset();
    }
    Db::Statement table(d, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'rows'");
    table.step();
    const bool created = table.i64(0) == 1;
    table.reset();
    if (!created) return ids;  // the power failed before the table's creation was on the disk
    Db::Statement rows(d, "SELECT id FROM rows ORDER BY id");
    while (rows.step()) ids.push_back(rows.i64(0));
    rows.reset();
  } catch (const StoreError& e) {
    problem = e.what();
  }
  return ids;
}

struct Recording {
  std::vector<Op> ops;
  std::map<std::int64_t, std::size_t> acked_at;  // row -> ops recorded when its commit was reported
};

// Groups of 1..5 inserts (one group with a transaction rolled back inside it), a checkpoint in
// the middle (so that later commits overwrite the WAL from its start), all recorded.
Recording record(const fs::path& dir, Durability durability) {
  Recording run;
  Recorder recorder;
  {
    Db db((dir / "test.db").string(), durability);
    db.exec("CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
    recorder.restore();
    int opened = 0;
    db.group_commits([&opened] { ++opened; });
    std::unique_ptr<Db::Statement> insert;
    constexpr int kGroups = 24;
    for (int g = 0; g < kGroups; ++g) {
      std::vector<std::int64_t> ids;
      for (int i = 0; i <= g % 5; ++i) {
        // Bodies of 0.3 to 3 KB: a group spans one page or several.
        const std::string body(static_cast<std::size_t>(300 + (g * 7 + i * 13) % 10 * 300), static_cast<char>('a' + g % 26));
        db.prepared(insert, "INSERT INTO rows (body) VALUES (?1)").bind(1, body).run();
        ids.push_back(db.last_insert_rowid());
        db.wrote();
      }
      if (g == 7) {
        Db::Transaction tx(db);  // a savepoint in the group, rolled back alone
        db.prepared(insert, "INSERT INTO rows (body) VALUES (?1)").bind(1, std::string_view("never")).run();
      }
      db.when_committed([&run, &recorder, ids](bool committed) {
        EXPECT_TRUE(committed);
        for (const std::int64_t id : ids) run.acked_at[id] = recorder.ops().size();
      });
      EXPECT_EQ(db.commit_group(), static_cast<std::uint32_t>(ids.size()));
      if (g == kGroups / 2) db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    }
    EXPECT_EQ(opened, kGroups);
    recorder.stop();
  }
  run.ops = recorder.ops();
  return run;
}

// Every way the power could fail during `run`: the first loss found, or empty.
std::string first_loss(const Recording& run, const fs::path& dir, int& disks) {
  for (std::size_t cut = 0; cut <= run.ops.size(); ++cut) {
    for (const bool synced : {false, true}) {
      const std::size_t db_end = synced ? synced_until(run.ops, cut, FileKind::db) : cut;
      const std::size_t wal_end = synced ? synced_until(run.ops, cut, FileKind::wal) : cut;
      std::string problem;
      const std::vector<std::int64_t> ids =
          recover(dir, replay(run.ops, db_end, FileKind::db), replay(run.ops, wal_end, FileKind::wal), problem);
      ++disks;
      const std::string where = "cut after " + std::to_string(cut) + " of " + std::to_string(run.ops.size()) +
                                " writes and syncs (" + (synced ? "synced only" : "in order") + ")";
      if (!problem.empty()) return where + ": " + problem;
      for (const auto& [id, at] : run.acked_at) {
        if (at <= cut && !std::binary_search(ids.begin(), ids.end(), id)) {
          return where + ": row " + std::to_string(id) + ", acknowledged, is gone";
        }
      }
    }
  }
  return {};
}

struct PowerLoss : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("relaysim-power-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(PowerLoss, AGroupCommitOnFullDurabilityLosesNothingAcknowledgedAtAnyCut) {
  const Recording run = record(dir, Durability::full);
  ASSERT_EQ(run.acked_at.size(), 70u);  // 24 groups of 1..5 rows
  int disks = 0;
  EXPECT_EQ(first_loss(run, dir, disks), "");
  EXPECT_GT(disks, 200);
}

TEST_F(PowerLoss, TheCheckFindsTheLossOfNormalDurabilityWhichSkipsTheCommitsSync) {
  const Recording run = record(dir, Durability::normal);
  int disks = 0;
  const std::string loss = first_loss(run, dir, disks);
  EXPECT_NE(loss.find("acknowledged, is gone"), std::string::npos) << loss;
  EXPECT_NE(loss.find("synced only"), std::string::npos) << loss;
}

}  // namespace
}  // namespace relaysim
