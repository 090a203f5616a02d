// KeyValue: the port to a shared key-value store with atomic operations — Redis, as the SMS
// gateway's rate limiters and dedup use it. No system uses it yet: the SMS gateway brings the
// simulated one (sim/world/, with latency, down windows and restarts that lose data) and the live
// one (hiredis).
//
// Promises: each call is atomic on the store (a check-and-add cannot interleave with another
// client's); every call can fail — the store is down, or the call timed out — and then the caller
// cannot know whether it took effect unless the call says so; answers come by callback, never
// inline.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/core/function.h"
#include "model/core/time.h"

namespace relaysim {

enum class KvStatus : std::uint8_t { ok, unavailable, timeout };

struct WindowAdmission {
  KvStatus status = KvStatus::unavailable;
  bool admitted = false;      // the member was added: the window had room
  std::uint64_t in_window = 0;  // members in the window after the call
};

class KeyValue {
 public:
  virtual ~KeyValue() = default;
  using WindowCallback = InplaceFunction<void(const WindowAdmission&), 48>;
  // A sliding-window log (a sorted set of members scored by time): drops members older than
  // `now - window`, then adds `member` at `now` only if fewer than `limit` remain. Members are
  // unique; a blocked call records nothing.
  virtual void window_add(std::string_view key, std::string_view member, Time now, Duration window,
                          std::uint64_t limit, Duration timeout, WindowCallback done) = 0;
};

}  // namespace relaysim
