#include "sim/kernel/event_queue.h"

#include <algorithm>

namespace relaysim::sim {

void EntryRun::grow() { items_.resize(std::max<std::size_t>(16, 2 * items_.size())); }

void EntryRun::drop_front(std::size_t n) {
  RELAYSIM_ASSERT(n <= size_, "dropping more entries than there are");
  std::copy(begin() + n, end(), begin());
  size_ -= n;
}

// Spreads the lowest non-empty bucket: its least time becomes `last_`, and each of its entries
// moves to a lower bucket (they all differ from the new `last_` only below the bucket's bit).
void EventQueue::spread() {
  RELAYSIM_ASSERT(mask_ != 0 && head_ == zero_.size() && heap_.empty(), "a spread with nothing to spread, or before bucket 0 and the heap are empty");
  zero_.clear();
  head_ = 0;
  const auto from_bucket = static_cast<unsigned>(std::countr_zero(mask_)) + 1;
  EntryRun& from = buckets_[from_bucket];
  mask_ &= ~(std::uint64_t{1} << (from_bucket - 1));
  std::uint64_t least = key_of(from[0].time_ns);
  for (const QueuedEvent& e : from) least = std::min(least, key_of(e.time_ns));
  RELAYSIM_ASSERT(least >= last_, "the queue went back in time");
  last_ = least;
  for (const QueuedEvent& e : from) {
    const std::uint64_t key = key_of(e.time_ns);
    RELAYSIM_ASSERT(bucket_of(key) < from_bucket, "a spread entry moves to a lower bucket");
    bucket_push(key, e);
  }
  from.clear();
  sort_zero();
}

// Entries gathered from several pushes and spreads, or from the heap, may be out of sequence;
// ties are rare, so look before sorting.
void EventQueue::sort_zero() {
  const auto by_seq = [](const QueuedEvent& a, const QueuedEvent& b) { return a.seq < b.seq; };
  if (!std::is_sorted(zero_.begin(), zero_.end(), by_seq)) std::sort(zero_.begin(), zero_.end(), by_seq);
}

void EventQueue::to_buckets() {
  RELAYSIM_ASSERT(!bucketed_ && heap_.size() == size_ && !heap_.empty(), "the heap holds the whole queue");
  zero_.clear();
  head_ = 0;
  last_ = key_of(heap_[0].time_ns);  // the heap's earliest: every entry is at or after it
  for (const QueuedEvent& e : heap_) bucket_push(key_of(e.time_ns), e);
  heap_.clear();
  sort_zero();
  bucketed_ = true;
}

void EventQueue::to_heap() {
  RELAYSIM_ASSERT(heap_.empty() && head_ == zero_.size(), "the heap and bucket 0 are empty");
  zero_.clear();
  head_ = 0;
  while (mask_ != 0) {
    const auto b = static_cast<unsigned>(std::countr_zero(mask_)) + 1;
    mask_ &= mask_ - 1;
    for (const QueuedEvent& e : buckets_[b]) heap_push(e);
    buckets_[b].clear();
  }
  RELAYSIM_ASSERT(heap_.size() == size_, "every entry moved to the heap");
  bucketed_ = false;
}

}  // namespace relaysim::sim
