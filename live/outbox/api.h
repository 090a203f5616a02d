// The outbox relay's HTTP formats (docs/live.md, "The outbox relay, live"): the small business
// API a `relaysim serve` of `system: outbox` answers, and the body of the record its consumers
// hand to the downstream.
//
// The business API (Api):
//   POST /v1/orders {"key": K, "types": ["order_created", ...], "fails": false}
//     One business operation (model/outbox/node.h's Node::operate): the entity K's row and one
//     outbox row per entry of "types" (default: the first type), in one transaction of K's
//     shard. "fails": true makes its business rule fail after the writes, so the transaction
//     rolls back — the demo's stand-in for a real rule that can fail.
//     201 {"outcome": "committed", "shard", "first", "version", "messages"}
//     409 {"outcome": "rolled_back", "shard", "error"}: nothing of it exists, nothing is published
//     503 {"error"} with Retry-After: the shard's database failed (nothing committed), or the
//         process is draining
//   GET /v1/status {"pod", "leads": [shards], "in_flight", "draining"}
//
// The downstream's record (record_body, read_record_body): POSTed by a consumer to serve.downstream
//   {"shard", "id", "attempt", "type": name, "key", "version", "fence", "created_at": ns}
// and answered as model/outbox/ports.h's classify_handled reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "live/http_server.h"
#include "model/outbox/config.h"
#include "model/outbox/node.h"

namespace relaysim::live::outbox {

namespace model = relaysim::outbox;

// The most messages one operation writes through the API.
inline constexpr std::size_t kMaxMessagesPerOrder = 64;

struct Order {
  model::EntityKey key = 0;
  std::vector<std::uint32_t> types;  // indexes into the platform's types
  bool fails = false;
};

// POST /v1/orders' body read strictly, or the 4xx that refuses it. A key is a whole number below
// 2^63 (the databases' BIGINT); a type is one of the platform's by name.
std::variant<Order, Response> read_order(const Incoming& in, const model::RelayConfig& config);

std::string record_body(const model::Record& r, const model::RelayConfig& config);
// A record body as record_body writes it, its type's name resolved among `config`'s types; or
// nullopt and why not in `problem`.
std::optional<model::Record> read_record_body(std::string_view body, const model::RelayConfig& config,
                                              std::string& problem);

class Api {
 public:
  Api(model::Node& node, const model::RelayConfig& config, std::uint32_t pod)
      : node_(node), config_(config), pod_(pod) {}
  void handle(const Incoming& in, Respond respond);
  void set_draining(bool draining) { draining_ = draining; }

 private:
  Response order(const Incoming& in);
  Response status() const;

  model::Node& node_;
  const model::RelayConfig& config_;
  std::uint32_t pod_;
  bool draining_ = false;
};

}  // namespace relaysim::live::outbox
