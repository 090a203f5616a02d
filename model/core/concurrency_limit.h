// ConcurrencyLimit: a pod's concurrency — at most `limit` pieces of work at once (a webhook
// dispatcher's deliveries, an SMS node's async sends, an outbox consumer's handlings), with the
// busy time integrated by a BusyMeter so the utilisation over any window can be read. Every
// system's pod holds its limit in one of these, set from its `concurrency_per_pod` key.
#pragma once

#include <cstdint>

#include "model/core/assert.h"
#include "model/core/busy_meter.h"
#include "model/core/time.h"

namespace relaysim {

class ConcurrencyLimit {
 public:
  explicit ConcurrencyLimit(std::uint32_t limit) : limit_(limit) {
    RELAYSIM_ASSERT(limit >= 1, "a pod's concurrency is at least 1");
  }

  // Whether one more piece of work may start.
  bool has_room() const { return meter_.busy() < limit_; }
  // A piece of work starts, or ends, at `now` (never earlier than the last change).
  void take(Time now) {
    RELAYSIM_ASSERT(has_room(), "work starts only while the limit has room");
    meter_.start(now);
  }
  void release(Time now) { meter_.stop(now); }

  std::uint32_t busy() const { return meter_.busy(); }
  std::uint32_t limit() const { return limit_; }
  // Busy slot-time from the start until `now`.
  Duration busy_time(Time now) const { return meter_.busy_time(now); }

 private:
  std::uint32_t limit_;
  BusyMeter meter_;
};

}  // namespace relaysim
