// Ground truth: what really happened in the simulated world, including what the platform cannot
// see (a response lost on the way back, a request that landed after its sender crashed). The
// oracle judges the platform against this; metrics count it.
#pragma once

#include <cstdint>

#include "model/core/ports.h"
#include "model/webhook/ingest.h"
#include "model/webhook/events.h"

namespace relaysim::sim {

// The fate of one HTTP send, decided by the world when it is sent.
struct SendFate {
  std::uint32_t endpoint = 0;
  bool processed = false;       // the endpoint received and handled the request
  int status = 0;               // what the endpoint answered, when processed
  Time received_at{};           // when processed
  Time result_at{};             // when the client learns the result (response or timeout)
  NetError client_error = NetError::none;  // what the client sees
  bool response_lost = false;   // processed, but the response never arrived
};

// Identifies a client's create call: the load generator's own numbering of keys.
struct ClientKey {
  std::uint32_t cxid = 0;
  std::uint64_t request = 0;   // one per idempotency key: duplicates and conflicts repeat it
  std::uint64_t payload = 0;  // a digest of the payload sent
};

class Observer : public webhook::Events {
 public:
  virtual void client_created(const ClientKey&, const webhook::IngestResult&, Time) {}
  virtual void client_rejected(Time) {}  // no pod was up to take the call
  // A lookup sent at `at`, answered (or timed out) at `answer_at`; `ok` unless ServiceB failed it.
  virtual void serviceb_called(std::uint32_t /*pod*/, std::uint32_t /*cxid*/, Time /*at*/, Time /*answer_at*/,
                               bool /*ok*/, bool /*in_outage*/) {}
  virtual void http_sent(std::uint32_t /*pod*/, webhook::RequestId, const SendFate&, Time) {}
  virtual void pod_crashed(std::uint32_t /*pod*/, Time) {}
  virtual void pod_started(std::uint32_t /*pod*/, Time) {}
};

}  // namespace relaysim::sim
