// SqliteStore: the Store contract on SQLite — the real one, used by the live shell and the
// property tests.
//
// Schema: `requests` with UNIQUE(cxid, request_id) and a partial index on (due_at, id) over active
// rows (status < delivered) so claims and next_due read the index, never the table; `attempts`
// is append-only (no UPDATE or DELETE is ever issued on it). The database runs in WAL mode.
#pragma once

#include <memory>
#include <string>

#include "model/store/store.h"

struct sqlite3;
struct sqlite3_stmt;

namespace relaysim::webhook {

// How hard commits push to disk. `full` survives power loss; `normal` (WAL) survives a process
// crash; `off` is for simulations, where the process itself is the world: writes are grouped into
// transactions of a few thousand (a statement-sized transaction costs more than the statement),
// so a crash of the process loses the last group.
enum class Durability : std::uint8_t { full, normal, off };

class SqliteStore final : public Store {
 public:
  // `path` may be ":memory:". Creates the schema when absent. Throws StoreError.
  explicit SqliteStore(const std::string& path, Durability durability = Durability::normal);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  CreateResult create(const NewRequest& request) override;
  bool claim_due(Time now, PodId pod, Duration lease, RequestRow& out) override;
  bool claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) override;
  bool complete(RequestId id, ClaimToken token, const Completion& completion) override;
  std::optional<Time> next_due() override;
  ReplayOutcome replay(RequestId id, Time now, Time new_deadline) override;

  std::optional<RequestRow> get(RequestId id) override;
  std::vector<AttemptRow> attempts(RequestId id) override;
  StoreCounts counts() override;

 private:
  class Statement;
  void exec(const char* sql);
  void wrote();  // after each write: with Durability::off, commits every kBatchWrites
  // The statement in `slot`, prepared on first use.
  Statement& prepared(std::unique_ptr<Statement>& slot, const char* sql);
  [[noreturn]] void fail(const char* what);

  sqlite3* db_ = nullptr;
  std::string path_;
  ClaimToken next_token_ = 1;
  static constexpr std::uint32_t kBatchWrites = 4096;
  bool batched_ = false;  // Durability::off: one long transaction, committed every kBatchWrites
  std::uint32_t writes_ = 0;
  bool claim_with(Statement& claim, Time now, PodId pod, Duration lease, RequestRow& out);

  std::unique_ptr<Statement> insert_, find_key_, claim_, claim_expired_, probe_expired_, complete_, add_attempt_, next_due_, replay_,
      get_, attempts_, count_status_, count_attempts_, begin_, commit_, rollback_, rollback_release_;
  // Test builds only (see model/core/mutants.h): prepared on first use by a planted bug.
  std::unique_ptr<Statement> claim_no_rescue_, next_due_no_rescue_, complete_any_token_,
      add_attempt_or_ignore_;
};

}  // namespace relaysim::webhook
