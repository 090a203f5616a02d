// Ring: a FIFO queue in one power-of-two vector, indexed from its oldest element.
//
// Why not std::deque: a deque finds an element with two divisions and a pointer chase, and
// allocates a block as it moves; a ring indexes with a mask and stops allocating once it has
// grown to its peak size.
#pragma once

#include <cstddef>
#include <vector>

#include "model/core/assert.h"
#include "model/core/big_memory.h"

namespace relaysim {

template <class T>
class Ring {
 public:
  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }

  // i counts from the oldest element.
  T& operator[](std::size_t i) { return items_[(head_ + i) & mask_]; }
  const T& operator[](std::size_t i) const { return items_[(head_ + i) & mask_]; }
  T& front() {
    RELAYSIM_ASSERT(count_ > 0, "an empty ring has no front");
    return items_[head_];
  }
  const T& front() const {
    RELAYSIM_ASSERT(count_ > 0, "an empty ring has no front");
    return items_[head_];
  }
  T& back() {
    RELAYSIM_ASSERT(count_ > 0, "an empty ring has no back");
    return (*this)[count_ - 1];
  }
  const T& back() const {
    RELAYSIM_ASSERT(count_ > 0, "an empty ring has no back");
    return (*this)[count_ - 1];
  }

  void push_back(const T& v) {
    if (count_ == items_.size()) grow();
    (*this)[count_++] = v;
  }
  void pop_front() {
    RELAYSIM_ASSERT(count_ > 0, "nothing to pop from an empty ring");
    head_ = (head_ + 1) & mask_;
    --count_;
  }

 private:
  void grow() {
    Items bigger(items_.empty() ? 64 : 2 * items_.size());
    for (std::size_t i = 0; i < count_; ++i) bigger[i] = (*this)[i];
    items_ = std::move(bigger);
    head_ = 0;
    mask_ = items_.size() - 1;
  }

  using Items = std::vector<T, BigAllocator<T>>;
  Items items_;
  std::size_t head_ = 0;
  std::size_t mask_ = 0;
  std::size_t count_ = 0;
};

}  // namespace relaysim
