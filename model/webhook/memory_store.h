// MemoryStore: the Store contract in process memory, for long simulated runs and sweeps.
//
// Rows live in a slab of reusable slots, found by id through a DenseIdMap and by idempotency key
// (the top 32 bits of a 64-bit hash, confirmed against the row's text) through a CompactFlatIndex.
// A row's cxid, request_id and payload share one InlineText (inside the row when short). Attempts
// are a list per row in a slab of their own, each naming its URL by index into a table of the
// distinct URLs seen, so an attempt allocates nothing once the slab is warm.
//
// Three DueQueues say what to claim next. `due_` holds the open rows claim_due may take whatever
// it is asked for, at the time it may (pending: due_at; in flight: its lease expiry); `blocked_`
// the blocked ones at due_at, apart, so a claim that leaves them out does not pass over them;
// `expiry_` the waiting rows (pending/blocked) at deadline_at, for claim_expired. Terminal rows are
// in none, so all three are as small as the open work. New requests go to the queues' lane `a` (a
// creation time and that plus the fixed deadline never go back), claims to `due_`'s lane `b` (now +
// the lease), deadlines of requests that come back to wait to `expiry_`'s lane `c`.
//
// Retention: with a finite `retention`, a terminal request is forgotten that long after it became
// terminal — its row, its idempotency key and its slot go (the slot is reused), so memory follows
// the open requests, not the whole history. A create of a forgotten key makes a new request, and
// get/replay/attempts of a forgotten id answer "not found". With retention `std::nullopt` (the
// default) nothing is forgotten.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/core/dense_id_map.h"
#include "model/core/flat_index.h"
#include "model/core/inline_text.h"
#include "model/core/slot_pool.h"
#include "model/store/due_queue.h"
#include "model/store/retention.h"
#include "model/webhook/store.h"

namespace relaysim::webhook {

class MemoryStore final : public Store {
 public:
  explicit MemoryStore(std::optional<Duration> retention = std::nullopt) : retention_(retention) {}
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

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
  std::optional<Duration> retention() const override { return retention_.keep(); }

  // Requests held in memory now (open ones plus terminal ones not yet forgotten).
  std::size_t rows_held() const { return ids_.size(); }

 private:
  static constexpr std::uint32_t kNone = UINT32_MAX;
  struct Row {
    InlineText text;  // cxid, then request_id, then payload
    std::uint64_t key_hash = 0;  // kept: forgetting the row would otherwise hash the key again
    Time created_at{};
    Time deadline_at{};
    Time due_at{};
    Time not_before{};
    Time terminal_at{};
    Duration last_delay{};
    RequestId id = 0;  // 0: a free slot
    ClaimToken claim_token = 0;
    std::uint32_t attempts = 0;
    std::uint32_t deferrals = 0;
    std::uint32_t replays = 0;
    PodId lease_owner = 0;
    std::uint32_t due_pos = kNone;       // the row's place in due_ (kNone: DueQueue::kNowhere)
    std::uint32_t blocked_pos = kNone;   // the row's place in blocked_
    std::uint32_t expiry_pos = kNone;    // the row's place in expiry_
    std::uint32_t last_attempt = kNone;  // slot in attempts_ of the newest attempt
    std::uint16_t cxid_len = 0;
    std::uint16_t request_len = 0;
    Status status = Status::pending;
    Reason reason = Reason::none;

    std::string_view cxid() const { return text.view().substr(0, cxid_len); }
    std::string_view request_id() const { return text.view().substr(cxid_len, request_len); }
    std::string_view payload() const { return text.view().substr(cxid_len + request_len); }
  };
  struct StoredAttempt {
    Time started_at{};
    Time finished_at{};
    ClaimToken claim_token = 0;
    std::uint64_t serviceb_version = 0;
    std::uint32_t number = 0;
    PodId pod = 0;
    std::uint32_t url = 0;           // index into urls_
    std::uint32_t previous = kNone;  // slot of the row's attempt before this one
    int http_status = 0;
    NetError error = NetError::none;
  };
  // Where a row keeps its place in each queue.
  struct DuePlace {
    MemoryStore* store;
    std::uint32_t& operator()(std::uint32_t slot) const { return store->rows_[slot].due_pos; }
  };
  struct BlockedPlace {
    MemoryStore* store;
    std::uint32_t& operator()(std::uint32_t slot) const { return store->rows_[slot].blocked_pos; }
  };
  struct ExpiryPlace {
    MemoryStore* store;
    std::uint32_t& operator()(std::uint32_t slot) const { return store->rows_[slot].expiry_pos; }
  };
  using DueOrder = DueQueue<DuePlace>;
  using BlockedOrder = DueQueue<BlockedPlace>;
  using ExpiryOrder = DueQueue<ExpiryPlace>;
  static_assert(kNone == DueOrder::kNowhere, "a row's places start nowhere");

  Row* row(RequestId id);
  static void copy_out(const Row& r, RequestRow& out);  // reuses out's string capacity
  // Puts the row where its status says in both orders; `created`: it was just created.
  void schedule(std::uint32_t slot, bool created = false);
  void claim(std::uint32_t slot, Time now, PodId pod, Duration lease, RequestRow& out);
  // The row a claim of `which` takes next, whenever it comes due: the earlier of due_'s front and
  // (with Claimable::all) blocked_'s, by (due time, id), as one queue of both would order them.
  struct Next {
    Time at;
    std::uint32_t slot;
  };
  std::optional<Next> next_claimable(Claimable which) const;
  void forget_finished(Time now);
  std::uint32_t intern_url(std::string_view url);
  static std::uint64_t key_hash(std::string_view cxid, std::string_view request_id);

  Retention retention_;
  // In chunks that never move: growing to millions of rows copies none of them. (Small chunks:
  // a sweep makes thousands of small runs, and each chunk is zeroed when it is made.)
  StableSlotPool<Row> rows_;
  DenseIdMap ids_;                   // id -> slot
  CompactFlatIndex keys_;            // key_hash -> slot + 1
  DueOrder due_{DuePlace{this}};
  BlockedOrder blocked_{BlockedPlace{this}};
  ExpiryOrder expiry_{ExpiryPlace{this}};
  StableSlotPool<StoredAttempt> attempts_;
  // The few attempts that say in words why nothing was sent (AttemptRow::detail), by slot: kept
  // aside, so the many that do not cost nothing.
  std::unordered_map<std::uint32_t, std::string> details_;
  std::vector<InlineText> urls_;      // short ones inside: interning compares with one load
  FlatIndex url_index_;              // hash_bytes(url) -> index in urls_ + 1
  // The notices not yet sent, by id (appended in order). A few at a time: a notice is normally
  // sent and removed in the instant its failure is recorded, so a scan costs nothing.
  struct OutboxNotice {
    Notice notice;
    Time due{};  // when it may be claimed (again)
  };
  std::vector<OutboxNotice> outbox_;
  NoticeId next_notice_id_ = 1;
  std::uint64_t attempt_count_ = 0;
  std::array<std::uint64_t, kStatusCount> by_status_{};
  RequestId next_id_ = 1;
  ClaimToken next_token_ = 1;
};

}  // namespace relaysim::webhook
