// What every serve process does on its loop besides its API: looking for work the processes
// sharing its database made due (a Ticker), and stopping — no new work, then waiting until what
// it started is done or a timeout has passed (a DrainWait).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>

#include "model/core/ports.h"

namespace relaysim::live {

// Calls `tick` every `every` on the loop until stopped.
class Ticker {
 public:
  explicit Ticker(boost::asio::io_context& io) : timer_(io) {}
  void start(Duration every, std::function<void()> tick);
  void stop();

 private:
  void arm();

  boost::asio::steady_timer timer_;
  Duration every_{};
  std::function<void()> tick_;
  bool stopped_ = true;
};

// Waits, on the loop, for a process's work in flight to end.
class DrainWait {
 public:
  DrainWait(boost::asio::io_context& io, const Clock& clock) : timer_(io), clock_(clock) {}
  // Calls `done(left)` once, when `in_flight()` is zero or `timeout` has passed (`left` is what
  // was still in flight). Completions arrive on the loop and nothing tells the shell of the
  // last, so it looks in small steps.
  void start(Duration timeout, std::function<std::uint32_t()> in_flight, std::function<void(std::uint32_t)> done);

 private:
  void check();

  boost::asio::steady_timer timer_;
  const Clock& clock_;
  Time until_{};
  std::function<std::uint32_t()> in_flight_;
  std::function<void(std::uint32_t)> done_;
};

}  // namespace relaysim::live
