// Running a test's Asio loop: for a while, or until an answer has come. The bounds are how long a
// broken test may hang, not timing checks.
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>

#include "model/core/time.h"

namespace relaysim::testing_loop {

// Runs `io` for `d` (answers arrive meanwhile).
inline void run_for(boost::asio::io_context& io, Duration d) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(d);
  while (std::chrono::steady_clock::now() < end) {
    if (io.stopped()) io.restart();  // it stops whenever it runs out of work
    io.run_one_until(end);
  }
}

// Runs `io` until `done` is true, for twenty seconds at most; returns `done`.
inline bool run_until(boost::asio::io_context& io, const bool& done) {
  for (int turns = 0; !done && turns < 400; ++turns) {
    if (io.stopped()) io.restart();
    io.run_one_for(std::chrono::milliseconds(50));
  }
  return done;
}

}  // namespace relaysim::testing_loop
