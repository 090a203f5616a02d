#include "sim/kernel/event_queue.h"

#include <algorithm>

namespace relaysim::sim {

void EntryRun::grow() {
  const std::size_t capacity = std::max<std::size_t>(16, 2 * capacity_);
  std::unique_ptr<QueuedEvent[]> items = std::make_unique_for_overwrite<QueuedEvent[]>(capacity);
  std::copy(begin(), end(), items.get());
  items_ = std::move(items);
  capacity_ = capacity;
}

void EntryRun::clear_keeping(std::size_t keep) {
  size_ = 0;
  if (capacity_ > keep) {
    items_.reset();
    capacity_ = 0;
  }
}

std::size_t EventQueue::retained() const {
  std::size_t n = heap_.capacity() + zero_.capacity();
  for (const EntryRun& b : buckets_) n += b.capacity();
  return n;
}

void EntryRun::drop_front(std::size_t n) {
  RELAYSIM_ASSERT(n <= size_, "dropping more entries than there are");
  std::copy(begin() + n, end(), begin());
  size_ -= n;
}

// Spreads the lowest non-empty bucket: its least time becomes `last_`, and each of its entries
// moves to a lower bucket (they all differ from the new `last_` only below the bucket's bit).
void EventQueue::spread() {
  RELAYSIM_ASSERT(mask_ != 0 && head_ == zero_.size() && heap_.empty(), "a spread with nothing to spread, or before bucket 0 and the heap are empty");
  // A bucket a spread empties keeps room for at most a quarter of the queue: bursts in many
  // buckets would otherwise hold room for each of them for good. (Growing a large one again costs
  // about what spreading it did.)
  const std::size_t keep = std::max(kKeepRoom, size_ / 4);
  zero_.clear_keeping(keep);
  head_ = 0;
  const auto from_bucket = static_cast<unsigned>(std::countr_zero(mask_)) + 1;
  EntryRun& from = buckets_[from_bucket];
  mask_ &= ~(std::uint64_t{1} << (from_bucket - 1));
  std::uint64_t least = key_of(from[0].time_ns);
  std::uint64_t most = least;
  for (const QueuedEvent& e : from) {
    least = std::min(least, key_of(e.time_ns));
    most = std::max(most, key_of(e.time_ns));
  }
  RELAYSIM_ASSERT(least >= last_, "the queue went back in time");
  last_ = least;
  if (from.size() <= kAhead && most > ahead_until_) {
    ahead_until_ = most;
    ahead_n_ = from.size();
    for (std::size_t i = 0; i < ahead_n_; ++i) ahead_[i] = from[i].slot;
  }
  for (const QueuedEvent& e : from) {
    const std::uint64_t key = key_of(e.time_ns);
    RELAYSIM_ASSERT(bucket_of(key) < from_bucket, "a spread entry moves to a lower bucket");
    bucket_push(key, e);
  }
  from.clear_keeping(keep);
  sort_zero();
}

// Entries that came from the heap (to_buckets) may be out of sequence, in bucket 0 or in a bucket
// a later spread empties into it; ties are rare, so look before sorting.
void EventQueue::sort_zero() {
  const auto by_seq = [](const QueuedEvent& a, const QueuedEvent& b) { return a.seq < b.seq; };
  if (!std::is_sorted(zero_.begin(), zero_.end(), by_seq)) std::sort(zero_.begin(), zero_.end(), by_seq);
}

// Hands every bucketed entry (the rest of bucket 0, then each bucket) to `each`, and empties the
// buckets.
template <class Each>
void EventQueue::take_bucketed(Each each) {
  for (std::size_t i = head_; i < zero_.size(); ++i) each(zero_[i]);
  zero_.clear();
  head_ = 0;
  while (mask_ != 0) {
    const auto b = static_cast<unsigned>(std::countr_zero(mask_)) + 1;
    mask_ &= mask_ - 1;
    for (const QueuedEvent& e : buckets_[b]) each(e);
    buckets_[b].clear();
  }
}

void EventQueue::to_buckets() {
  RELAYSIM_ASSERT(!heap_.empty(), "the heap has entries to move");
  // The heap's earliest is the whole queue's: the heap holds what is before last_, the buckets the
  // rest. What is already bucketed joins the heap's entries, and all are bucketed from there.
  const std::uint64_t least = key_of(heap_[0].time_ns);
  take_bucketed([this](const QueuedEvent& e) { heap_.push_back(e); });
  RELAYSIM_ASSERT(heap_.size() == size_, "every entry gathered");
  RELAYSIM_ASSERT(!bucketed_ || least < last_, "the heap holds what is before last_");
  last_ = least;
  ahead_until_ = 0;  // last_ may have moved back: what comes next is announced afresh
  for (const QueuedEvent& e : heap_) bucket_push(key_of(e.time_ns), e);
  heap_.clear();
  sort_zero();
  bucketed_ = true;
}

void EventQueue::to_heap() {
  RELAYSIM_ASSERT(heap_.empty() && head_ == zero_.size(), "the heap and bucket 0 are empty");
  take_bucketed([this](const QueuedEvent& e) { heap_push(e); });
  // A small queue again: the buckets give their room back.
  zero_.clear_keeping(0);
  for (EntryRun& b : buckets_) b.clear_keeping(0);
  RELAYSIM_ASSERT(heap_.size() == size_, "every entry moved to the heap");
  bucketed_ = false;
}

}  // namespace relaysim::sim
