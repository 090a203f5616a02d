// Endpoints, simulated: the receivers of webhooks, grouped into populations with one behaviour.
#pragma once

#include <cstdint>
#include <vector>

#include "model/core/assert.h"
#include "model/core/random.h"
#include "sim/webhook/spec.h"
#include "sim/world/distribution.h"
#include "sim/webhook/truth.h"

namespace relaysim::sim::webhook {

class Endpoints {
 public:
  Endpoints(const std::vector<EndpointGroup>& groups, std::uint64_t seed);

  std::uint32_t count() const { return static_cast<std::uint32_t>(group_of_.size()); }
  // The group (an index into the scenario's endpoint groups) `endpoint` belongs to.
  std::uint32_t group_of(std::uint32_t endpoint) const {
    RELAYSIM_ASSERT(endpoint < group_of_.size(), "an endpoint of the world");
    return group_of_[endpoint];
  }
  // Decides what happens to a request sent to `endpoint` at `now`; fills `retry_after`.
  SendFate send(std::uint32_t endpoint, Time now, Duration timeout, Duration& retry_after);

 private:
  std::vector<EndpointGroup> groups_;
  std::vector<Latency> latency_;
  std::vector<std::uint32_t> group_of_;
  Rng rng_;
};

}  // namespace relaysim::sim::webhook
