#include "sim/report/backlog.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "model/core/assert.h"
#include "sim/report/groups.h"
#include "sim/scenario/scenario.h"

namespace relaysim::sim {

namespace {
// How far back the level a backlog drains to is averaged: long enough to smooth the load's own
// noise, short enough to be the level just before the fault.
constexpr Duration kLevelSpan = std::chrono::minutes(5);
}  // namespace

double Drain::seconds() const {
  RELAYSIM_ASSERT(!drained_by_end() || drained >= fault_end, "a backlog drains after its faults end");
  return drained_by_end() ? to_seconds(drained - fault_end) : std::numeric_limits<double>::infinity();
}

double Drain::mostly_seconds() const {
  return mostly_drained != kTimeNever ? to_seconds(mostly_drained - fault_end) : std::numeric_limits<double>::infinity();
}

double Drain::latency_seconds() const {
  if (!latency_level) return std::numeric_limits<double>::quiet_NaN();
  if (latency_back == kTimeNever) return std::numeric_limits<double>::infinity();
  RELAYSIM_ASSERT(latency_back > fault_end, "the latency is back in a whole minute after the faults end");
  return to_seconds(latency_back - fault_end);
}

void BacklogTrace::take_latency(const LatencyHistogram& so_far) {
  RELAYSIM_ASSERT(latency_due() && minutes_.size() + 1 == samples_.size() / kLatencySteps, "a reading every minute of samples");
  minutes_.push_back(LatencyHistogram::joined(carried_, so_far.added_since(previous_)));
  carried_.clear();
  previous_ = so_far;
}

void BacklogTrace::restart_latency(const LatencyHistogram& so_far) {
  carried_ = LatencyHistogram::joined(carried_, so_far.added_since(previous_));
  previous_ = LatencyHistogram{};
}

Duration BacklogTrace::step_for(Duration run_length) {
  return std::max<Duration>(std::chrono::seconds(1), run_length / 100'000);
}

void BacklogTrace::trace_groups(std::size_t groups, std::vector<bool> down_for_good) {
  RELAYSIM_ASSERT(samples_.empty(), "groups are traced from the first sample");
  RELAYSIM_ASSERT(down_for_good.empty() || down_for_good.size() == groups, "a flag for every group, or none");
  if (groups < 2 || groups > kGroupsApart) return;
  groups_ = groups;
  down_for_good_ = std::move(down_for_good);
  by_group_.reserve(samples_.capacity() * groups_);
}

void BacklogTrace::take_groups(std::span<const std::uint64_t> open) {
  if (groups_ == 0) return;
  RELAYSIM_ASSERT(open.size() == groups_ && by_group_.size() + groups_ == samples_.size() * groups_,
                  "each group's backlog at each sample, taken after the whole one's");
  for (const std::uint64_t n : open) by_group_.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(n, UINT32_MAX)));
}

