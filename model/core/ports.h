// Ports: the only ways the model touches the outside world. This header holds the ports every
// system uses (time and timers); model/core/http.h is the HTTP client; a system's own ports live
// in its folder (model/webhook/ports.h: ServiceB's URL directory).
//
// The simulator (sim/) implements them in virtual time with seeded faults; the live shell (live/)
// implements them with Boost.Asio and Beast. Every asynchronous port promises to call its callback
// exactly once, never before the call that started it has returned to the shell's event loop
// unless documented otherwise, and to enforce the timeout it was given.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/core/function.h"
#include "model/core/time.h"

namespace relaysim {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time now() const = 0;
};

struct TimerId {
  std::uint64_t value = 0;  // 0 means "no timer"
  explicit operator bool() const { return value != 0; }
};

using TimerCallback = InplaceFunction<void(), 48>;

class Timers {
 public:
  virtual ~Timers() = default;
  // Runs `cb` at `at` (or at once, in order, if `at` is already past). Never runs it inline.
  virtual TimerId schedule_at(Time at, TimerCallback cb) = 0;
  // Cancels a pending timer; cancelling a fired or unknown timer does nothing.
  virtual void cancel(TimerId id) = 0;
};

}  // namespace relaysim
