// MemoryStore: the SMS Store contract in process memory, for long simulated runs and sweeps.
//
// Messages live in a slab of slots found by id through a DenseIdMap and by dedup key (a 64-bit
// hash of business, biz_type and biz_id, confirmed against the row's text) through a
// CompactFlatIndex. The slabs grow in chunks: a run holds millions of rows, and a vector's
// doubling would copy them all and touch twice the memory each time.
// A row's biz_type and biz_id share one InlineText, inside the row when short. The status history
// is a list per row in a slab of its own. One DueQueue holds every non-final message at its due
// time (see model/sms/types.h): it is the compensation scan, so no status can be missed by it.
// New messages go to lane `a` (accept times never go back), leases to lane `b` (now + a fixed
// lease), submitted messages awaiting their receipt to lane `c` (now + the receipt timeout); the
// rest to the heap.
//
// accept() checks everything before it changes anything, so a request that fails changes nothing
// without needing a rollback.
#pragma once

#include <map>
#include <vector>
#include <unordered_map>

#include "model/core/dense_id_map.h"
#include "model/core/flat_index.h"
#include "model/core/inline_text.h"
#include "model/core/slot_pool.h"
#include "model/sms/store.h"
#include "model/store/due_queue.h"

namespace relaysim::sms {

class MemoryStore final : public Store {
 public:
  MemoryStore() = default;
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

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

 private:
  static constexpr std::uint32_t kNone = UINT32_MAX;
  struct Row {
    InlineText text;  // biz_type, then biz_id
    Time created_at{};
    Time send_at{};
    Time due_at{};
    std::uint64_t content = 0;
    Recipient recipient = 0;
    MessageId id = 0;  // 0: a free slot
    MessageId resend_of = 0;
    ClaimToken claim_token = 0;
    BusinessId business = 0;
    std::uint32_t template_id = 0;
    std::uint32_t campaign = 0;
    std::uint32_t period = 0;
    PodId lease_owner = 0;
    std::uint32_t due_pos = kNone;       // the row's place in due_
    std::uint32_t last_change = kNone;   // slot in changes_ of its newest history entry
    std::uint16_t type_len = 0;
    std::uint16_t attempts = 0;
    std::uint16_t segments = 1;
    ProviderId provider = kNoProvider;
    Kind kind = Kind::single;
    Status status = Status::pending;
    Reason reason = Reason::none;
    bool charged = false;
    bool accepted = false;

    std::string_view biz_type() const { return text.view().substr(0, type_len); }
    std::string_view biz_id() const { return text.view().substr(type_len); }
  };
  struct StoredChange {
    StatusChange change;
    std::uint32_t previous = kNone;
  };
  struct DuePlace {
    MemoryStore* store;
    std::uint32_t& operator()(std::uint32_t slot) const { return store->rows_[slot].due_pos; }
  };
  using DueOrder = DueQueue<DuePlace>;
  static_assert(kNone == DueOrder::kNowhere, "a row's place starts nowhere");

  static std::uint64_t key_hash(BusinessId business, std::string_view biz_type, std::string_view biz_id);
  std::uint32_t find_slot(BusinessId business, std::string_view biz_type, std::string_view biz_id) const;
  void copy_out(const Row& r, MessageRow& out) const;
  // Moves the row to `status`, keeping the counts, the history and its place in due_.
  void move(std::uint32_t slot, Status status, Reason reason, Time at, PodId pod, DueLane lane);
  void charge(BusinessId business, std::uint32_t period, std::int64_t units);

  StableSlotPool<Row, 12> rows_;
  DenseIdMap ids_;         // id -> slot
  CompactFlatIndex keys_;  // key_hash -> slot + 1
  DueOrder due_{DuePlace{this}};
  StableSlotPool<StoredChange, 12> changes_;
  std::map<BusinessId, BusinessRow> businesses_;
  std::unordered_map<std::uint64_t, std::uint64_t> used_;  // business << 32 | period -> units
  StoreCounts counts_;
  // Campaigns by id - 1: few, each expanded a chunk at a time.
  std::vector<CampaignRow> campaigns_;
  // The frequency cap's places: per recipient, a list (newest first) of the messages that took one
  // and when; all are kept, as the SQLite store keeps them, and a take reads only the window's.
  struct CapPlace {
    Time at{};
    MessageId message = 0;
    std::uint32_t next = kNone;
  };
  std::unordered_map<Recipient, std::uint32_t> cap_heads_;
  SlotPool<CapPlace> cap_places_;
  MessageId next_id_ = 1;
  ClaimToken next_token_ = 1;
};

}  // namespace relaysim::sms
