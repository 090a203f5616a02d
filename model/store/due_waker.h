// DueWaker: the one timer a pod's delivery loop sleeps on — "wake me when the store's next work
// falls due, or when I may ask a failing store again" — so the loop never polls. Both systems'
// loops (the webhook Dispatcher, the SMS Node) arm it after each pass.
#pragma once

#include <algorithm>
#include <optional>

#include "model/core/assert.h"
#include "model/core/function.h"
#include "model/core/ports.h"

namespace relaysim {

class DueWaker {
 public:
  using Wake = InplaceFunction<void(), 16>;
  DueWaker(Timers& timers, Wake wake) : timers_(timers), wake_(std::move(wake)) {
    RELAYSIM_ASSERT(static_cast<bool>(wake_), "a waker has a loop to wake");
  }
  ~DueWaker() {
    if (timer_) timers_.cancel(timer_);
  }
  DueWaker(const DueWaker&) = delete;
  DueWaker& operator=(const DueWaker&) = delete;

  // After a pass at `now`: with the store left alone until `store_retry_at` (after a failed
  // call), wake then; otherwise wake when `next_due` comes (at once if it is past), or not at all
  // when nothing is due. A wake already armed at or before that time stays.
  void arm(Time now, Time store_retry_at, std::optional<Time> next_due) {
    if (now >= store_retry_at && !next_due) return;
    const Time at = now < store_retry_at ? store_retry_at : std::max(*next_due, now);
    if (timer_ && at_ <= at) return;
    if (timer_) timers_.cancel(timer_);
    at_ = at;
    timer_ = timers_.schedule_at(at, [this] {
      timer_ = TimerId{};
      at_ = kTimeNever;
      wake_();
    });
  }

 private:
  Timers& timers_;
  Wake wake_;
  TimerId timer_{};
  Time at_ = kTimeNever;
};

}  // namespace relaysim
