#include "sim/world/store_faults.h"

#include <algorithm>

namespace relaysim::sim {

StoreFaults::StoreFaults(const Scenario& s) : windows_(s.store_faults) {
  for (const CrashFault& c : s.crashes) {
    if (c.during_write) crashes_.push_back(c);
  }
}

std::optional<StoreFailure> StoreFaults::failure(Time now, bool writes) const {
  for (const StoreFault& f : windows_) {
    if (!f.window.contains(now)) continue;
    if (f.failure == StoreFailure::full && !writes) continue;  // a full disk still reads
    return f.failure;
  }
  return std::nullopt;
}

std::optional<CrashFault> StoreFaults::take_crash(std::uint32_t pod, Time now) {
  for (auto it = crashes_.begin(); it != crashes_.end(); ++it) {
    if (it->pod == pod && it->at <= now) {
      const CrashFault c = *it;
      crashes_.erase(it);
      return c;
    }
  }
  return std::nullopt;
}

std::vector<std::string> StoreFaults::never_happened(Time end) const {
  std::vector<std::string> out;
  for (const CrashFault& c : crashes_) {
    if (c.at >= end) continue;  // the run ended (or was cut short) first
    out.push_back("pod-" + std::to_string(c.pod) + " was to crash in the middle of a write at " +
                  format_time(c.at) + " or later, but it wrote nothing after that: the crash never happened");
  }
  return out;
}

Duration StoreFaults::downtime(Time from, Time to) const {
  // Overlapping windows count once: walk them in order of start, merging.
  std::vector<std::pair<Time, Time>> spans;
  for (const StoreFault& f : windows_) {
    const Time lo = std::max(f.window.at, from);
    const Time hi = std::min(f.window.end(), to);
    if (hi > lo) spans.emplace_back(lo, hi);
  }
  std::sort(spans.begin(), spans.end());
  Duration total{};
  Time covered = from;
  for (const auto& [lo, hi] : spans) {
    const Time start = std::max(lo, covered);
    if (hi > start) total += hi - start;
    covered = std::max(covered, hi);
  }
  return total;
}

}  // namespace relaysim::sim
