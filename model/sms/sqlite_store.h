// SqliteStore: the SMS Store contract on SQLite — the real one, for the live shell and the
// property tests, and the one a differential test holds MemoryStore to.
//
// Schema: `messages` with UNIQUE (business, biz_type, biz_id) — the dedup is the database's, so
// two pods racing the same key cannot both insert — and a partial index on (due_at, id) over
// non-final rows that claims and next_due read, and each row's status history as a JSON array
// appended by the statement that changes it (so a change is one statement); `businesses` and
// `quota_used` (business, period) are what accept() reads and charges in its transaction;
// `claim_tokens` holds the last claim token, taken in the claim's own transaction, so tokens keep
// increasing across processes and restarts; `campaigns` with UNIQUE (business, biz_type,
// biz_id) and `cap_places` (recipient, message) — the frequency cap's window — complete it.
#pragma once

#include <memory>
#include <string>

#include "model/sms/store.h"
#include "model/store/sqlite_db.h"

namespace relaysim::sms {

class SqliteStore final : public Store {
 public:
  // `path` may be ":memory:". Creates the schema when absent. Throws StoreError.
  explicit SqliteStore(const std::string& path, Durability durability = Durability::normal);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  AcceptResult accept(const AcceptRequest& request) override;
  std::optional<Status> claim_due(Time now, PodId pod, Duration lease, MessageRow& out) override;
  bool complete(MessageId id, ClaimToken token, const Completion& completion) override;
  ReceiptOutcome receipt(MessageId id, bool delivered, Time at) override;
  std::optional<Time> next_due() override;

  BusinessId add_business(const BusinessRow& row) override;
  void put_business(const BusinessRow& row) override;
  bool move_business(BusinessId id, GrantState from, GrantState to, bool new_epoch) override;
  std::optional<BusinessRow> business(BusinessId id) override;
  std::uint64_t quota_used(BusinessId id, std::uint32_t period) override;

  std::optional<MessageRow> get(MessageId id) override;
  std::optional<MessageId> find(BusinessId business, std::string_view biz_type, std::string_view biz_id) override;
  std::vector<StatusChange> history(MessageId id) override;
  std::vector<MessageId> messages(const MessageQuery& query) override;
  StoreCounts counts() override;

  CampaignStart start_campaign(const NewCampaign& campaign) override;
  bool claim_campaign(Time now, PodId pod, Duration lease, CampaignRow& out) override;
  bool advance_campaign(CampaignId id, ClaimToken token, const CampaignProgress& progress) override;
  std::optional<Time> next_campaign_due() override;
  std::optional<CampaignRow> campaign(CampaignId id) override;
  bool take_cap(Recipient recipient, MessageId id, Time now, const FrequencyCap& cap) override;
  std::vector<CapPlaceRow> cap_places() override;

  Db& db() { return db_; }

 private:
  using Statement = Db::Statement;
  std::optional<ExistingMessage> find_key(BusinessId business, std::string_view biz_type, std::string_view biz_id);
  ClaimToken take_token();
  void charge(BusinessId business, std::uint32_t period, std::int64_t units);
  void read_row(Statement& s, MessageRow& out);
  static void read_campaign(Statement& s, CampaignRow& out);

  Db db_;
  // An answer remembered under the write mark it was read at (see Db::sole_writer_mark).
  struct Seen {
    Db::WriteMark mark;
    std::optional<Time> value;
  };
  Seen next_due_seen_;
  std::unique_ptr<Statement> business_, add_business_, put_business_, move_business_, used_, charge_, refund_, find_key_, insert_, take_token_, last_token_,
      pick_due_, claim_, complete_, complete_quietly_, uncharge_, receipt_, exists_, next_due_, get_, history_, messages_, count_status_,
      count_reason_, count_charged_, find_campaign_, insert_campaign_, claim_campaign_, advance_campaign_,
      next_campaign_, get_campaign_, cap_count_, cap_take_, cap_list_, original_;
};

}  // namespace relaysim::sms
