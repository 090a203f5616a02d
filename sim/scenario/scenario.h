// Scenario: everything one simulated run needs — the platform's policies, the world around it,
// the load, the faults and what the run is expected to show. Loaded from YAML by load_scenario();
// see docs/scenario-format.md for every key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/core/time.h"
#include "model/webhook/config.h"

namespace relaysim::sim {

inline constexpr Duration kForever{INT64_MAX / 4};

// A latency distribution: log-normal through the given median and 99th percentile.
struct LatencySpec {
  Duration p50 = std::chrono::milliseconds(50);
  Duration p99 = std::chrono::milliseconds(200);
};

// A window of virtual time: [at, at + length). length == kForever: never ends.
struct Window {
  Time at{};
  Duration length = kForever;
  bool contains(Time t) const { return t >= at && t - at < length; }
  Time end() const { return length >= kForever ? kTimeNever : at + length; }
};

enum class OutageMode : std::uint8_t { error, timeout };

struct ServiceBOutage {
  Window window;
  OutageMode mode = OutageMode::error;
};

struct UrlChange {
  Time at{};
  double fraction = 1.0;  // of all cxids, chosen by the serviceb stream
};

struct ServiceBSpec {
  LatencySpec latency{std::chrono::milliseconds(5), std::chrono::milliseconds(50)};
  double error_rate = 0.0;
  std::vector<ServiceBOutage> outages;
  std::vector<UrlChange> url_changes;
  double unknown_cxids = 0.0;  // fraction of cxids ServiceB has never heard of
};

// A time-bounded error episode at an endpoint (a 429 storm, a bad deploy).
struct Incident {
  Window window;
  double rate = 1.0;
  int status = 503;
  Duration retry_after{-1};
};

struct EndpointGroup {
  std::string name;
  std::uint32_t count = 1;
  LatencySpec latency{};
  double error_rate = 0.0;
  int error_status = 503;
  Duration retry_after{-1};      // sent with error responses when >= 0
  double blackhole_rate = 0.0;   // connection accepted, never answered: a timeout, not processed
  double lost_response_rate = 0.0;  // processed, but the response never arrives: a timeout
  double dns_failure_rate = 0.0;
  std::vector<Window> down;      // connection refused
  std::vector<Incident> incidents;
};

enum class Arrival : std::uint8_t { poisson, constant };

struct LoadSegment {
  double rate_per_s = 0.0;
  Time from{};
  Time to{};
  Arrival arrival = Arrival::poisson;
  double duplicates = 0.0;  // fraction of calls that repeat an earlier (cxid, request_id, payload)
  double conflicts = 0.0;   // fraction that repeat an earlier key with another payload
  std::uint64_t burst = 0;  // > 0: `burst` creates at `from`, rate ignored
};

struct CrashFault {
  Time at{};
  std::uint32_t pod = 0;       // 0-based
  Duration restart_after = kForever;
};

enum class StoreKind : std::uint8_t { memory, sqlite };

enum class CompareOp : std::uint8_t { lt, le, gt, ge, eq, ne };

struct Expectation {
  std::string metric;
  CompareOp op = CompareOp::eq;
  double value = 0.0;
  bool percent = false;  // the value was written as a percentage: metric is a ratio
  std::string text;      // as written, for reports: "dlq_rate < 0.1%"
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  Duration duration = std::chrono::hours(1);
  StoreKind store = StoreKind::memory;
  webhook::PlatformConfig platform{};
  ServiceBSpec serviceb{};
  std::vector<EndpointGroup> endpoints;
  std::uint32_t cxids = 0;  // 0: one per endpoint
  std::vector<LoadSegment> load;
  std::vector<CrashFault> crashes;
  std::vector<Expectation> expect;
  Duration terminal_slack{-1};  // oracle: extra time allowed past the deadline; <0: derived

  std::uint32_t endpoint_count() const {
    std::uint32_t n = 0;
    for (const auto& g : endpoints) n += g.count;
    return n;
  }
};

}  // namespace relaysim::sim
