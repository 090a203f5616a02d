// SlotPool: a growable table of reusable slots addressed by index.
//
// This is how relaysim avoids allocating per event or per call: a callback captures a slot index
// (small, trivially copyable) instead of owning its state, and a released slot is reused by the
// next acquire. The table only grows to the peak number of slots in use at once.
#pragma once

#include <bit>
#include <cstdint>
#include <new>
#include <vector>

#include "model/core/assert.h"
#include "model/core/big_memory.h"

namespace relaysim {

// StableVector: the part of std::vector a SlotPool uses, in chunks that are allocated once and
// never move, so a reference to an element stays valid while elements are added — the kernel runs
// an event's action where it is stored while the action schedules more.
//
// The first chunk holds 2^ChunkBits elements and each next one twice the one before, until a
// chunk would fill a huge page (2 MiB, model/core/big_memory.h); from there on every chunk is as
// many elements as fit in one. So a small run (a sweep makes thousands) stays small, a run of
// millions of rows has its rows on huge pages, and at most one page's worth is allocated ahead of
// need. An element is constructed when it is added.
template <class T, unsigned ChunkBits = 8>
class StableVector {
 public:
  StableVector() = default;
  StableVector(const StableVector&) = delete;
  StableVector& operator=(const StableVector&) = delete;
  ~StableVector() {
    for (std::size_t i = 0; i < size_; ++i) (*this)[i].~T();
    for (std::size_t c = 0; c < chunks_.size(); ++c) release_big(chunks_[c], chunk_size(c) * sizeof(T), alignof(T));
  }

  T& emplace_back() {
    RELAYSIM_ASSERT(size_ < kMaxSize, "a StableVector holds fewer than 2^32 elements");
    const Place p = place(size_);
    if (p.chunk == chunks_.size()) {
      chunks_.push_back(static_cast<T*>(allocate_big(chunk_size(p.chunk) * sizeof(T), alignof(T))));
    }
    T* item = ::new (static_cast<void*>(chunks_[p.chunk] + p.offset)) T();
    ++size_;
    return *item;
  }
  T& operator[](std::size_t i) {
    const Place p = place(i);
    return chunks_[p.chunk][p.offset];
  }
  const T& operator[](std::size_t i) const {
    const Place p = place(i);
    return chunks_[p.chunk][p.offset];
  }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kFirst = std::size_t{1} << ChunkBits;
  // Elements in each big chunk: as many as fill one huge page (at least the first chunk's).
  static constexpr std::size_t kBig = kHugePageBytes / sizeof(T) > kFirst ? kHugePageBytes / sizeof(T) : kFirst;
  // How many growing chunks come before the big ones: those smaller than a big one.
  static constexpr unsigned kDoublings = [] {
    unsigned d = 0;
    while ((kFirst << d) < kBig) ++d;
    return d;
  }();
  static constexpr std::size_t kBeforeBig = kFirst * ((std::size_t{1} << kDoublings) - 1);  // their elements
  static constexpr std::size_t kMaxSize = std::size_t{UINT32_MAX};
  static constexpr auto kBig32 = static_cast<std::uint32_t>(kBig);
  struct Place {
    std::size_t chunk;
    std::size_t offset;
  };
  // Growing chunk c holds the elements from kFirst * (2^c - 1) on, so element i is in the chunk
  // named by the top bit of i + kFirst; after them come the big chunks, kBig elements each.
  // In 32 bits (every index is below kMaxSize): dividing by kBig, which is rarely a power of two,
  // is then one multiplication, not a 64-bit one with a correction (tables index their rows
  // dozens of times per request).
  static Place place(std::size_t i) {
    if (i >= kBeforeBig) {
      const auto k = static_cast<std::uint32_t>(i - kBeforeBig);
      return {kDoublings + k / kBig32, k % kBig32};
    }
    const std::size_t j = i + kFirst;
    const auto c = static_cast<std::size_t>(std::bit_width(j)) - 1 - ChunkBits;
    return {c, j - (kFirst << c)};
  }
  static std::size_t chunk_size(std::size_t c) { return c < kDoublings ? kFirst << c : kBig; }

  std::vector<T*> chunks_;
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
  std::vector<std::uint32_t, BigAllocator<std::uint32_t>> free_;
};

// A SlotPool whose slots never move (and whose growth never copies them).
template <class T, unsigned ChunkBits = 8>
using StableSlotPool = SlotPool<T, StableVector<T, ChunkBits>>;

}  // namespace relaysim
