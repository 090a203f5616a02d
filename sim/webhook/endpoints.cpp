#include "sim/webhook/endpoints.h"

#include <algorithm>

#include "model/core/assert.h"

namespace relaysim::sim::webhook {

Endpoints::Endpoints(const std::vector<EndpointGroup>& groups, std::uint64_t seed)
    : groups_(groups), rng_(Rng::derive(seed, "endpoints")) {
  for (std::uint32_t g = 0; g < groups_.size(); ++g) {
    latency_.emplace_back(groups_[g].latency);
    group_of_.insert(group_of_.end(), groups_[g].count, g);
  }
  RELAYSIM_ASSERT(!group_of_.empty(), "a world has at least one endpoint");
}

SendFate Endpoints::send(std::uint32_t endpoint, Time now, Duration timeout, Duration& retry_after) {
  RELAYSIM_ASSERT(endpoint < group_of_.size(), "an endpoint that does not exist");
  RELAYSIM_ASSERT(timeout > Duration::zero(), "a call has a timeout");
  const EndpointGroup& g = groups_[group_of_[endpoint]];
  SendFate f;
  f.endpoint = endpoint;
  retry_after = Duration{-1};
  constexpr Duration kConnect = std::chrono::milliseconds(1);
  if (rng_.chance(g.dns_failure_rate)) {
    f.client_error = NetError::dns_error;
    f.result_at = now + std::chrono::milliseconds(5);
    return f;
  }
  for (const Window& w : g.down) {
    if (w.contains(now)) {
      f.client_error = NetError::connect_error;
      f.result_at = now + kConnect;
      return f;
    }
  }
  if (rng_.chance(g.blackhole_rate)) {
    f.client_error = NetError::timeout;
    f.result_at = now + timeout;
    return f;
  }
  const Duration latency = latency_[group_of_[endpoint]].sample(rng_);
  f.processed = true;
  f.received_at = now + latency / 2;
  f.status = 200;
  for (const Incident& i : g.incidents) {
    if (i.window.contains(now) && rng_.chance(i.rate)) {
      f.status = i.status;
      retry_after = i.retry_after;
      break;
    }
  }
  if (f.status == 200 && rng_.chance(g.error_rate)) {
    f.status = g.error_status;
    retry_after = g.retry_after;
  }
  if (rng_.chance(g.lost_response_rate)) {
    f.response_lost = true;
    f.client_error = NetError::timeout;
    f.result_at = now + timeout;
  } else if (latency > timeout) {
    f.client_error = NetError::timeout;
    f.result_at = now + timeout;
  } else {
    f.result_at = now + latency;
  }
  return f;
}

}  // namespace relaysim::sim::webhook
