// InplaceFunction: a move-only callable stored inside the object, never on the heap.
//
// Every timer, event and port callback in relaysim is one of these. A std::function may allocate
// when its captures outgrow a small buffer; a simulator that runs tens of millions of events per
// second cannot afford that, so capacity is a compile-time bound and oversize captures do not
// compile (capture an index into a preallocated table instead).
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "model/core/assert.h"

namespace relaysim {

template <class Signature, std::size_t Capacity = 48>
class InplaceFunction;

template <class R, class... Args, std::size_t Capacity>
class InplaceFunction<R(Args...), Capacity> {
 public:
  InplaceFunction() noexcept = default;

  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, InplaceFunction> &&
             std::is_invocable_r_v<R, std::remove_cvref_t<F>&, Args...>)
  InplaceFunction(F&& f) noexcept {  // NOLINT: implicit on purpose, like std::function
    using Fn = std::remove_cvref_t<F>;
    static_assert(sizeof(Fn) <= Capacity, "capture too large for InplaceFunction: capture an index");
    static_assert(alignof(Fn) <= alignof(std::max_align_t), "over-aligned capture");
    static_assert(std::is_nothrow_move_constructible_v<Fn>, "captures must be nothrow-movable");
    ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
    invoke_ = [](void* self, Args&&... args) -> R {
      return (*static_cast<Fn*>(self))(std::forward<Args>(args)...);
    };
    manage_ = [](void* dst, void* src) noexcept {
      Fn* from = static_cast<Fn*>(src);
      if (dst != nullptr) ::new (dst) Fn(std::move(*from));
      from->~Fn();
    };
  }

  InplaceFunction(InplaceFunction&& other) noexcept { take(other); }
  InplaceFunction& operator=(InplaceFunction&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  InplaceFunction(const InplaceFunction&) = delete;
  InplaceFunction& operator=(const InplaceFunction&) = delete;
  ~InplaceFunction() { reset(); }

  explicit operator bool() const noexcept { return invoke_ != nullptr; }

  R operator()(Args... args) {
    RELAYSIM_ASSERT(invoke_ != nullptr, "calling an empty InplaceFunction");
    return invoke_(storage_, std::forward<Args>(args)...);
  }

  void reset() noexcept {
    if (manage_ != nullptr) manage_(nullptr, storage_);
    invoke_ = nullptr;
    manage_ = nullptr;
  }

 private:
  void take(InplaceFunction& other) noexcept {
    if (other.manage_ == nullptr) return;
    other.manage_(storage_, other.storage_);
    invoke_ = other.invoke_;
    manage_ = other.manage_;
    other.invoke_ = nullptr;
    other.manage_ = nullptr;
  }

  // The call's pointer comes first: a small capture then shares its cache line.
  R (*invoke_)(void*, Args&&...) = nullptr;
  void (*manage_)(void*, void*) noexcept = nullptr;
  alignas(std::max_align_t) unsigned char storage_[Capacity];
};

}  // namespace relaysim
