// The webhook system's section of a scenario (`webhook:`): the platform's policies, the world
// around it (ServiceB and the endpoints) and its clients' load.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/webhook/config.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/schema.h"
#include "sim/world/arrivals.h"
#include "sim/world/distribution.h"

namespace relaysim::sim::webhook {

struct UrlChange {
  Time at{};
  double fraction = 1.0;  // of all cxids, chosen by the serviceb stream
  bool operator==(const UrlChange&) const = default;
};

struct ServiceBSpec {
  LatencySpec latency{std::chrono::milliseconds(5), std::chrono::milliseconds(50)};
  double error_rate = 0.0;
  std::vector<Outage> outages;
  std::vector<UrlChange> url_changes;
  double unknown_cxids = 0.0;  // fraction of cxids ServiceB has never heard of
  bool operator==(const ServiceBSpec&) const = default;
};

// A time-bounded error episode at an endpoint (a 429 storm, a bad deploy).
struct Incident {
  Window window;
  double rate = 1.0;
  int status = 503;
  Duration retry_after{-1};
  bool operator==(const Incident&) const = default;
};

struct EndpointGroup {
  std::string name;
  std::uint32_t count = 1;
  LatencySpec latency{};
  double error_rate = 0.0;
  int error_status = 503;
  Duration retry_after{-1};         // sent with error responses when >= 0
  double blackhole_rate = 0.0;      // connection accepted, never answered: a timeout, not processed
  double lost_response_rate = 0.0;  // processed, but the response never arrives: a timeout
  double dns_failure_rate = 0.0;
  std::vector<Window> down;         // connection refused
  std::vector<Incident> incidents;
  bool operator==(const EndpointGroup&) const = default;
};

// The most endpoints and tenants (cxids) a world may have: far beyond any useful run, and small
// enough that their tables fit in memory.
inline constexpr std::uint32_t kMaxEndpoints = 10'000'000;
inline constexpr std::uint32_t kMaxCxids = 100'000'000;

// One segment of the clients' load: when they call, and what share of calls repeats an earlier one.
struct LoadSegment {
  ArrivalSpec arrivals;
  double duplicates = 0.0;  // fraction of calls that repeat an earlier (cxid, request_id, payload)
  double conflicts = 0.0;   // fraction that repeat an earlier key with another payload
  double shared_ids = 0.0;  // fraction that reuse an earlier request_id under another cxid (a new key)
  double tenant_skew = 0.0;  // Zipf's exponent of how new calls spread over the cxids (0: evenly)
  bool operator==(const LoadSegment&) const = default;
};

// An operator's manual replay: at `at`, `count` requests whose tenants were told they failed,
// picked at random from the latest of those notices (the same one may come up twice, or have
// been replayed or forgotten since). See Operator in sim/webhook/world.h.
// How many of the latest notices the operator picks replays from.
inline constexpr std::size_t kReplayNoticesKept = 4096;

struct ReplayBatch {
  Time at{};
  std::uint32_t count = 1;
  bool operator==(const ReplayBatch&) const = default;
};

struct WebhookSpec final : SystemSpec {
  relaysim::webhook::PlatformConfig platform{};
  ServiceBSpec serviceb{};
  std::vector<EndpointGroup> endpoints;
  std::uint32_t cxids = 0;  // 0: one per endpoint
  std::vector<LoadSegment> load;
  std::vector<ReplayBatch> replays;

  std::unique_ptr<SystemSpec> clone() const override { return std::make_unique<WebhookSpec>(*this); }
  std::uint32_t processes() const override { return platform.pods; }

  std::uint32_t endpoint_count() const {
    std::uint64_t n = 0;
    for (const auto& g : endpoints) n += g.count;
    RELAYSIM_ASSERT(n <= kMaxEndpoints, "the loader bounds the number of endpoints");
    return static_cast<std::uint32_t>(n);
  }
  std::uint32_t cxid_count() const { return cxids != 0 ? cxids : endpoint_count(); }
  bool operator==(const WebhookSpec& o) const {
    return platform == o.platform && serviceb == o.serviceb && endpoints == o.endpoints && cxids == o.cxids &&
           load == o.load && replays == o.replays;
  }
};

// The section's keys, for reading, writing and the docs.
const Schema<WebhookSpec>& spec_schema();
// The platform's keys (`webhook.platform`), also the `platform:` section of `relaysim serve`'s
// configuration.
const Schema<relaysim::webhook::PlatformConfig>& platform_schema();

// The webhook section of a scenario of the webhook system.
const WebhookSpec& spec_of(const Scenario& s);
WebhookSpec& spec_of(Scenario& s);
// A scenario of the webhook system with every default (for tests and generators).
Scenario make_scenario();

}  // namespace relaysim::sim::webhook
