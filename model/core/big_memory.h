// Big memory: the blocks behind the tables that grow with a run's open work, on huge pages.
//
// Why: a long run holds gigabytes of rows, queues and indexes and visits them at random. In 4 KiB
// pages every visit misses the TLB and each new page faults once: the on-call scenario
// (scenarios/capacity-serviceb-45m.yaml, 3 GiB) spent about a fifth of its time there. A block of
// 1 MiB or more is mapped on its own, in whole 2 MiB pages aligned to 2 MiB and marked
// MADV_HUGEPAGE, so a kernel whose transparent huge pages are `always` or `madvise` (Debian's
// default) backs it with huge pages. Where the kernel says `never`, the block is ordinary memory
// and nothing else changes. A block wastes at most one huge page's worth at its end, and none if
// it is a whole number of pages (as StableVector's big chunks are).
//
// Promises: what is allocated here behaves as `operator new` memory would (the same alignment,
// freed with the size it was allocated with); it changes no result, only where the bytes are.
// Under AddressSanitizer every block comes from `operator new`, so overflows are still caught.
#pragma once

#include <cstddef>
#include <new>

namespace relaysim {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
// Blocks at least this big get pages of their own.
inline constexpr std::size_t kOwnPagesFrom = kHugePageBytes / 2;

void* allocate_big(std::size_t bytes, std::size_t alignment);
void release_big(void* block, std::size_t bytes, std::size_t alignment) noexcept;
// Bytes held now in blocks with pages of their own (whole huge pages), over every thread: what
// the heap's own statistics (mallinfo2) do not see.
std::size_t big_pages_in_use();

// A standard allocator over allocate_big, for the vectors behind growing tables.
template <class T>
struct BigAllocator {
  using value_type = T;
  BigAllocator() = default;
  template <class U>
  BigAllocator(const BigAllocator<U>&) noexcept {}  // NOLINT: rebinding converts implicitly

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_big(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { release_big(p, n * sizeof(T), alignof(T)); }

  template <class U>
  bool operator==(const BigAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace relaysim
