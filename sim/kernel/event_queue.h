// EventQueue: the kernel's pending events, earliest first, ties in the order they were scheduled.
//
// Two structures, chosen by size. A small queue is a 4-ary heap: at a hundred events nothing
// beats it. A large one is a radix heap, which stays fast where a comparison heap does not: at a
// million events every level of the heap is a cache miss, ten per pop.
//
// The radix heap relies on the kernel's clock never going back: every event is scheduled at or
// after the time of the last one run, and a queue that only moves forward can sort by bits
// instead of by comparisons. An entry sits in one of 65 buckets, chosen by the highest bit in
// which its time differs from `last_`, the time of the earliest entry once found (bucket 0: equal
// to it). A push appends to its bucket. Only when bucket 0 runs dry is the lowest non-empty bucket
// spread over the buckets below it, its least time becoming `last_`. An entry moves down at most
// 64 times and in practice a few, and every move is a sequential append.
//
// Ties: entries at one time leave in sequence order. Bucket 0 is kept sorted by sequence: what a
// spread or a move from the heap puts there is sorted, and a later push at `last_` carries the
// highest sequence yet.
//
// The two together: the heap holds every entry earlier than `last_` and the buckets the rest,
// and the heap is served first. While the buckets are empty that is everything; when the heap
// outgrows kToRadix its entries move to the buckets, and when the whole queue shrinks under
// kToHeap they move back. Once in buckets, the heap still takes what is scheduled before
// `last_`: finding the earliest entry fixes `last_`, and the kernel may then schedule earlier
// (at a time still not before its clock), as a driver does when it looks past its limit and then
// adds an arrival. Should such entries grow past kToRadix and a quarter of the queue (a start
// that schedules far timers first, then its near work), the whole queue is bucketed again from
// the heap's earliest entry.
//
// Look-ahead: a spread of a bucket holding at most kAhead entries has just found the next few
// events to run (everything below it is empty, everything above it later), so it hands their
// slots to the kernel, which asks for their lines while the events before them run. Short of
// later pushes, each entry is announced once, by the first such spread it takes part in
// (`ahead_until_`, the latest time announced, skips the spreads of what was already announced).
// In a queue of a million the slots are cache misses; looking one event ahead hid only part of
// each.
//
// Entries are plain values; a cancelled event's entry stays until it surfaces (the kernel skips
// it). The heap keeps its room; a bucket keeps its room while it fills, and when a spread empties
// it keeps room for at most max(kKeepRoom, a quarter of the queue) entries; a queue that shrinks
// back to its heap gives all its buckets' room back. So memory follows what is pending, not the
// largest burst ever bucketed.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "model/core/assert.h"

namespace relaysim::sim {

struct QueuedEvent {
  std::int64_t time_ns;
  std::uint64_t seq;
  std::uint32_t slot;
  std::uint32_t generation;
};

// A growable array of entries whose append is one store and one increment. (std::vector's
// push_back is a call here: GCC does not inline it at -O2, and the queue appends once or twice
// per event.) It keeps its capacity when cleared.
class EntryRun {
 public:
  void append(const QueuedEvent& e) {
    if (size_ == capacity_) [[unlikely]] grow();
    items_[size_++] = e;
  }
  void clear() { size_ = 0; }
  std::size_t size() const { return size_; }
  QueuedEvent& operator[](std::size_t i) { return items_[i]; }
  const QueuedEvent* begin() const { return items_.get(); }
  const QueuedEvent* end() const { return items_.get() + size_; }
  QueuedEvent* begin() { return items_.get(); }
  QueuedEvent* end() { return items_.get() + size_; }
  void drop_front(std::size_t n);  // drops the first `n` entries
  std::size_t capacity() const { return capacity_; }
  // Empties the run and, when it holds room for more than `keep` entries, gives the room back.
  void clear_keeping(std::size_t keep);

 private:
  void grow();
  // Room that is not initialised when it is allocated (a run refilled after a spread would
  // otherwise write its room twice).
  std::unique_ptr<QueuedEvent[]> items_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

class EventQueue {
 public:
  // Over this many entries in the heap (and more than a quarter of the queue), all move to buckets...
  static constexpr std::size_t kToRadix = 8192;
  // ... and under this many in the whole queue, back to the heap.
  static constexpr std::size_t kToHeap = 2048;

  EventQueue() = default;
  // A queue that never leaves the heap (`to_radix` = SIZE_MAX), to measure what the buckets win.
  explicit EventQueue(std::size_t to_radix) : to_radix_(to_radix) {}

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // For tests: whether the buckets are in use, how many entries the heap holds, and how many
  // entries' room the queue keeps allocated.
  bool bucketed() const { return bucketed_; }
  std::size_t in_heap() const { return heap_.size(); }
  std::size_t retained() const;

