#include "sim/report/backlog.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "model/core/assert.h"
#include "sim/scenario/scenario.h"

namespace relaysim::sim {

namespace {
// How far back the level a backlog drains to is averaged: long enough to smooth the load's own
// noise, short enough to be the level just before the fault.
constexpr Duration kLevelSpan = std::chrono::minutes(5);
}  // namespace

double Drain::seconds() const {
  return drained_by_end() ? to_seconds(drained - fault_end) : std::numeric_limits<double>::infinity();
}

Duration BacklogTrace::step_for(Duration run_length) {
  return std::max<Duration>(std::chrono::seconds(1), run_length / 100'000);
}

BacklogTrace::BacklogTrace(Duration run_length) : step_(step_for(run_length)) {
  samples_.reserve(static_cast<std::size_t>(std::min<std::int64_t>(run_length / step_ + 1, 200'000)));
}

std::uint64_t BacklogTrace::peak() const {
  return samples_.empty() ? 0 : *std::max_element(samples_.begin(), samples_.end());
}

double BacklogTrace::mean() const {
  if (samples_.empty()) return 0;
  double sum = 0;
  for (std::uint64_t v : samples_) sum += static_cast<double>(v);
  return sum / static_cast<double>(samples_.size());
}

std::size_t BacklogTrace::index_at(Time t) const {
  RELAYSIM_ASSERT(!samples_.empty() && t >= time_of(0), "there is a sample at or before t");
  const auto i = static_cast<std::size_t>((t - Time{}) / step_) - 1;
  return std::min(i, samples_.size() - 1);
}

std::vector<Drain> BacklogTrace::drains(const std::vector<TimelineEvent>& timeline) const {
  std::vector<Drain> out;
  if (samples_.empty()) return out;
  const Time last = time_of(samples_.size() - 1);
  std::vector<const TimelineEvent*> windows;
  for (const TimelineEvent& e : timeline) {
    if (e.fault && e.length > Duration{} && e.length < kForever && e.at > time_of(0) && e.at + e.length <= last) {
      windows.push_back(&e);
    }
  }
  std::stable_sort(windows.begin(), windows.end(), [](const TimelineEvent* a, const TimelineEvent* b) { return a->at < b->at; });

  // The first sample at or after `from` whose backlog is at `level` or below.
  const auto drained_at = [&](Time from, double level) {
    const auto steps = ((from - Time{}) + step_ - Duration{1}) / step_;  // rounded up
    for (auto i = static_cast<std::size_t>(steps) - 1; i < samples_.size(); ++i) {
      if (static_cast<double>(samples_[i]) <= level) return time_of(i);
    }
    return kTimeNever;
  };
  for (std::size_t next = 0; next < windows.size();) {
    Drain d;
    d.fault_start = windows[next]->at;
    d.fault_end = d.fault_start;
    // The level: the mean of the samples over the span before the episode (strictly before: the
    // sample at its start may already see it).
    const std::size_t to = index_at(d.fault_start - Duration{1});
    const std::size_t from = d.fault_start - kLevelSpan <= time_of(0) ? 0 : index_at(d.fault_start - kLevelSpan);
    double sum = 0;
    for (std::size_t i = from; i <= to; ++i) sum += static_cast<double>(samples_[i]);
    d.level = sum / static_cast<double>(to - from + 1);
    const auto join = [&](const TimelineEvent& e) {
      d.fault_end = std::max(d.fault_end, e.at + e.length);
      d.what += (d.what.empty() ? "" : ", ") + e.kind + " " + e.subject;
    };
    join(*windows[next++]);
    for (;;) {
      while (next < windows.size() && windows[next]->at <= d.fault_end) join(*windows[next++]);
      d.drained = drained_at(d.fault_end, d.level);
      // A fault that begins before the backlog of this one has drained joins the episode.
      if (next < windows.size() && (!d.drained_by_end() || windows[next]->at < d.drained)) {
        join(*windows[next++]);
        continue;
      }
      break;
    }
    const std::size_t until = d.drained_by_end() ? index_at(d.drained) : samples_.size() - 1;
    for (std::size_t i = to; i <= until; ++i) d.peak = std::max(d.peak, samples_[i]);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace relaysim::sim
