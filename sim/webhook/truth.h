// Ground truth: what really happened in the simulated world, including what the platform cannot
// see (a response lost on the way back, a request that landed after its sender crashed). The
// oracle judges the platform against these events; the metrics count them.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/core/events.h"
#include "model/core/http.h"
#include "model/webhook/ingest.h"

namespace relaysim::sim::webhook {

using relaysim::webhook::RequestId;

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
  std::uint64_t payload = 0;   // a digest of the payload sent
  std::uint64_t name = 0;      // the number in its request_id, "r<name>": `request`, or, for a key
                               // that shares its request_id with another cxid's, that key's number
};

// A client's create call is about to reach a pod (one that is up). Whatever the platform stores
// during the call is the request of this key: the oracle binds it here, before the platform can
// deliver it (a create may dispatch its request before it returns).
struct ClientCalling {
  const ClientKey& key;
  Time at;
};

// A client's create call was answered by a pod.
struct ClientCreated {
  const ClientKey& key;
  const relaysim::webhook::IngestResult& result;
  Time at;
};

// A client's create call found no pod up: not acknowledged.
struct ClientRejected {
  Time at;
  void mix(Fingerprint& fp) const { fp.mix(6); }
};

// A lookup sent at `at`, answered (or timed out) at `answer_at`; `ok` unless ServiceB failed it.
// `version`: the URL version it answers with — ServiceB's at `at` — or 0 (not found, failed).
struct ServiceBCalled {
  std::uint32_t pod;
  std::uint32_t cxid;
  Time at;
  Time answer_at;
  bool ok;
  bool in_outage;
  std::uint64_t version = 0;
};

// An HTTP request left a pod; `fate` is what will happen to it. Besides the request id the
// platform named in its webhook-id header, it carries what really went on the wire — the URL,
// the header itself, and the client key and digest of the payload — so the oracle can judge
// where each delivery went and what it carried, not what the platform says it sent.
struct HttpSent {
  std::uint32_t pod;
  RequestId request;  // from the webhook-id header; 0 when it names no request
  const SendFate& fate;
  Time at;
  std::string_view url;
  std::string_view webhook_id;
  std::uint64_t key = 0;      // the client key number in the payload (LoadGenerator::key_in); 0: none
  std::uint64_t payload = 0;  // hash_bytes of the payload, as ClientKey::payload
  void mix(Fingerprint& fp) const {
    fp.mix(7);
    fp.mix(request);
    fp.mix(static_cast<std::uint64_t>(fate.status));
    fp.mix(fate.result_at);
  }
};

using WorldEvents = EventBus<ClientCalling, ClientCreated, ClientRejected, ServiceBCalled, HttpSent>;

}  // namespace relaysim::sim::webhook
