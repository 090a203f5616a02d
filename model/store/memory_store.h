// MemoryStore: the Store contract in process memory, for long simulated runs and sweeps.
//
// Rows live in a slab of reusable slots, found by id through a DenseIdMap and by idempotency key
// (a 64-bit hash, confirmed against the row's text) through a FlatIndex. A row's cxid, request_id
// and payload share one InlineText (inside the row when short). Attempts are a list per row in a
// slab of their own, each naming its URL by index into a table of the distinct URLs seen, so an
// attempt allocates nothing once the slab is warm.
//
// Three structures order the work, and each row knows its place in them, so a change moves its
// one entry and nothing stale piles up. `due_` is an indexed binary heap of the waiting rows
// (pending/blocked) at due_at; `leases_` is a queue of the rows in flight at their lease expiry;
// together they say what claim_due may take. `expiry_` is an indexed heap of the waiting rows at
// deadline_at, for claim_expired. Terminal rows are in none, so all three are as small as the
// open work. (Lazy deletion was tried first: a delivered request's lease and deadline entries
// then lingered for 2 minutes and 24 hours, and at 1000 requests/s the heaps held tens of
// millions of dead entries.)
//
// Why a queue for leases: every claim sets a lease expiry of now + lease, which with one lease
// for the whole platform only grows, so a claim appends its entry at the back and a completion
// marks it dead in place — O(1) where a heap took a full sift for both (the commonest path of
// all: create, claim, complete). An expiry that would break the queue's (time, id) order (a
// shorter lease than the last claim's, or an equal time with a lower id) goes into `due_`
// instead, so the order claim_due sees is exact either way. claim_due, claim_expired and
// next_due are O(log n) at worst; nothing scans.
//
// Retention: with a finite `retention`, a terminal request is forgotten that long after it became
// terminal — its row, its idempotency key and its slot go (the slot is reused), so memory follows
// the open requests, not the whole history. A create of a forgotten key makes a new request, and
// get/replay/attempts of a forgotten id answer "not found". With retention `std::nullopt` (the
// default) nothing is forgotten.
#pragma once

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
    std::uint32_t due_pos = kNone;       // the row's index in due_, or kInLeases | its lease number
    std::uint32_t expiry_pos = kNone;    // the row's index in expiry_
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
  struct HeapEntry {
    Time at;  // due_at (or the lease expiry) in due_, deadline_at in expiry_
    RequestId id;
    std::uint32_t slot;
  };
  // due_pos of a row in leases_: the flag, and the low 31 bits of the entry's number (entries
  // are numbered in the order they were queued; leases_base_ is the number of the oldest).
  static constexpr std::uint32_t kInLeases = 0x80000000U;
  struct Heap {
    std::vector<HeapEntry> items;        // a min-heap on (at, id)
    std::uint32_t Row::*pos;             // where a row keeps its index in `items`
  };
  struct Finished {
    Time at;
    RequestId id;
    std::uint32_t slot;
  };

  Row* row(RequestId id);
  static void copy_out(const Row& r, RequestRow& out);  // reuses out's string capacity
  void schedule(std::uint32_t slot);  // puts the row where it belongs in the heaps and leases_
  void lease_drop(Row& r);  // marks the row's entry in leases_ dead, if it has one
  const HeapEntry* earliest_due() const;  // the front of due_ or of leases_, whichever is first
  void heap_set(Heap& h, std::uint32_t slot, Time at);  // insert or move
  void heap_remove(Heap& h, std::uint32_t slot);
  void heap_sift(Heap& h, std::size_t i);
  void heap_place(Heap& h, std::size_t i, const HeapEntry& e);
  void claim(std::uint32_t slot, Time now, PodId pod, Duration lease, RequestRow& out);
  void forget_finished(Time now);
  std::uint32_t intern_url(std::string_view url);
  static std::uint64_t key_hash(std::string_view cxid, std::string_view request_id);

  std::optional<Duration> retention_;
  SlotPool<Row> rows_;
  DenseIdMap ids_;                   // id -> slot
  FlatIndex keys_;                   // key_hash -> slot + 1
  Heap due_{{}, &Row::due_pos};
  Heap expiry_{{}, &Row::expiry_pos};
  Ring<HeapEntry> leases_;           // in (at, id) order; slot kNone: dead. Never starts dead.
  std::uint64_t leases_base_ = 0;    // the number of leases_.front()
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
