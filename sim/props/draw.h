// Small draws every system's scenario generator makes: a duration in a range of milliseconds or
// seconds, and a percentage as a fraction. Inside rc::gen::exec only (they use its `*gen`).
#pragma once

#include <rapidcheck.h>

#include <chrono>
#include <cstdint>

#include "model/core/time.h"

namespace relaysim::props {

inline Duration ms(std::int64_t lo, std::int64_t hi) {
  return std::chrono::milliseconds(*rc::gen::inRange<std::int64_t>(lo, hi + 1));
}
inline Duration sec(std::int64_t lo, std::int64_t hi) {
  return std::chrono::seconds(*rc::gen::inRange<std::int64_t>(lo, hi + 1));
}
inline double percent(int lo, int hi) { return *rc::gen::inRange(lo, hi + 1) / 100.0; }

}  // namespace relaysim::props
