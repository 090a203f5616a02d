#include "sim/world/policies.h"

namespace relaysim::sim {

const Schema<BackoffPolicy>& backoff_schema() {
  static const Schema<BackoffPolicy> schema = [] {
    Schema<BackoffPolicy> s(Style::flow);
    s.key("backoff", &BackoffPolicy::kind, choice_codec(kBackoffKindNames),
          "`exponential`: initial × multiplier^(n-1), capped at max_interval; `fixed`: initial every time");
    s.key("initial", &BackoffPolicy::initial, duration_codec(),
          "the first delay (at least " + write_duration(kMinRetryInterval) + ")");
    s.key("multiplier", &BackoffPolicy::multiplier, number_codec(1, 100), "growth per retry (exponential)");
    s.key("max_interval", &BackoffPolicy::max_interval, duration_codec(), "the longest delay");
    s.key("jitter", &BackoffPolicy::jitter, choice_codec(kJitterNames),
          "`none`; `full`: uniform in [0, delay]; `equal`: half fixed, half uniform; `decorrelated`: uniform in "
          "[initial, 3 × the previous delay]");
    return s;
  }();
  return schema;
}

const Schema<BreakerConfig>& breaker_schema() {
  static const Schema<BreakerConfig> schema = [] {
    Schema<BreakerConfig> s(Style::flow,
                            "A circuit breaker around a dependency, one per pod. While it is open, the dependency gets "
                            "no calls.");
    s.key("window", &BreakerConfig::window, duration_codec(BreakerConfig::kWindow), "the sliding window failures are counted over");
    s.key("min_calls", &BreakerConfig::min_calls, integer_codec(BreakerConfig::kMinCalls),
          "below this many calls in the window it never opens");
    s.key("failure_rate", &BreakerConfig::failure_rate, fraction_codec(BreakerConfig::kFailureRate),
          "opens when failures reach this share");
    s.key("open_for", &BreakerConfig::open_for, duration_codec(BreakerConfig::kOpenFor), "how long it stays open before probing");
    s.key("half_open_probes", &BreakerConfig::half_open_probes, integer_codec(BreakerConfig::kHalfOpenProbes),
          "at most this many probes at once; this many successes close it, one failure reopens it");
    return s;
  }();
  return schema;
}

const Schema<LimiterSpec>& limiter_schema() {
  static const Schema<LimiterSpec> schema = [] {
    Schema<LimiterSpec> s(Style::flow,
                          "A rate limit and the bound it keeps in any span t: `sliding_log` admits at most `limit` in "
                          "any window (Redis sorted-set semantics: unique members, atomic check-and-add, blocked "
                          "calls not recorded); `sliding_counter` at most `limit` per aligned window and 2 × limit in "
                          "any window; `token_bucket` and `gcra` at most burst + limit × t / window (GCRA's burst "
                          "counts the first call: burst 1 is no burst).");
    s.key("algorithm", &LimiterSpec::algorithm, choice_codec(kLimiterAlgorithmNames), "how the limit is kept");
    s.key("limit", &LimiterSpec::limit, integer_codec(LimiterSpec::kLimit), "calls per window");
    s.key("window", &LimiterSpec::window, duration_codec(LimiterSpec::kWindow), "the window");
    s.key("burst", &LimiterSpec::burst, integer_codec(LimiterSpec::kBurst), "token_bucket and gcra: the most admitted at once",
          opt::shown("`limit`"));
    return s;
  }();
  return schema;
}

const Schema<SharedLimitConfig>& shared_limit_schema() {
  static const Schema<SharedLimitConfig> schema = [] {
    Schema<SharedLimitConfig> s(Style::flow,
                                "A limit shared by every pod through the key-value store (Redis), which applies it "
                                "atomically by its own clock. When the store cannot answer, `when_down` decides.");
    s.include(&SharedLimitConfig::spec, limiter_schema());
    s.key("when_down", &SharedLimitConfig::when_down, choice_codec(kStoreDownPolicyNames),
          "while the store is down: `allow` everything (unlimited, reported as such), `deny` everything, or a "
          "`local` limiter in each pod at limit / pods (rounded up)");
    s.key("timeout", &SharedLimitConfig::timeout, duration_codec(SharedLimitConfig::kTimeout), "one store call's timeout");
    s.key("breaker", &SharedLimitConfig::breaker, map_codec(breaker_schema()),
          "a breaker on the store, so an outage does not cost a timeout per call");
    return s;
  }();
  return schema;
}

}  // namespace relaysim::sim
