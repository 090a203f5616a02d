#include "live/clock.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <utility>

#include "model/core/assert.h"

namespace relaysim::live {

void run_after(boost::asio::io_context& io, Duration delay, std::function<void()> action) {
  auto timer = std::make_shared<boost::asio::steady_timer>(io);
  timer->expires_after(std::max(delay, Duration::zero()));
  timer->async_wait([timer, action = std::move(action)](const boost::system::error_code&) { action(); });
}

std::uint64_t fresh_seed() {
  std::random_device device;
  return (std::uint64_t{device()} << 32) ^ device();
}

LiveClock::LiveClock() {
  // The wall clock's reading, paired with the steady clock's at the same moment: read between two
  // readings of the steady clock, and taken as read at their middle, it is off by at most half
  // their distance. A try that was interrupted (the process descheduled between the readings)
  // is read again.
  for (int tries = 0; tries < 10'000; ++tries) {
    const auto before = std::chrono::steady_clock::now();
    const auto wall = std::chrono::system_clock::now();
    const auto after = std::chrono::steady_clock::now();
    if (after - before <= kClockReadError) {
      wall_at_start_ = time_from_ns(std::chrono::duration_cast<Duration>(wall.time_since_epoch()).count());
      steady_at_start_ = before + (after - before) / 2;
      return;
    }
  }
  throw std::runtime_error("cannot read the wall clock against the steady clock within 500us: the machine is too loaded");
}

Time LiveClock::now() const {
  return wall_at_start_ + std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - steady_at_start_);
}

std::chrono::steady_clock::time_point LiveClock::steady(Time t) const {
  RELAYSIM_ASSERT(t != kTimeNever, "a time that comes");
  return steady_at_start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(t - wall_at_start_);
}

AsioTimers::~AsioTimers() {
  for (auto& [id, entry] : timers_) entry->timer.cancel();
}

TimerId AsioTimers::schedule_at(Time at, TimerCallback cb) {
  RELAYSIM_ASSERT(static_cast<bool>(cb), "a timer has a callback");
  const std::uint64_t id = next_++;
  auto entry = std::make_unique<Entry>(io_);
  entry->cb = std::move(cb);
  // A time already past still waits for the loop: the port promises never to run inline.
  entry->timer.expires_at(at == kTimeNever ? std::chrono::steady_clock::time_point::max() : clock_.steady(at));
  entry->timer.async_wait([this, id](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: its entry is gone
    const auto it = timers_.find(id);
    if (it == timers_.end()) return;
    TimerCallback run = std::move(it->second->cb);
    timers_.erase(it);
    run();
  });
  timers_.emplace(id, std::move(entry));
  return TimerId{id};
}

void AsioTimers::cancel(TimerId id) {
  const auto it = timers_.find(id.value);
  if (it == timers_.end()) return;
  it->second->timer.cancel();
  timers_.erase(it);
}

}  // namespace relaysim::live
