#include "live/webhook/metrics.h"

#include <algorithm>
#include <cstdio>

#include "model/store/store_error.h"
#include "model/webhook/metric_families.h"

namespace relaysim::live::webhook {

namespace model = relaysim::webhook;

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

void head(std::string& out, const std::string& name, const char* type, const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, const std::string& labels, double value) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += " " + number(value) + "\n";
}

}  // namespace

void PromHistogram::observe(double value) {
  ++count_;
  sum_ += value;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) {
      ++counts_[i];
      return;
    }
  }
}

void PromHistogram::write(std::string& out, const std::string& name, const std::string& help) const {
  RELAYSIM_ASSERT(counts_.size() == bounds_.size(), "a count for every bucket");
  head(out, name, "histogram", help);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    sample(out, name + "_bucket", "le=\"" + number(bounds_[i]) + "\"", static_cast<double>(cumulative));
  }
  sample(out, name + "_bucket", "le=\"+Inf\"", static_cast<double>(count_));
  sample(out, name + "_sum", "", sum_);
  sample(out, name + "_count", "", static_cast<double>(count_));
}

LiveMetrics::LiveMetrics(model::Store& store)
    : store_(store),
      ingest_seconds_({0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}),
      attempt_seconds_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      delivery_seconds_({0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300, 1800, 3600, 6 * 3600, 24 * 3600}),
      commit_writes_({1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}) {}

void LiveMetrics::on(const model::Ingested& e) { ++ingests_[static_cast<std::size_t>(e.result.outcome)]; }

void LiveMetrics::on(const model::AttemptFinished& e) {
  // A network error, or a status class: one counter each, no text built per attempt.
  const std::size_t at = e.result.error != NetError::none
                             ? kStatusClasses + static_cast<std::size_t>(e.result.error)
                             : static_cast<std::size_t>(std::clamp(e.result.status / 100, 0, int{kStatusClasses} - 1));
  ++attempts_[at];
  attempt_seconds_.observe(to_seconds(e.attempt.finished_at - e.attempt.started_at));
}

void LiveMetrics::on(const model::Completed& e) {
  if (!e.applied) {
    ++fenced_;
    return;
  }
  ++completions_[static_cast<std::size_t>(e.completion.status)];
  if (e.completion.status == model::Status::delivered) {
    delivery_seconds_.observe(to_seconds(e.completion.at - e.row.created_at));
  }
}

void LiveMetrics::on(const model::UrlLookedUp& e) { ++(e.cache_hit ? cache_hits_ : cache_misses_); }

void LiveMetrics::on(const model::BreakerChanged& e) {
  breaker_ = e.to;
  ++breaker_transitions_;
}

void LiveMetrics::on(const model::StoreFailed&) { ++store_failures_; }

void LiveMetrics::on(const model::Replayed& e) {
  if (e.outcome == model::ReplayOutcome::replayed) ++replays_;
}

std::string LiveMetrics::text() {
  std::string out;
  try {
    const model::StoreCounts counts = store_.counts();
    const std::string requests(model::kRequestsFamily.name);
    head(out, requests, "gauge", std::string(model::kRequestsFamily.help));
    for (int s = 0; s < model::kStatusCount; ++s) {
      sample(out, requests, "status=\"" + std::string(to_string(static_cast<model::Status>(s))) + "\"",
             static_cast<double>(counts.by_status[static_cast<std::size_t>(s)]));
    }
  } catch (const StoreError&) {
    // The rest is still worth serving; the store's failures have a counter of their own.
  }
  head(out, "relaysim_ingests_total", "counter", "Create calls answered by this process, by outcome.");
  for (std::size_t o = 0; o < ingests_.size(); ++o) {
    sample(out, "relaysim_ingests_total",
           "outcome=\"" + std::string(to_string(static_cast<model::CreateOutcome>(o))) + "\"",
           static_cast<double>(ingests_[o]));
  }
  head(out, "relaysim_attempts_total", "counter", "Delivery attempts made by this process, by result.");
  for (std::size_t i = 0; i < attempts_.size(); ++i) {
    if (attempts_[i] == 0) continue;  // as before: only the results seen
    const std::string result = i < kStatusClasses ? std::to_string(i) + "xx" : std::string(to_string(static_cast<NetError>(i - kStatusClasses)));
    sample(out, "relaysim_attempts_total", "result=\"" + result + "\"", static_cast<double>(attempts_[i]));
  }
  // This process's completions; a dashboard sums them over the processes (docs/live.md).
  const std::string completions = std::string(model::kCompletionsFamily.name) + "_total";
  head(out, completions, "counter", std::string(model::kCompletionsFamily.help));
  for (int s = 0; s < model::kStatusCount; ++s) {
    if (s == static_cast<int>(model::Status::in_flight)) continue;
    sample(out, completions, "status=\"" + std::string(to_string(static_cast<model::Status>(s))) + "\"",
           static_cast<double>(completions_[static_cast<std::size_t>(s)]));
  }
  head(out, "relaysim_fenced_completions_total", "counter",
       "Completions refused because the claim's lease had passed to another claimant.");
  sample(out, "relaysim_fenced_completions_total", "", static_cast<double>(fenced_));
  head(out, "relaysim_url_lookups_total", "counter", "ServiceB URL lookups, by whether the cache answered.");
  sample(out, "relaysim_url_lookups_total", "cache=\"hit\"", static_cast<double>(cache_hits_));
  sample(out, "relaysim_url_lookups_total", "cache=\"miss\"", static_cast<double>(cache_misses_));
  head(out, "relaysim_serviceb_breaker_state", "gauge", "The ServiceB breaker: 0 closed, 1 open, 2 half-open.");
  sample(out, "relaysim_serviceb_breaker_state", "state=\"" + std::string(to_string(breaker_)) + "\"",
         static_cast<double>(static_cast<int>(breaker_)));
  head(out, "relaysim_serviceb_breaker_transitions_total", "counter", "ServiceB breaker state changes.");
  sample(out, "relaysim_serviceb_breaker_transitions_total", "", static_cast<double>(breaker_transitions_));
  head(out, "relaysim_store_failures_total", "counter", "Store calls that failed (busy, full, I/O).");
  sample(out, "relaysim_store_failures_total", "", static_cast<double>(store_failures_));
  head(out, "relaysim_replays_total", "counter", "Terminal requests replayed.");
  sample(out, "relaysim_replays_total", "", static_cast<double>(replays_));
  ingest_seconds_.write(out, "relaysim_ingest_seconds", "Time from a create call read to its answer.");
  attempt_seconds_.write(out, "relaysim_attempt_seconds", "Time one delivery attempt took.");
  delivery_seconds_.write(out, "relaysim_delivery_seconds", "Time from a request's creation to its delivery.");
  commit_writes_.write(out, "relaysim_commit_writes", "Writes each group commit covered (serve's group_commit).");
  return out;
}

}  // namespace relaysim::live::webhook
