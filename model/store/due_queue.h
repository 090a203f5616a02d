// DueQueue: open work ordered by (time, id), for stores that hand out "the earliest due item".
//
// Every store of relaysim answers "what is due next?" — a webhook request's next attempt or lease
// expiry, an SMS scheduled send, an outbox row's next_attempt_date — and each item moves often
// (claimed, retried, finished). An item knows its place in the queue (a slot's position, kept by
// the caller where it is cheapest to reach), so moving or removing it touches one entry and
// nothing stale piles up. (Lazy deletion was tried first: at 1000 requests/s a day-long run left
// tens of millions of dead entries in the heap.)
//
// Shape: an indexed 4-ary heap plus three lanes. A lane is a FIFO that takes an entry only if it
// comes after the lane's last one in (time, id) order, so it stays sorted without sifting:
// appending is O(1), removing marks the entry dead in place. Most entries fit a lane, because
// most times are "now + a constant" with ids increasing (a new request's creation time and
// deadline, a claim's lease expiry, a receipt's timeout); the caller names the lane an item is
// likely to fit. Anything else goes into the heap. The front is the first of the four fronts, cached, so the order is
// exactly (time, id) either way. Fronts are O(1); heap changes O(log n); nothing scans.
//
// `Places` is a callable that returns a reference to a slot's place (std::uint32_t&), initially
// DueQueue::kNowhere; the queue alone writes it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/core/assert.h"
#include "model/core/big_memory.h"
#include "model/core/ring.h"
#include "model/core/time.h"

namespace relaysim {

// Which lane an entry should try first; `none` goes straight to the heap.
enum class DueLane : std::uint8_t { a = 0, b = 1, c = 2, none = 3 };

template <class Places>
class DueQueue {
 public:
  static constexpr std::uint32_t kNowhere = UINT32_MAX;
  using Lane = DueLane;

  struct Entry {
    Time at;
    std::uint64_t id;
    std::uint32_t slot;  // kNowhere: dead (only in a lane)
  };

  explicit DueQueue(Places places) : places_(places) {}

  // The earliest entry, or nullptr when the queue is empty.
  const Entry* front() const { return front_.slot == kNowhere ? nullptr : &front_; }
  bool contains(std::uint32_t slot) { return places_(slot) != kNowhere; }
  std::size_t heap_size() const { return heap_.size(); }

  // Inserts `slot` at (at, id), or moves it there; a lane if it fits, else the heap.
  void set(std::uint32_t slot, std::uint64_t id, Time at, Lane lane) {
    RELAYSIM_ASSERT(slot != kNowhere, "kNowhere is not a slot");
    std::uint32_t& place = places_(slot);
    const Entry e{at, id, slot};
    if (lane != Lane::none) {
      LaneQueue& q = lanes_[static_cast<int>(lane)];
      if (q.items.empty() || later(e, q.items.back())) {
        remove(slot);
        place = (static_cast<std::uint32_t>(lane) + 1) << kPlaceShift | ((q.base + q.items.size()) & kIndexMask);
        q.items.push_back(e);
        became_first(e);
        return;
      }
    }
    if (place != kNowhere && place >> kPlaceShift == 0) {  // already in the heap: move it there
      if (heap_[place].at != at) {
        heap_[place].at = at;
        sift(place);
        if (front_.slot == slot) {
          find_front();
        } else {
          became_first(e);
        }
      }
      return;
    }
    remove(slot);
    RELAYSIM_ASSERT(heap_.size() < kIndexMask, "a heap index must fit in a slot's place");
    heap_.push_back(e);
    sift(heap_.size() - 1);
    became_first(e);
  }

  // Takes `slot` out of the queue; nothing happens when it is not in it.
  void remove(std::uint32_t slot) {
    std::uint32_t& place = places_(slot);
    if (place == kNowhere) return;
    const std::uint32_t where = place >> kPlaceShift;
    const std::uint32_t index = place & kIndexMask;
    place = kNowhere;
    if (where == 0) {
      RELAYSIM_ASSERT(index < heap_.size() && heap_[index].slot == slot, "a slot's place names its heap entry");
      const Entry last = heap_.back();
      heap_.pop_back();
      if (index < heap_.size()) {
        heap_[index] = last;
        sift(index);
      }
    } else {
      LaneQueue& q = lanes_[where - 1];
      Entry& dead = q.items[(index - q.base) & kIndexMask];
      RELAYSIM_ASSERT(dead.slot == slot, "a slot's place names its lane entry");
      dead.slot = kNowhere;
      while (!q.items.empty() && q.items.front().slot == kNowhere) {  // keep the front alive
        q.items.pop_front();
        ++q.base;
      }
    }
    if (front_.slot == slot) find_front();
  }

 private:
  // A slot's place: the top three bits say where (0: the heap, 1 + lane: a lane; all set:
  // nowhere), the rest its heap index or its lane entry's number modulo 2^29.
  static constexpr int kPlaceShift = 29;
  static constexpr std::uint32_t kIndexMask = (1U << kPlaceShift) - 1;

  struct LaneQueue {
    Ring<Entry> items;       // in (at, id) order; the front is never dead
    std::uint32_t base = 0;  // the number of items.front(); entries are numbered as queued
  };

  // Heap order: the earliest first, then the lowest id.
  static bool later(const Entry& a, const Entry& b) { return a.at != b.at ? a.at > b.at : a.id > b.id; }

  void became_first(const Entry& e) {
    if (front_.slot == kNowhere || later(front_, e)) front_ = e;
  }

  void find_front() {
    const Entry* first = heap_.empty() ? nullptr : &heap_.front();
    for (const LaneQueue& q : lanes_) {
      if (!q.items.empty() && (first == nullptr || later(*first, q.items.front()))) first = &q.items.front();
    }
    front_ = first != nullptr ? *first : Entry{{}, 0, kNowhere};
  }

  void place_at(std::size_t i, const Entry& e) {
    heap_[i] = e;
    places_(e.slot) = static_cast<std::uint32_t>(i);
  }

  // Four children per node: half the levels of a binary heap, and each level moves one entry whose
  // slot's place (in the caller's row, somewhere in memory) must be written. With millions of
  // entries those writes are cache misses, so fewer levels is what counts.
  static constexpr std::size_t kArity = 4;

  void sift(std::size_t i) {
    const Entry e = heap_[i];
    while (i > 0 && later(heap_[(i - 1) / kArity], e)) {  // up
      place_at(i, heap_[(i - 1) / kArity]);
      i = (i - 1) / kArity;
    }
    for (;;) {  // down
      const std::size_t first = kArity * i + 1;
      if (first >= heap_.size()) break;
      const std::size_t end = first + kArity < heap_.size() ? first + kArity : heap_.size();
      std::size_t child = first;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (later(heap_[child], heap_[c])) child = c;
      }
      if (!later(e, heap_[child])) break;
      place_at(i, heap_[child]);
      i = child;
    }
    place_at(i, e);
  }

  Places places_;
  std::vector<Entry, BigAllocator<Entry>> heap_;  // a 4-ary min-heap on (at, id)
  std::array<LaneQueue, 3> lanes_;
  Entry front_{{}, 0, kNowhere};  // the first of the four fronts; slot kNowhere: empty
};

}  // namespace relaysim
