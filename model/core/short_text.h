// Short texts made of literals and decimal numbers, built on the stack.
//
// Why: the simulator formats several numbers per request (the load generator's keys and
// payloads, the webhook-id header, ServiceB's URLs). `s.append(std::to_string(n))` builds and
// destroys a string per number and pays std::string's bookkeeping per piece; a ShortText
// takes the pieces with plain copies and hands the result to its destination in one assign.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "model/core/assert.h"

namespace relaysim {

template <std::size_t Capacity>
class ShortText {
 public:
  ShortText& operator<<(std::string_view text) {
    RELAYSIM_ASSERT(text.size() <= Capacity - size_, "ShortText overflow");
    std::memcpy(buf_ + size_, text.data(), text.size());
    size_ += text.size();
    return *this;
  }
  ShortText& operator<<(std::uint64_t n) {
    RELAYSIM_ASSERT(Capacity - size_ >= 20, "ShortText overflow");  // 2^64 has 20 decimal digits
    size_ = static_cast<std::size_t>(std::to_chars(buf_ + size_, buf_ + Capacity, n).ptr - buf_);
    return *this;
  }
  std::string_view view() const { return {buf_, size_}; }

 private:
  char buf_[Capacity];
  std::size_t size_ = 0;
};

}  // namespace relaysim
