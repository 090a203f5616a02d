// MemoryStore: the Store contract in process memory, for long simulated runs and sweeps.
//
// Rows live in a slab of reusable slots, found by id through a DenseIdMap and by idempotency key
// (a 64-bit hash, confirmed against the row's text) through a FlatIndex. A row's cxid, request_id
// and payload share one InlineText (inside the row when short). Attempts are a list per row in a
// slab of their own, each naming its URL by index into a table of the distinct URLs seen, so an
// attempt allocates nothing once the slab is warm.
//
// Two orders say what to claim next, and each row knows its place in both, so a change moves its
// one entry and nothing stale piles up. `due_` holds every open row at the time claim_due may
// take it (pending/blocked: due_at; in flight: its lease expiry); `expiry_` holds the waiting
// rows (pending/blocked) at deadline_at, for claim_expired. Terminal rows are in neither, so both
// are as small as the open work. (Lazy deletion was tried first: a delivered request's lease and
// deadline entries then lingered for 2 minutes and 24 hours, and at 1000 requests/s the heaps
// held tens of millions of dead entries.)
//
// An order is an indexed binary heap plus two lanes. A lane is a queue that takes an entry only
// if it comes after the lane's last one in (time, id) order, so it stays sorted without sifting:
// appending is O(1), and removing marks the entry dead in place. Most entries fit a lane: a new
// request's due time is its creation time and its deadline that plus a fixed 24 h, and a claim's
// lease expiry is now plus the platform's one lease — all no earlier than the previous one, with
// ids increasing. Those three made every create, claim and completion pay a full heap sift
// before, the commonest path of all. Anything else (retries, replays, a shorter lease than the
// last) goes into the heap, and the front of an order is the first of the three fronts, so
// claim order is exactly the contract's either way. Fronts are O(1); heap changes O(log n);
// nothing scans.
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
#include <vector>

#include "model/core/dense_id_map.h"
#include "model/core/flat_index.h"
#include "model/core/inline_text.h"
#include "model/core/ring.h"
#include "model/core/slot_pool.h"
#include "model/store/store.h"

namespace relaysim::webhook {

class MemoryStore final : public Store {
 public:
  explicit MemoryStore(std::optional<Duration> retention = std::nullopt) : retention_(retention) {}

  CreateResult create(const NewRequest& request) override;
  bool claim_due(Time now, PodId pod, Duration lease, RequestRow& out) override;
  bool claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) override;
  bool complete(RequestId id, ClaimToken token, const Completion& completion) override;
  std::optional<Time> next_due() override;
  ReplayOutcome replay(RequestId id, Time now, Time new_deadline) override;

  std::optional<RequestRow> get(RequestId id) override;
  std::vector<AttemptRow> attempts(RequestId id) override;
  StoreCounts counts() override;

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
    std::uint32_t due_pos = kNone;       // the row's place in due_
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
  struct Entry {
    Time at;  // due_at (or the lease expiry) in due_, deadline_at in expiry_
    RequestId id;
    std::uint32_t slot;  // kNone: dead (only in a lane)
  };
  enum class Lane { created = 0, leased = 1, none = 2 };
  struct LaneQueue {
    Ring<Entry> items;       // in (at, id) order; the front is never dead
    std::uint32_t base = 0;  // the number of items.front(); entries are numbered as queued
  };
  struct Order {
    std::vector<Entry> heap;            // a min-heap on (at, id)
    std::array<LaneQueue, 2> lanes;     // indexed by Lane
    std::uint32_t Row::*pos;            // where a row keeps its place in this order
    Entry front{{}, 0, kNone};          // the first of the three fronts; slot kNone: empty
  };
  // A row's place in an order: the top two bits say where (0: the heap, 1 + lane: a lane; both
  // set: nowhere, kNone), the rest its heap index or its entry's number modulo 2^30.
  static constexpr int kPlaceShift = 30;
  static constexpr std::uint32_t kIndexMask = (1U << kPlaceShift) - 1;
  struct Finished {
    Time at;
    RequestId id;
    std::uint32_t slot;
  };

  Row* row(RequestId id);
  static void copy_out(const Row& r, RequestRow& out);  // reuses out's string capacity
  // Puts the row where its status says in both orders; `created`: it was just created.
  void schedule(std::uint32_t slot, bool created = false);
  static const Entry* front(const Order& o) { return o.front.slot == kNone ? nullptr : &o.front; }
  void order_find_front(Order& o);  // recomputes o.front
  void order_set(Order& o, std::uint32_t slot, Time at, Lane lane);  // insert or move; a lane if it fits
  void order_remove(Order& o, std::uint32_t slot) {
    if (rows_[slot].*o.pos != kNone) order_erase(o, slot);
  }
  void order_erase(Order& o, std::uint32_t slot);  // order_remove of a row that is in the order
  void heap_sift(Order& o, std::size_t i);
  void heap_place(Order& o, std::size_t i, const Entry& e);
  void claim(std::uint32_t slot, Time now, PodId pod, Duration lease, RequestRow& out);
  void forget_finished(Time now);
  std::uint32_t intern_url(std::string_view url);
  static std::uint64_t key_hash(std::string_view cxid, std::string_view request_id);

  std::optional<Duration> retention_;
  SlotPool<Row> rows_;
  DenseIdMap ids_;                   // id -> slot
  FlatIndex keys_;                   // key_hash -> slot + 1
  Order due_{{}, {}, &Row::due_pos};
  Order expiry_{{}, {}, &Row::expiry_pos};
  Ring<Finished> finished_;          // terminal requests in the order they became terminal
  SlotPool<StoredAttempt> attempts_;
  std::vector<std::string> urls_;
  FlatIndex url_index_;              // hash_bytes(url) -> index in urls_ + 1
  std::uint64_t attempt_count_ = 0;
  std::array<std::uint64_t, kStatusCount> by_status_{};
  RequestId next_id_ = 1;
  ClaimToken next_token_ = 1;
};

}  // namespace relaysim::webhook
