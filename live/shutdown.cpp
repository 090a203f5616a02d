#include "live/shutdown.h"

#include <utility>

#include "model/core/assert.h"

namespace relaysim::live {

void Ticker::start(Duration every, std::function<void()> tick) {
  RELAYSIM_ASSERT(every > Duration::zero(), "a ticker ticks after some time");
  every_ = every;
  tick_ = std::move(tick);
  stopped_ = false;
  arm();
}

void Ticker::stop() {
  stopped_ = true;
  timer_.cancel();
}

void Ticker::arm() {
  timer_.expires_after(every_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    tick_();
    if (!stopped_) arm();
  });
}

void DrainWait::start(Duration timeout, std::function<std::uint32_t()> in_flight, std::function<void(std::uint32_t)> done) {
  until_ = clock_.now() + timeout;
  in_flight_ = std::move(in_flight);
  done_ = std::move(done);
  check();
}

void DrainWait::check() {
  const std::uint32_t left = in_flight_();
  if (left == 0 || clock_.now() >= until_) {
    std::function<void(std::uint32_t)> done = std::move(done_);
    if (done) done(left);
    return;
  }
  timer_.expires_after(std::chrono::milliseconds(20));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) check();
  });
}

}  // namespace relaysim::live
