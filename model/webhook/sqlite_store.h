// SqliteStore: the Store contract on SQLite — the real one, used by the live shell and the
// property tests.
//
// Schema: `requests` with UNIQUE(cxid, request_id) and partial indexes on (due_at, id) over open
// rows, on (due_at, id) over open rows but the blocked ones (a claim that leaves them out does not
// pass over them) and on (deadline_at, id) over waiting rows, so claims and next_due read an index, never
// the table; `attempts` is append-only (no UPDATE or DELETE is ever issued on it);
// `claim_tokens` holds the last claim token. Claim tokens come from the database, in the claim's
// own statement, so two processes sharing one database never hand out the same token and tokens
// keep increasing across restarts.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "model/store/sqlite_db.h"
#include "model/webhook/store.h"

namespace relaysim::webhook {

class SqliteStore final : public Store {
 public:
  // `path` may be ":memory:". Creates the schema when absent. Throws StoreError.
  explicit SqliteStore(const std::string& path, Durability durability = Durability::normal);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  CreateResult create(const NewRequest& request) override;
  bool claim_due(Time now, PodId pod, Duration lease, RequestRow& out, Claimable which = Claimable::all) override;
  bool claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) override;
  bool complete(RequestId id, ClaimToken token, const Completion& completion) override;
  std::optional<Time> next_due(Claimable which = Claimable::all) override;
  std::optional<Time> next_expiry() override;
  ReplayOutcome replay(RequestId id, Time now, Time new_deadline) override;
  bool claim_notice(Time now, Duration lease, Notice& out) override;
  void notice_sent(NoticeId id) override;
  std::optional<Time> next_notice() override;
  std::vector<Notice> notices() override;

  std::optional<RequestRow> get(RequestId id) override;
  std::vector<AttemptRow> attempts(RequestId id) override;
  StoreCounts counts() override;
  std::vector<RequestId> with_status(Status status, RequestId after, std::size_t limit) override;

  Db& db() { return db_; }

 private:
  using Statement = Db::Statement;
  bool claim_with(Statement& claim, Time now, PodId pod, Duration lease, RequestRow& out);
  static void read_notice(const Statement& q, Notice& out);
  // The claim and next_due statements for each Claimable, with and without rescues of expired
  // leases (without: test builds only, a planted bug), prepared on first use.
  Statement& claimable_statement(std::array<std::unique_ptr<Statement>, 4>& slots, Claimable which, bool next_due);

  Db db_;
  std::unique_ptr<Statement> insert_, find_key_, claim_expired_, probe_expired_, complete_,
      add_attempt_, next_expiry_, replay_, get_, attempts_, count_status_, count_attempts_, with_status_,
      add_notice_, claim_notice_, notice_sent_, next_notice_, notices_;
  std::array<std::unique_ptr<Statement>, 4> claim_, next_due_;
  // Test builds only (see model/webhook/mutants.h): prepared on first use by a planted bug.
  std::unique_ptr<Statement> complete_any_token_, add_attempt_or_ignore_;
};

}  // namespace relaysim::webhook
