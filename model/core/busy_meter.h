// BusyMeter: how many of a pool's workers are busy, and the busy worker-time integrated up to any
// moment — so the utilisation over any window is the difference of two readings divided by the
// window and the pool's size, however often work starts and ends inside it. Both shells read it:
// the simulator's time series, and the live service's metrics.
#pragma once

#include <cstdint>

#include "model/core/assert.h"
#include "model/core/time.h"

namespace relaysim {

class BusyMeter {
 public:
  // A worker becomes busy, or free, at `now` (never earlier than the last change).
  void start(Time now) {
    settle(now);
    ++busy_;
  }
  void stop(Time now) {
    RELAYSIM_ASSERT(busy_ > 0, "a worker is freed only after it was taken");
    settle(now);
    --busy_;
  }
  std::uint32_t busy() const { return busy_; }
  // Worker-time spent busy from the start until `now`.
  Duration busy_time(Time now) const {
    RELAYSIM_ASSERT(now >= last_, "the meter is read at or after its last change");
    return area_ + static_cast<std::int64_t>(busy_) * (now - last_);
  }

 private:
  void settle(Time now) {
    area_ = busy_time(now);
    last_ = now;
  }

  std::uint32_t busy_ = 0;
  Time last_{};
  Duration area_{};
};

}  // namespace relaysim