  // `e` must not be earlier than the last entry popped, and its sequence must be higher than any
  // pushed before.
  void push(const QueuedEvent& e) {
    ++size_;
    const std::uint64_t key = key_of(e.time_ns);
    if (key < last_ || !bucketed_) {
      heap_push(e);
      // Past the threshold, and holding more than a quarter of the queue (always, before the
      // buckets are in use): everything moves to buckets. A quarter keeps the moves' cost at a few
      // per push, and the heap small beside the buckets whatever the load schedules early.
      if (heap_.size() > to_radix_ && 4 * heap_.size() > size_) [[unlikely]] to_buckets();
      return;
    }
    bucket_push(key, e);
  }

  // The earliest entry, or null when there is none. Valid until the next push or pop.
  const QueuedEvent* top() {
    if (!heap_.empty()) return &heap_[0];
    if (head_ == zero_.size()) {
      if (size_ < kToHeap) [[unlikely]] {
        to_heap();
        return size_ == 0 ? nullptr : &heap_[0];
      }
      spread();
    }
    return &zero_[head_];
  }

  // The slots of the entries the last spread announced (see the look-ahead above): short of an
  // earlier push, the next events to run, in some order. Empty after each read. 64 measured
  // faster than 8 and 32 in the hold model at a million pending.
  static constexpr std::size_t kAhead = 64;
  std::span<const std::uint32_t> take_ahead() {
    return {ahead_.data(), std::exchange(ahead_n_, 0)};
  }

  // Removes the entry top() returned; top() must have found one since the last push or pop.
  void pop() {
    RELAYSIM_ASSERT(!heap_.empty() || head_ < zero_.size(), "pop without an entry found by top()");
    --size_;
    if (!heap_.empty()) {
      heap_pop();
      return;
    }
    if (++head_ == zero_.size()) {
      zero_.clear();
      head_ = 0;
    } else if (head_ >= kCompactAt && head_ * 2 >= zero_.size()) [[unlikely]] {
      // Events that keep scheduling at the same instant append while the front is popped: drop
      // the spent front now and then, so bucket 0 holds only what is pending.
      zero_.drop_front(head_);
      head_ = 0;
    }
  }

 private:
  static constexpr std::size_t kCompactAt = 4096;
  static constexpr std::size_t kKeepRoom = 1024;  // entries' room any bucket may keep when emptied

  struct Later {
    bool operator()(const QueuedEvent& a, const QueuedEvent& b) const {
      return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.seq > b.seq;
    }
  };
  // Times as unsigned keys in the same order (the sign bit flipped).
  static std::uint64_t key_of(std::int64_t time_ns) {
    return static_cast<std::uint64_t>(time_ns) ^ (std::uint64_t{1} << 63);
  }
  unsigned bucket_of(std::uint64_t key) const {
    return key == last_ ? 0U : 64U - static_cast<unsigned>(std::countl_zero(key ^ last_));
  }
  void bucket_push(std::uint64_t key, const QueuedEvent& e) {
    const unsigned b = bucket_of(key);
    if (b == 0) {
      zero_.append(e);
    } else {
      buckets_[b].append(e);
      mask_ |= std::uint64_t{1} << (b - 1);
    }
  }
  void heap_push(const QueuedEvent& e);
  void heap_pop();
  void spread();
  void sort_zero();
  template <class Each>
  void take_bucketed(Each each);
  void to_buckets();
  void to_heap();

  std::size_t to_radix_ = kToRadix;
  std::size_t size_ = 0;
  bool bucketed_ = false;           // entries at or after last_ go to buckets
  std::vector<QueuedEvent> heap_;  // 4-ary, by Later: everything before last_
  std::uint64_t last_ = 0;
  std::uint64_t mask_ = 0;  // bit b - 1: buckets_[b] is not empty (b >= 1)
  EntryRun zero_;           // bucket 0: entries at last_, by sequence, from head_ on
  std::size_t head_ = 0;
  std::array<EntryRun, 65> buckets_;
  std::array<std::uint32_t, kAhead> ahead_{};  // the announcement, until read
  std::size_t ahead_n_ = 0;
  std::uint64_t ahead_until_ = 0;  // the latest key announced
};

// The heap is 4-ary: half as deep as a binary one, and a node's four children share a cache
// line or two, so a pop touches fewer lines for the same number of comparisons.
inline void EventQueue::heap_push(const QueuedEvent& e) {
  std::size_t i = heap_.size();
  heap_.push_back(e);
  const Later later;
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!later(heap_[parent], e)) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

inline void EventQueue::heap_pop() {
  const QueuedEvent last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  const Later later;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + 4 < n ? first + 4 : n;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (later(heap_[best], heap_[c])) best = c;
    }
    if (!later(last, heap_[best])) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

}  // namespace relaysim::sim
