// DenseIdMap: id -> slot for ids handed out in increasing order (request ids), as a window over
// the ids from the oldest one still mapped to the newest.
//
// Why not a hash table: lookups of recent ids — nearly all of them — touch neighbouring memory,
// and the table needs no hashing, probing or rehashing. The cost is 4 bytes (8 just after the
// ring doubles) for every id between the oldest live one and the newest, so one request open for
// a long time keeps the window wide (a day at 1000 requests/s is 86 million ids, 345 MB); the
// window shrinks again when it goes, the ring's capacity stays.
#pragma once

#include <cstdint>
#include <vector>

#include "model/core/assert.h"

namespace relaysim {

class DenseIdMap {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  // Whether `id` is newer than every id inserted so far, as insert() requires.
  bool accepts(std::uint64_t id) const { return id > newest_; }

  void insert(std::uint64_t id, std::uint32_t slot) {
    RELAYSIM_ASSERT(slot != kNone, "kNone is not a slot");
    RELAYSIM_ASSERT(accepts(id), "ids must be inserted in increasing order");
    newest_ = id;
    if (count_ == 0) base_ = id;
    while (base_ + count_ < id) push_back(kNone);  // ids skipped: unmapped
    push_back(slot);
    ++size_;
  }

  std::uint32_t find(std::uint64_t id) const {
    if (id < base_ || id - base_ >= count_) return kNone;
    return at(static_cast<std::size_t>(id - base_));
  }

  void erase(std::uint64_t id) {
    if (find(id) == kNone) return;
    at(static_cast<std::size_t>(id - base_)) = kNone;
    --size_;
    while (count_ > 0 && ring_[head_] == kNone) {  // the oldest went: the window shrinks
      head_ = (head_ + 1) & mask_;
      --count_;
      ++base_;
    }
  }

  std::size_t size() const { return size_; }

 private:
  // The window is a ring buffer (a power-of-two vector and the index of its oldest entry):
  // std::deque did the same with two divisions per lookup.
  std::uint32_t& at(std::size_t i) { return ring_[(head_ + i) & mask_]; }
  std::uint32_t at(std::size_t i) const { return ring_[(head_ + i) & mask_]; }
  void push_back(std::uint32_t v) {
    if (count_ == ring_.size()) {
      std::vector<std::uint32_t> bigger(ring_.empty() ? 64 : 2 * ring_.size(), kNone);
      for (std::size_t i = 0; i < count_; ++i) bigger[i] = at(i);
      ring_ = std::move(bigger);
      head_ = 0;
      mask_ = ring_.size() - 1;
    }
    at(count_++) = v;
  }

  std::vector<std::uint32_t> ring_;
  std::size_t head_ = 0;
  std::size_t mask_ = 0;
  std::size_t count_ = 0;   // ids in the window, base_ .. base_ + count_ - 1
  std::uint64_t base_ = 0;  // the oldest id in the window
  std::size_t size_ = 0;    // ids mapped
  std::uint64_t newest_ = 0;
};

}  // namespace relaysim
