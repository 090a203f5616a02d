#include "live/outbox/api.h"

#include <nlohmann/json.hpp>

#include <limits>
#include <type_traits>
#include <utility>

#include "live/json_api.h"
#include "model/core/assert.h"

namespace relaysim::live::outbox {

using nlohmann::json;

namespace {

// The largest entity key: the databases keep keys as BIGINT.
constexpr std::uint64_t kMaxKey = (std::uint64_t{1} << 63) - 1;

std::optional<std::uint32_t> type_named(const model::RelayConfig& config, std::string_view name) {
  for (std::uint32_t t = 0; t < config.types.size(); ++t) {
    if (config.types[t].name == name) return t;
  }
  return std::nullopt;
}

std::string type_names(const model::RelayConfig& config) {
  std::string names;
  for (const model::TypePolicy& t : config.types) names += (names.empty() ? "" : ", ") + t.name;
  return names;
}

}  // namespace

std::variant<Order, Response> read_order(const Incoming& in, const model::RelayConfig& config) {
  json body;
  if (std::optional<Response> refused = read_json_body(in, body)) return std::move(*refused);
  if (!body.is_object()) return error_response(400, "the body must be a JSON object");
  if (std::optional<Response> refused = only_fields(body, {"key", "types", "fails"})) return std::move(*refused);
  Order order;
  if (!body.contains("key") || !body["key"].is_number_unsigned() || body["key"].get<std::uint64_t>() > kMaxKey) {
    return error_response(400, "\"key\" must be the entity's key, a whole number below 2^63");
  }
  order.key = body["key"].get<std::uint64_t>();
  if (body.contains("types")) {
    const json& types = body["types"];
    if (!types.is_array() || types.empty() || types.size() > kMaxMessagesPerOrder) {
      return error_response(400, "\"types\" must be a list of 1 to " + std::to_string(kMaxMessagesPerOrder) +
                                     " message types (" + type_names(config) + ")");
    }
    for (const json& t : types) {
      const std::optional<std::uint32_t> type =
          t.is_string() ? type_named(config, t.get_ref<const std::string&>()) : std::nullopt;
      if (!type) {
        return error_response(400, "\"types\" holds " + t.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 80) +
                                       ", not one of the platform's message types (" + type_names(config) + ")");
      }
      order.types.push_back(*type);
    }
  } else {
    order.types.push_back(0);
  }
  if (body.contains("fails")) {
    if (!body["fails"].is_boolean()) return error_response(400, "\"fails\" must be true or false");
    order.fails = body["fails"].get<bool>();
  }
  return order;
}

std::string record_body(const model::Record& r, const model::RelayConfig& config) {
  RELAYSIM_ASSERT(r.type < config.types.size(), "a record of one of the platform's types");
  return dump_json(json{{"shard", r.shard},
                        {"id", r.id},
                        {"attempt", r.attempt},
                        {"type", config.types[r.type].name},
                        {"key", r.key},
                        {"version", r.version},
                        {"fence", r.fence},
                        {"created_at", to_ns(r.created_at)}});
}

std::optional<model::Record> read_record_body(std::string_view text, const model::RelayConfig& config,
                                              std::string& problem) {
  const json body = json::parse(text, nullptr, false);
  if (!body.is_object()) {
    problem = "the body must be a JSON object";
    return std::nullopt;
  }
  model::Record r;
  const auto whole = [&](const char* name, auto& out) {
    using T = std::remove_reference_t<decltype(out)>;
    if (!body.contains(name) || !body[name].is_number_unsigned() ||
        body[name].template get<std::uint64_t>() > std::numeric_limits<T>::max()) {
      problem = std::string("\"") + name + "\" must be a whole number";
      return false;
    }
    out = body[name].template get<T>();
    return true;
  };
  std::uint64_t created = 0;
  if (!whole("shard", r.shard) || !whole("id", r.id) || !whole("attempt", r.attempt) || !whole("key", r.key) ||
      !whole("version", r.version) || !whole("fence", r.fence) || !whole("created_at", created)) {
    return std::nullopt;
  }
  if (r.shard >= config.shards) {
    problem = "\"shard\" must be one of the platform's " + std::to_string(config.shards) + " shards";
    return std::nullopt;
  }
  if (r.id == 0 || r.id >= (model::RowId{1} << model::MessageRef::kShardShift)) {
    problem = "\"id\" must be a message's id, 1 to 2^48 - 1";  // the inbox keeps a shard and an id in one number
    return std::nullopt;
  }
  if (r.key > kMaxKey) {
    problem = "\"key\" must be an entity's key, below 2^63";
    return std::nullopt;
  }
  if (created > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    problem = "\"created_at\" must be a time in nanoseconds";
    return std::nullopt;
  }
  r.created_at = time_from_ns(static_cast<std::int64_t>(created));
  const std::optional<std::uint32_t> type =
      body.contains("type") && body["type"].is_string() ? type_named(config, body["type"].get_ref<const std::string&>())
                                                        : std::nullopt;
  if (!type) {
    problem = "\"type\" must be one of the platform's message types (" + type_names(config) + ")";
    return std::nullopt;
  }
  r.type = *type;
  return r;
}

void Api::handle(const Incoming& in, Respond respond) {
  if (in.target == "/v1/orders") {
    if (in.method != "POST") return respond(method_not_allowed("POST"));
    return respond(order(in));
  }
  if (in.target == "/v1/status") {
    if (in.method != "GET") return respond(method_not_allowed("GET"));
    return respond(status());
  }
  respond(error_response(404, "no such resource (the API is POST /v1/orders and GET /v1/status)"));
}

Response Api::order(const Incoming& in) {
  if (draining_) {
    Response r = error_response(503, "this process is draining: send the operation to another");
    r.headers.emplace_back("Retry-After", "1");
    return r;
  }
  std::variant<Order, Response> read = read_order(in, config_);
  if (Response* refused = std::get_if<Response>(&read)) return std::move(*refused);
  const Order& order = std::get<Order>(read);
  const model::OperationResult result = node_.operate(model::OperationRequest{order.key, order.types, order.fails});
  switch (result.outcome) {
    case model::OperationOutcome::committed:
      return json_response(201, json{{"outcome", "committed"},
                                     {"shard", result.shard},
                                     {"first", result.first},
                                     {"version", result.version},
                                     {"messages", order.types.size()}});
    case model::OperationOutcome::rolled_back:
      return json_response(409, json{{"outcome", "rolled_back"},
                                     {"shard", result.shard},
                                     {"error", "the business rule failed after the writes: the transaction was rolled "
                                               "back, and none of its messages will be published"}});
    case model::OperationOutcome::unavailable: break;
  }
  Response r = error_response(503, "shard " + std::to_string(result.shard) +
                                       "'s database failed: the operation is not known to have committed; try again");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

Response Api::status() const {
  json leads = json::array();
  for (model::ShardId s = 0; s < config_.shards; ++s) {
    if (node_.relay().leads(s)) leads.push_back(s);
  }
  return json_response(200, json{{"pod", pod_}, {"leads", leads}, {"in_flight", node_.in_flight()}, {"draining", draining_}});
}

}  // namespace relaysim::live::outbox