BacklogTrace::BacklogTrace(Duration run_length) : step_(step_for(run_length)) {
  RELAYSIM_ASSERT(run_length > Duration::zero(), "a run lasts some time");
  samples_.reserve(static_cast<std::size_t>(std::min<std::int64_t>(run_length / step_ + 1, 200'000)));
  live_.reserve(samples_.capacity());
  opened_.reserve(samples_.capacity());
  finished_.reserve(samples_.capacity());
}

std::uint64_t BacklogTrace::peak() const {
  RELAYSIM_ASSERT(from_ <= samples_.size(), "the warm-up ends within the trace");
  std::uint64_t most = 0;
  for (std::size_t i = from_; i < samples_.size(); ++i) most = std::max(most, samples_[i]);
  return most;
}

double BacklogTrace::mean() const {
  if (samples_.size() <= from_) return 0;
  double sum = 0;
  for (std::size_t i = from_; i < samples_.size(); ++i) sum += static_cast<double>(samples_[i]);
  return sum / static_cast<double>(samples_.size() - from_);
}

double BacklogTrace::peak_rate(const std::vector<std::uint64_t>& counts) const {
  RELAYSIM_ASSERT(counts.size() == samples_.size(), "a count for every sample");
  const auto span = static_cast<std::size_t>(std::max<std::int64_t>(1, std::chrono::minutes(1) / step_));
  double most = 0;
  // From the sample before the warm-up's end (or the start's zero) to `span` samples later.
  for (std::size_t i = from_; i + span <= counts.size(); ++i) {
    const std::uint64_t before = i == 0 ? 0 : counts[i - 1];
    const std::uint64_t after = counts[i + span - 1];
    most = std::max(most, static_cast<double>(after - std::min(after, before)));
  }
  return most / to_seconds(step_ * static_cast<std::int64_t>(span));
}

Duration BacklogTrace::settle_time() const {
  constexpr std::size_t kBatch = 5;
  const std::size_t k = samples_.size() / kBatch;
  if (k < 2) return Duration{};
  std::vector<double> z(k);
  for (std::size_t j = 0; j < k; ++j) {
    double sum = 0;
    for (std::size_t i = 0; i < kBatch; ++i) sum += static_cast<double>(samples_[j * kBatch + i]);
    z[j] = sum / kBatch;
  }
  // From the back, so that each cut's sums are one addition away from the next one's. The sums
  // of squares are taken about the last batch, which keeps a large steady backlog from
  // cancelling itself away in floating point.
  const double pivot = z.back();
  double s1 = 0, s2 = 0;
  std::size_t best = 0;
  double best_score = std::numeric_limits<double>::infinity();
  for (std::size_t d = k; d-- > 0;) {
    const double x = z[d] - pivot;
    s1 += x;
    s2 += x * x;
    if (d > k / 2) continue;
    const auto left = static_cast<double>(k - d);
    const double score = std::max(0.0, s2 - s1 * s1 / left) / (left * left);
    if (score <= best_score) {  // a tie goes to the shorter cut
      best_score = score;
      best = d;
    }
  }
  return step_ * static_cast<std::int64_t>(best * kBatch);
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

  // The first sample at or after `from` whose backlog (`at(i)`: the whole's not stuck, or a
  // group's) is at `level` or below.
  const auto drained_at = [&](const auto& at, Time from, double level) {
    const auto steps = ((from - Time{}) + step_ - Duration{1}) / step_;  // rounded up
    for (auto i = static_cast<std::size_t>(steps) - 1; i < samples_.size(); ++i) {
      if (static_cast<double>(at(i)) <= level) return time_of(i);
    }
    return kTimeNever;
  };
  // The mean of `at(i)` over samples `from` to `to`, and its most from `from` until `until`.
  const auto mean_of = [](const auto& at, std::size_t from, std::size_t to) {
    double sum = 0;
    for (std::size_t i = from; i <= to; ++i) sum += static_cast<double>(at(i));
    return sum / static_cast<double>(to - from + 1);
  };
  const auto peak_of = [](const auto& at, std::size_t from, std::size_t until) {
    std::uint64_t most = 0;
    for (std::size_t i = from; i <= until; ++i) most = std::max<std::uint64_t>(most, at(i));
    return most;
  };
  const auto live = [this](std::size_t i) { return live_[i]; };
  for (std::size_t next = 0; next < windows.size();) {
    Drain d;
    d.fault_start = windows[next]->at;
    d.fault_end = d.fault_start;
    // The level: the mean of the samples over the span before the episode (strictly before: the
    // sample at its start may already see it).
    const std::size_t to = index_at(d.fault_start - Duration{1});
    const std::size_t from = d.fault_start - kLevelSpan <= time_of(0) ? 0 : index_at(d.fault_start - kLevelSpan);
    RELAYSIM_ASSERT(from <= to, "the level before a fault is measured over a sample or more");
    d.level = mean_of(live, from, to);
    const auto join = [&](const TimelineEvent& e) {
      d.fault_end = std::max(d.fault_end, e.at + e.length);
      // Two windows of one fault (an outage that comes back) are named once.
      const std::string name = e.kind + " " + e.subject;
      const bool named = (", " + d.what + ", ").find(", " + name + ", ") != std::string::npos;
      if (!named) d.what += (d.what.empty() ? "" : ", ") + name;
    };
    join(*windows[next++]);
    for (;;) {
      while (next < windows.size() && windows[next]->at <= d.fault_end) join(*windows[next++]);
      d.drained = drained_at(live, d.fault_end, d.level);
      // A fault that begins before the backlog of this one has drained joins the episode.
      if (next < windows.size() && (!d.drained_by_end() || windows[next]->at < d.drained)) {
        join(*windows[next++]);
        continue;
      }
      break;
    }
    latency_recovery(d, next < windows.size() ? windows[next]->at : kTimeNever);
    const std::size_t until = d.drained_by_end() ? index_at(d.drained) : samples_.size() - 1;
    d.peak = peak_of(live, to, until);
    d.mostly_drained = drained_at(live, d.fault_end, d.level + (static_cast<double>(d.peak) - d.level) / 10);
    d.stuck = samples_[until] - live_[until];
    // A group's level leaves out the samples taken during a fault before this episode.
    std::vector<bool> clear(to - from + 1, true);
    for (const TimelineEvent* w : windows) {
      if (w->at >= d.fault_start) break;
      for (std::size_t i = from; i <= to; ++i) clear[i - from] = clear[i - from] && !(time_of(i) >= w->at && time_of(i) < w->at + w->length);
    }
    const bool any_clear = std::find(clear.begin(), clear.end(), true) != clear.end();
    const std::size_t faults_from = index_at(std::max(d.fault_start, time_of(0))), faults_to = index_at(d.fault_end);
    for (std::size_t g = 0; g < groups_; ++g) {
      const auto group = [this, g](std::size_t i) { return by_group_[i * groups_ + g]; };
      GroupDrain gd;
      gd.group = g;
      gd.down_for_good = !down_for_good_.empty() && down_for_good_[g];
      double sum = 0;
      std::size_t n = 0;
      for (std::size_t i = from; i <= to; ++i) {
        if (any_clear && !clear[i - from]) continue;
        sum += static_cast<double>(group(i));
        ++n;
      }
      gd.level = sum / static_cast<double>(n);
      gd.affected = static_cast<double>(peak_of(group, faults_from, faults_to)) > gd.level * 1.1 + 1;
      if (gd.sought()) gd.drained = drained_at(group, d.fault_end, gd.level);
      // Its peak over the episode: until the whole drained, or until the group did if later.
      const std::size_t group_until = gd.drained_by_end() ? std::max(until, index_at(gd.drained)) : gd.sought() ? samples_.size() - 1 : until;
      gd.peak = peak_of(group, to, group_until);
      d.groups.push_back(gd);
    }
    out.push_back(std::move(d));
  }
  return out;
}

void BacklogTrace::latency_recovery(Drain& d, Time next_fault) const {
  const Duration minute = step_ * static_cast<std::int64_t>(kLatencySteps);
  const auto end_of = [&](std::size_t m) { return Time{} + minute * static_cast<std::int64_t>(m + 1); };
  constexpr double kQ = 0.99;
  // The level: the worst p99 of the minutes that end in the level's span before the fault's start
  // (or, in a long run whose minutes are longer than that, the one that ends last before it).
  const Time since = d.fault_start - std::max(kLevelSpan, minute);
  for (std::size_t m = 0; m < minutes_.size() && end_of(m) <= d.fault_start; ++m) {
    if (end_of(m) <= since || minutes_[m].empty()) continue;
    const Duration p = LatencyHistogram::quantile_of(minutes_[m], kQ);
    d.latency_level = d.latency_level ? std::max(*d.latency_level, p) : p;
  }
  if (!d.latency_level) return;
  // Back at the level, to the histogram's resolution: a minute's p99 is read inside its bucket,
  // where it moves with how many finished, so the same durations can read a little higher.
  const Duration back_under = *d.latency_level + LatencyHistogram::bucket_width(*d.latency_level);
  // Whole minutes after the fault and before the next one: work held up by a fault is seen only
  // when it finishes, so a minute during one looks quick exactly when nothing can get through.
  for (std::size_t m = 0; m < minutes_.size() && end_of(m) <= next_fault; ++m) {
    if (end_of(m) - minute < d.fault_end || minutes_[m].empty()) continue;
    if (LatencyHistogram::quantile_of(minutes_[m], kQ) <= back_under) {
      d.latency_back = end_of(m);
      return;
    }
  }
}

}  // namespace relaysim::sim
