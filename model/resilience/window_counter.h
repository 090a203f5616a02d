// WindowCounter: calls and failures over a sliding time window, kept in ten buckets so it costs a
// fixed few hundred bytes however many calls there are. The circuit breaker judges a service by
// it; provider routing by error rate and the SMS gateway's sync-to-async rules judge providers by
// it too.
//
// Promises:
//  - `totals(now)` counts what was added in the last `window`, give or take one bucket (a tenth of
//    the window): a bucket is dropped whole once it is older than the window.
//  - `now` must not go back between calls.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "model/core/assert.h"
#include "model/core/time.h"

namespace relaysim {

struct WindowTotals {
  std::uint32_t calls = 0;
  std::uint32_t failures = 0;
  double failure_rate() const { return calls == 0 ? 0.0 : static_cast<double>(failures) / calls; }
};

class WindowCounter {
 public:
  static constexpr std::size_t kBuckets = 10;

  explicit WindowCounter(Duration window)
      : bucket_ns_(std::max<std::int64_t>(1, to_ns(window) / static_cast<std::int64_t>(kBuckets))) {
    RELAYSIM_ASSERT(window > Duration::zero(), "a window must be positive");
  }

  void add(Time now, bool failed) {
    Bucket& b = bucket_for(now);
    ++b.totals.calls;
    if (failed) ++b.totals.failures;
  }

  WindowTotals totals(Time now) const {
    const std::int64_t newest = to_ns(now) / bucket_ns_;
    WindowTotals sum;
    for (const Bucket& b : buckets_) {
      if (b.index >= 0 && b.index > newest - static_cast<std::int64_t>(kBuckets)) {
        sum.calls += b.totals.calls;
        sum.failures += b.totals.failures;
      }
    }
    return sum;
  }

  void clear() { buckets_.fill(Bucket{}); }

 private:
  struct Bucket {
    std::int64_t index = -1;
    WindowTotals totals;
  };

  Bucket& bucket_for(Time now) {
    const std::int64_t index = to_ns(now) / bucket_ns_;
    Bucket& b = buckets_[static_cast<std::size_t>(index) % kBuckets];
    if (b.index != index) b = Bucket{index, {}};
    return b;
  }

  std::int64_t bucket_ns_;
  std::array<Bucket, kBuckets> buckets_{};
};

}  // namespace relaysim
