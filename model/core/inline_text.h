// InlineText: an immutable string of up to 4 GiB that keeps up to 32 bytes inside itself.
//
// Why: MemoryStore keeps a request's cxid, request_id and payload together. With std::string
// (32 bytes, 15 inline) almost every request's text took a separate allocation — another cache
// miss on every read, a malloc on create and a free when the request is forgotten. Short texts
// (webhook keys and small payloads) now live in the row itself; longer ones take one allocation.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

#include "model/core/assert.h"

namespace relaysim {

class InlineText {
 public:
  static constexpr std::size_t kInline = 32;

  InlineText() = default;
  InlineText(const InlineText&) = delete;
  InlineText& operator=(const InlineText&) = delete;
  InlineText(InlineText&& o) noexcept { take(o); }
  InlineText& operator=(InlineText&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~InlineText() { release(); }

  // Replaces the text with the concatenation of `parts`.
  template <class... Parts>
  void assign(const Parts&... parts) {
    release();
    const std::size_t total = (std::string_view(parts).size() + ... + 0);
    RELAYSIM_ASSERT(total <= UINT32_MAX, "an InlineText holds at most 4 GiB");
    size_ = static_cast<std::uint32_t>(total);
    char* p = size_ <= kInline ? local_ : (heap_ = new char[size_]);
    ((std::memcpy(p, std::string_view(parts).data(), std::string_view(parts).size()),
      p += std::string_view(parts).size()),
     ...);
  }
  void clear() { release(); }

  std::string_view view() const { return {size_ <= kInline ? local_ : heap_, size_}; }
  std::size_t size() const { return size_; }

 private:
  void release() {
    if (size_ > kInline) delete[] heap_;
    size_ = 0;
  }
  void take(InlineText& o) {
    size_ = o.size_;
    if (size_ <= kInline) {
      std::memcpy(local_, o.local_, size_);
    } else {
      heap_ = o.heap_;
    }
    o.size_ = 0;
  }

  union {
    char local_[kInline];
    char* heap_;
  };
  std::uint32_t size_ = 0;
};

}  // namespace relaysim
