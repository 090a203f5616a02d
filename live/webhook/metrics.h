// LiveMetrics: what `GET /metrics` serves, in the Prometheus text format (version 0.0.4), counted
// from the model's own events — the same events the simulator's metrics and oracle take — plus
// the store's counts by status, read when scraped.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/core/assert.h"
#include "model/webhook/events.h"
#include "model/webhook/store.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

// A Prometheus histogram with fixed bucket bounds (seconds, or a count).
class PromHistogram {
 public:
  explicit PromHistogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size(), 0) {
    RELAYSIM_ASSERT(!bounds_.empty() && std::is_sorted(bounds_.begin(), bounds_.end()), "a histogram's bounds rise");
  }
  void observe(double value);
  void write(std::string& out, const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket, not cumulative
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

class LiveMetrics final : public SinkFor<model::Ingested>,
                          public SinkFor<model::AttemptFinished>,
                          public SinkFor<model::Completed>,
                          public SinkFor<model::UrlLookedUp>,
                          public SinkFor<model::BreakerChanged>,
                          public SinkFor<model::StoreFailed>,
                          public SinkFor<model::Replayed> {
 public:
  explicit LiveMetrics(model::Store& store);

  void on(const model::Ingested& e) override;
  void on(const model::AttemptFinished& e) override;
  void on(const model::Completed& e) override;
  void on(const model::UrlLookedUp& e) override;
  void on(const model::BreakerChanged& e) override;
  void on(const model::StoreFailed& e) override;
  void on(const model::Replayed& e) override;
  // The time an ingest call took, from its request read to its answer written.
  void observe_ingest(Duration d) { ingest_seconds_.observe(to_seconds(d)); }
  // The writes one group commit covered.
  void observe_group(std::uint32_t writes) { commit_writes_.observe(writes); }

  // The exposition; reads the store's counts (a store failure leaves them out).
  std::string text();

 private:
  model::Store& store_;
  std::array<std::uint64_t, model::kCreateOutcomeNames.count> ingests_{};
  // Attempts by result: a status class (0xx..9xx), then each NetError (`none` unused).
  static constexpr std::size_t kStatusClasses = 10;
  static constexpr std::size_t kNetErrors = kNetErrorCount;
  std::array<std::uint64_t, kStatusClasses + kNetErrors> attempts_{};
  std::array<std::uint64_t, model::kStatusCount> completions_{};
  std::uint64_t fenced_ = 0;
  std::uint64_t cache_hits_ = 0;
  std::uint64_t cache_misses_ = 0;
  BreakerState breaker_ = BreakerState::closed;
  std::uint64_t breaker_transitions_ = 0;
  std::uint64_t store_failures_ = 0;
  std::uint64_t replays_ = 0;
  PromHistogram ingest_seconds_;
  PromHistogram attempt_seconds_;
  PromHistogram delivery_seconds_;
  PromHistogram commit_writes_;
};

}  // namespace relaysim::live::webhook
