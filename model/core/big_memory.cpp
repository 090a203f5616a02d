#include "model/core/big_memory.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>

#include "model/core/sanitizers.h"

namespace relaysim {
namespace {

constexpr bool kOwnPages = !kAddressSanitizer;

// Whether a block of this size gets pages of its own. Decided by the size alone, so releasing a
// block takes the same path as allocating it did.
bool own_pages(std::size_t bytes, std::size_t alignment) {
  return kOwnPages && bytes >= kOwnPagesFrom && alignment <= kHugePageBytes;
}

std::size_t whole_pages(std::size_t bytes) { return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1); }

// A statistic only; sweeps allocate from several threads at once.
std::atomic<std::size_t> in_use{0};

}  // namespace

void* allocate_big(std::size_t bytes, std::size_t alignment) {
  if (!own_pages(bytes, alignment)) {
    return alignment > __STDCPP_DEFAULT_NEW_ALIGNMENT__ ? ::operator new(bytes, std::align_val_t{alignment})
                                                         : ::operator new(bytes);
  }
  const std::size_t size = whole_pages(bytes);
  // Map one huge page more than needed, then give back what lies outside the aligned block: the
  // kernel can only use a huge page for a 2 MiB-aligned range.
  void* mapped = ::mmap(nullptr, size + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t aligned = (start + kHugePageBytes - 1) & ~std::uintptr_t{kHugePageBytes - 1};
  if (aligned > start) ::munmap(mapped, aligned - start);
  const std::uintptr_t tail = start + size + kHugePageBytes - (aligned + size);
  if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + size), tail);
  void* block = reinterpret_cast<void*>(aligned);
  in_use.fetch_add(size, std::memory_order_relaxed);
#ifdef MADV_HUGEPAGE
  ::madvise(block, size, MADV_HUGEPAGE);  // a hint: if refused, the block is ordinary memory
#endif
  return block;
}

void release_big(void* block, std::size_t bytes, std::size_t alignment) noexcept {
  if (block == nullptr) return;
  if (!own_pages(bytes, alignment)) {
    if (alignment > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      ::operator delete(block, std::align_val_t{alignment});  // unsized: clang does not declare the sized ones by default
    } else {
      ::operator delete(block);
    }
    return;
  }
  ::munmap(block, whole_pages(bytes));
  in_use.fetch_sub(whole_pages(bytes), std::memory_order_relaxed);
}

std::size_t big_pages_in_use() { return in_use.load(std::memory_order_relaxed); }

}  // namespace relaysim
