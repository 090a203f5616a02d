// The scenario keys of the resilience policies every system configures the same way — a retry
// backoff, a circuit breaker, a rate limit and a limit shared through the key-value store — so
// each is declared (read, written, documented) once.
#pragma once

#include <optional>
#include <string>

#include "model/resilience/backoff.h"
#include "model/resilience/breaker.h"
#include "model/resilience/limiters.h"
#include "model/resilience/shared_limiter.h"
#include "sim/scenario/schema.h"

namespace relaysim::sim {

// {backoff, initial, multiplier, max_interval, jitter}
const Schema<BackoffPolicy>& backoff_schema();
// {window, min_calls, failure_rate, open_for, half_open_probes}
const Schema<BreakerConfig>& breaker_schema();
// {algorithm, limit, window, burst}, each held to its bounds (LimiterSpec::kLimit, ...).
const Schema<LimiterSpec>& limiter_schema();
// A limiter's keys plus {when_down, timeout, breaker}; `pods` is the system's to set.
const Schema<SharedLimitConfig>& shared_limit_schema();

// An optional mapping: absent is nullopt; present is read over S's defaults.
template <class S>
Codec<std::optional<S>> optional_codec(const Schema<S>& schema, std::string kind = "mapping, below") {
  return {std::move(kind),
          [&schema](const Reader& r, const YAML::Node& n, const std::string& p, std::optional<S>& v) {
            v.emplace();
            schema.read(r, n, p, *v);
          },
          [&schema](YAML::Emitter& e, const std::optional<S>& v, const std::optional<S>&) {
            schema.emit(e, v.value_or(S{}), S{});
          },
          [&schema](std::vector<DocTable>& out, const std::string& p, const std::optional<S>&) {
            schema.document(out, p, S{});
          }};
}

}  // namespace relaysim::sim
