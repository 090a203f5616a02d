// Metrics: what a run counted — requests by terminal state and reason, attempts per request,
// ingest-to-delivery latency, ServiceB load, breaker transitions, cache hits.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/world/truth.h"

namespace relaysim::sim {

// Log-bucketed histogram of durations: 16 buckets per power of two (about 4.4 % resolution).
class LatencyHistogram {
 public:
  void add(Duration d);
  std::uint64_t count() const { return count_; }
  // The q-quantile (0 <= q <= 1), as the upper edge of its bucket; zero when empty.
  Duration quantile(double q) const;
  Duration max() const { return max_; }
  double mean_seconds() const { return count_ == 0 ? 0.0 : sum_s_ / static_cast<double>(count_); }

 private:
  static constexpr int kSub = 16;
  std::array<std::uint64_t, 64 * kSub> buckets_{};
  std::uint64_t count_ = 0;
  double sum_s_ = 0.0;
  Duration max_{};
};

struct BreakerTransition {
  Time at{};
  std::uint32_t pod = 0;
  BreakerState from{};
  BreakerState to{};
};

class Metrics final : public Observer {
 public:
  static constexpr std::size_t kTransitionsKept = 200;
  static constexpr std::size_t kAttemptBuckets = 12;  // 0..10, 11+

  void ingested(webhook::PodId, const webhook::NewRequest&, const webhook::CreateResult&, Time) override;
  void client_created(const ClientKey&, const webhook::IngestResult&, Time) override;
  void client_rejected(Time) override { ++rejected; }
  void attempt_started(webhook::PodId, const webhook::RequestRow&, std::uint32_t, std::string_view, std::uint64_t,
                       Time) override {
    ++attempts;
  }
  void completed(webhook::PodId, const webhook::RequestRow&, const webhook::Completion&, bool) override;
  void tenant_notified(const webhook::RequestRow&, webhook::Status, webhook::Reason, Time) override { ++notifications; }
  void url_looked_up(webhook::PodId, std::string_view, bool hit, Time) override { ++(hit ? cache_hits : cache_misses); }
  void breaker_changed(webhook::PodId, BreakerState, BreakerState, Time) override;
  void serviceb_called(std::uint32_t pod, std::uint32_t, Time, Time, bool, bool in_outage) override;
  void pod_crashed(std::uint32_t pod, Time) override {
    ++crashes;
    if (pod < breaker_.size()) breaker_[pod] = BreakerState::closed;  // a restarted pod starts closed
  }

  std::array<std::uint64_t, 4> created_by_outcome{};  // IngestStatus
  std::uint64_t rejected = 0;
  std::uint64_t acked = 0;
  std::uint64_t attempts = 0;
  std::uint64_t deferrals = 0;
  std::uint64_t notifications = 0;
  std::uint64_t cache_hits = 0;
  std::uint64_t cache_misses = 0;
  std::uint64_t crashes = 0;
  std::array<std::array<std::uint64_t, webhook::kReasonCount>, webhook::kStatusCount> terminal{};
  std::array<std::uint64_t, kAttemptBuckets> attempts_per_request{};
  LatencyHistogram delivery_latency;
  std::uint64_t serviceb_calls = 0;
  std::uint64_t serviceb_calls_in_outage = 0;
  std::array<std::uint64_t, 3> serviceb_calls_in_outage_by_state{};  // BreakerState
  std::uint64_t breaker_opened = 0;
  std::uint64_t breaker_closed = 0;
  std::vector<BreakerTransition> transitions;

 private:
  std::vector<BreakerState> breaker_;  // per pod, as last reported
};

}  // namespace relaysim::sim
