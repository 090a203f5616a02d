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

#include "model/core/assert.h"
#include "model/core/ring.h"

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
    if (window_.empty()) base_ = id;
    while (base_ + window_.size() < id) window_.push_back(kNone);  // ids skipped: unmapped
    window_.push_back(slot);
    ++size_;
  }

  std::uint32_t find(std::uint64_t id) const {
    if (id < base_ || id - base_ >= window_.size()) return kNone;
    return window_[static_cast<std::size_t>(id - base_)];
  }

  void erase(std::uint64_t id) {
    if (find(id) == kNone) return;
    window_[static_cast<std::size_t>(id - base_)] = kNone;
    --size_;
    while (!window_.empty() && window_.front() == kNone) {  // the oldest went: the window shrinks
      window_.pop_front();
      ++base_;
    }
  }

  std::size_t size() const { return size_; }

 private:
  Ring<std::uint32_t> window_;  // slots of the ids base_ .. base_ + window_.size() - 1
  std::uint64_t base_ = 0;      // the oldest id in the window
  std::size_t size_ = 0;        // ids mapped
  std::uint64_t newest_ = 0;
};

}  // namespace relaysim
