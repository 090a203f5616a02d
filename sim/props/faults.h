// The spine's faults — pods crashing and pausing, the store failing (sim/scenario/scenario.h) —
// drawn the same way by every system's scenario generator. Each system gives the shape that fits
// its cases' time scale (a webhook case's faults spread over four minutes, an outbox case's over
// a minute and a half); what is drawn, in which order, and what it means is the same for all.
// Inside rc::gen::exec only (the draws use its `*gen`).
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>

#include "model/core/assert.h"
#include "model/core/time.h"
#include "sim/props/draw.h"
#include "sim/scenario/scenario.h"

namespace relaysim::props {

// When a fault may come and how long it may last, in whole seconds: it starts 0 to `latest_s`
// after the run's start and lasts `shortest_s` to `longest_s`.
struct FaultShape {
  std::int64_t latest_s = 0;
  std::int64_t shortest_s = 1;
  std::int64_t longest_s = 1;
};

inline sim::Window draw_window(const FaultShape& shape) {
  RELAYSIM_ASSERT(shape.shortest_s <= shape.longest_s, "a fault's shortest length is at most its longest");
  const Time start = Time{} + sec(0, shape.latest_s);
  return {start, sec(shape.shortest_s, shape.longest_s)};
}

// How a store call fails while a store fault lasts.
inline StoreFailure draw_failure() { return *rc::gen::element(StoreFailure::busy, StoreFailure::full, StoreFailure::io); }

// One to `most` pod crashes (pods 0 to `pods` - 1); each pod comes back `shape`'s length later,
// for the heal phase needs a platform to heal. `during_write()` says whether a crash comes in the
// middle of a store write. Returns when the last crashed pod is back (the epoch with none).
template <class DuringWrite>
Time draw_crashes(sim::Scenario& s, std::uint32_t pods, const FaultShape& shape, int most, DuringWrite&& during_write) {
  RELAYSIM_ASSERT(pods >= 1 && most >= 1, "crashes need a pod, and at least one is drawn");
  Time last{};
  for (int k = *rc::gen::inRange(1, most + 1); k > 0; --k) {
    sim::CrashFault c;
    c.at = Time{} + sec(0, shape.latest_s);
    c.pod = *rc::gen::inRange(0U, pods);
    c.restart_after = sec(shape.shortest_s, shape.longest_s);
    c.during_write = during_write();
    s.crashes.push_back(c);
    last = std::max(last, c.at + c.restart_after);
  }
  return last;
}

// One to `most` pod pauses, each 0 to `latest_s` after the start, as long as `length()` draws.
// Returns when the last one ends.
template <class Length>
Time draw_pauses(sim::Scenario& s, std::uint32_t pods, std::int64_t latest_s, int most, Length&& length) {
  RELAYSIM_ASSERT(pods >= 1 && most >= 1, "pauses need a pod, and at least one is drawn");
  Time last{};
  for (int k = *rc::gen::inRange(1, most + 1); k > 0; --k) {
    sim::PauseFault f;
    f.at = Time{} + sec(0, latest_s);
    f.pod = *rc::gen::inRange(0U, pods);
    f.length = length();
    s.pauses.push_back(f);
    last = std::max(last, f.at + f.length);
  }
  return last;
}

// One or two windows of the store failing. Returns when the last one ends.
inline Time draw_store_faults(sim::Scenario& s, const FaultShape& shape) {
  Time last{};
  for (int k = *rc::gen::inRange(1, 3); k > 0; --k) {
    sim::StoreFault f;
    f.window = draw_window(shape);
    f.failure = draw_failure();
    s.store_faults.push_back(f);
    last = std::max(last, f.window.end());
  }
  return last;
}

}  // namespace relaysim::props
