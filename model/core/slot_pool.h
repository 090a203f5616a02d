// SlotPool: a growable table of reusable slots addressed by index.
//
// This is how relaysim avoids allocating per event or per call: a callback captures a slot index
// (small, trivially copyable) instead of owning its state, and a released slot is reused by the
// next acquire. The table only grows to the peak number of slots in use at once.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/core/assert.h"

namespace relaysim {

// StableVector: the part of std::vector a SlotPool uses, in chunks of 2^ChunkBits elements that are
// allocated once and never move, so a reference to an element stays valid while elements are
// added — the kernel runs an event's action where it is stored while the action schedules more.
template <class T, unsigned ChunkBits = 8>
class StableVector {
 public:
  T& emplace_back() {
    if ((size_ >> ChunkBits) == chunks_.size()) chunks_.push_back(std::make_unique<T[]>(kChunk));
    ++size_;
    return (*this)[size_ - 1];
  }
  T& operator[](std::size_t i) { return chunks_[i >> ChunkBits][i & (kChunk - 1)]; }
  const T& operator[](std::size_t i) const { return chunks_[i >> ChunkBits][i & (kChunk - 1)]; }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << ChunkBits;
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

template <class T, class Storage = std::vector<T>>
class SlotPool {
 public:
  std::uint32_t acquire() {
    if (!free_.empty()) {
      const std::uint32_t i = free_.back();
      free_.pop_back();
      return i;
    }
    items_.emplace_back();
    return static_cast<std::uint32_t>(items_.size() - 1);
  }
  void release(std::uint32_t i) {
    RELAYSIM_ASSERT(i < items_.size(), "a released slot is one of the pool's");
    free_.push_back(i);
  }
  T& operator[](std::uint32_t i) { return items_[i]; }
  const T& operator[](std::uint32_t i) const { return items_[i]; }
  std::size_t size() const { return items_.size(); }

 private:
  Storage items_;
  std::vector<std::uint32_t> free_;
};

// A SlotPool whose slots never move (and whose growth never copies them).
template <class T, unsigned ChunkBits = 8>
using StableSlotPool = SlotPool<T, StableVector<T, ChunkBits>>;

}  // namespace relaysim
