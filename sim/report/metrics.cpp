#include "sim/report/metrics.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace relaysim::sim {

using namespace relaysim::webhook;

void LatencyHistogram::add(Duration d) {
  const auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(1, d.count()));
  const int octave = 63 - std::countl_zero(ns);
  const int sub = octave >= 4 ? static_cast<int>((ns >> (octave - 4)) & (kSub - 1)) : 0;
  ++buckets_[static_cast<std::size_t>(octave * kSub + sub)];
  ++count_;
  sum_s_ += to_seconds(d);
  max_ = std::max(max_, d);
}

Duration LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return Duration::zero();
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= std::max<std::uint64_t>(rank, 1)) {
      const int octave = static_cast<int>(i) / kSub;
      const int sub = static_cast<int>(i) % kSub;
      // The bucket's upper edge, but never past the largest value seen.
      const double upper = std::ldexp(1.0 + (sub + 1) / static_cast<double>(kSub), octave);
      return std::min(Duration{static_cast<std::int64_t>(upper)}, max_);
    }
  }
  return max_;
}

void Metrics::ingested(PodId, const NewRequest&, const CreateResult& r, Time) {
  if (r.outcome == CreateOutcome::created) ++acked;
}

void Metrics::client_created(const ClientKey&, const IngestResult& r, Time) {
  ++created_by_outcome[static_cast<std::size_t>(r.status)];
}

void Metrics::completed(PodId, const RequestRow& row, const Completion& c, bool applied) {
  if (!applied) return;
  if (c.status == Status::blocked) ++deferrals;
  if (!is_terminal(c.status)) return;
  ++terminal[static_cast<std::size_t>(c.status)][static_cast<std::size_t>(c.reason)];
  const std::uint32_t n = row.attempts + (c.attempt != nullptr ? 1 : 0);
  ++attempts_per_request[std::min<std::size_t>(n, kAttemptBuckets - 1)];
  if (c.status == Status::delivered) delivery_latency.add(c.at - row.created_at);
}

void Metrics::breaker_changed(PodId pod, BreakerState from, BreakerState to, Time at) {
  if (breaker_.size() <= pod) breaker_.resize(pod + 1, BreakerState::closed);
  breaker_[pod] = to;
  if (to == BreakerState::open && from == BreakerState::closed) ++breaker_opened;
  if (to == BreakerState::closed) ++breaker_closed;
  if (transitions.size() < kTransitionsKept) transitions.push_back({at, pod, from, to});
}

void Metrics::serviceb_called(std::uint32_t pod, std::uint32_t, Time, Time, bool, bool in_outage) {
  ++serviceb_calls;
  if (!in_outage) return;
  ++serviceb_calls_in_outage;
  const BreakerState s = pod < breaker_.size() ? breaker_[pod] : BreakerState::closed;
  ++serviceb_calls_in_outage_by_state[static_cast<std::size_t>(s)];
}

}  // namespace relaysim::sim
