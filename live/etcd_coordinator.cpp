#include "live/etcd_coordinator.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <optional>
#include <utility>

#include "model/core/assert.h"
#include "model/core/base64.h"

namespace relaysim::live {

namespace {

using Json = nlohmann::json;

// The gateway writes etcd's 64-bit integers as JSON strings ("revision": "12"), and leaves out a
// field at its zero value (no "TTL" once a lease is gone).
std::optional<std::int64_t> int64_of(const Json& object, std::string_view field) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(field);
  if (it == object.end()) return std::int64_t{0};
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (!it->is_string()) return std::nullopt;
  const std::string& text = it->get_ref<const std::string&>();
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// `object`'s string field, or nullopt when it has none of that type.
std::optional<std::string> string_of(const Json& object, std::string_view field) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(field);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// `object`'s boolean field, false when left out (the gateway leaves out a false), nullopt when it
// is of another type.
std::optional<bool> bool_of(const Json& object, std::string_view field) {
  const auto it = object.find(field);
  if (it == object.end()) return false;
  if (!it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

// The body of a 200 answer, parsed; nullopt for anything else.
std::optional<Json> answer_of(const HttpReply& reply) {
  if (reply.error != NetError::none || reply.status != 200) return std::nullopt;
  Json body = Json::parse(reply.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return std::nullopt;
  return body;
}

}  // namespace

// One acquire under way.
struct EtcdCoordinator::Ask {
  std::string key;
  std::uint64_t holder = 0;
  Duration ttl{};
  Time asked{};
  GrantCallback done;
  bool afresh = false;  // its holder's lease was gone, and it asked for a new one
  bool answered = false;
  void answer(bool granted, std::uint64_t token) {
    RELAYSIM_ASSERT(!answered, "an acquire is answered once");
    answered = true;
    done(LeaseGrant{granted, granted ? token : 0, asked + ttl});
  }
};

EtcdCoordinator::EtcdCoordinator(HttpCaller& caller, const Clock& clock, EtcdOptions options, sim::CoordinatorBus* grants)
    : caller_(caller), clock_(clock), options_(std::move(options)), grants_(grants), alive_(std::make_shared<bool>(true)) {
  RELAYSIM_ASSERT(!options_.endpoint.empty() && options_.timeout > Duration::zero(), "etcd has an endpoint and calls a deadline");
}

EtcdCoordinator::~EtcdCoordinator() { *alive_ = false; }

std::string EtcdCoordinator::held_key(std::string_view key, std::uint64_t holder) {
  return std::string(key) + '\n' + std::to_string(holder);
}

template <class F>
void EtcdCoordinator::post(std::string_view path, const std::string& body, F&& then) {
  static constexpr OutgoingHeader kJson[] = {{"Content-Type", "application/json"}};
  ++in_flight_;
  caller_.call("POST", options_.endpoint + std::string(path), kJson, body, options_.timeout,
               [this, alive = alive_, then = std::forward<F>(then)](HttpReply&& reply) mutable {
                 if (!*alive) return;
                 --in_flight_;
                 then(std::move(reply));
               });
}

void EtcdCoordinator::acquire(std::string_view name, std::uint64_t holder, Duration ttl, GrantCallback done) {
  RELAYSIM_ASSERT(!name.empty() && holder != 0 && ttl > Duration::zero(), "a lease has a name, a holder and a length");
  RELAYSIM_ASSERT(static_cast<bool>(done), "a call has someone to answer");
  auto ask = std::make_shared<Ask>();
  ask->key = options_.prefix + std::string(name);
  ask->holder = holder;
  ask->ttl = ttl;
  ask->asked = clock_.now();
  ask->done = std::move(done);
  const auto held = held_.find(held_key(ask->key, holder));
  if (held != held_.end()) {
    keep_alive(std::move(ask), held->second.lease);
  } else {
    grant(std::move(ask));
  }
}

void EtcdCoordinator::grant(std::shared_ptr<Ask> ask) {
  const std::int64_t seconds = std::chrono::ceil<std::chrono::seconds>(ask->ttl).count();
  post("/v3/lease/grant", Json{{"TTL", std::to_string(seconds)}}.dump(), [this, ask](HttpReply&& reply) {
    const std::optional<Json> body = answer_of(reply);
    const std::optional<std::int64_t> lease = body ? int64_of(*body, "ID") : std::nullopt;
    if (!lease || *lease == 0) {
      ++failures_;
      return ask->answer(false, 0);
    }
    put(ask, *lease);
  });
}

void EtcdCoordinator::put(std::shared_ptr<Ask> ask, std::int64_t lease) {
  const std::string key = base64(ask->key);
  const Json txn = {
      {"compare", Json::array({{{"key", key}, {"target", "CREATE"}, {"create_revision", "0"}}})},
      {"success", Json::array({{{"request_put", {{"key", key}, {"value", base64(std::to_string(ask->holder))},
                                                 {"lease", std::to_string(lease)}}}}})},
      {"failure", Json::array({{{"request_range", {{"key", key}}}}})}};
  post("/v3/kv/txn", txn.dump(), [this, ask, lease](HttpReply&& reply) {
    const std::optional<Json> body = answer_of(reply);
    if (!body || !body->contains("header")) {
      // Not known whether the key was put: the lease is given up (revoking it deletes the key if
      // it was), and the holder asks again at its next renewal.
      ++failures_;
      revoke(lease);
      return ask->answer(false, 0);
    }
    const std::optional<bool> succeeded = bool_of(*body, "succeeded");
    if (!succeeded) {
      ++failures_;
      revoke(lease);
      return ask->answer(false, 0);
    }
    if (*succeeded) {
      const std::optional<std::int64_t> revision = int64_of((*body)["header"], "revision");
      if (!revision || *revision <= 0) {
        ++failures_;
        revoke(lease);
        return ask->answer(false, 0);
      }
      const auto token = static_cast<std::uint64_t>(*revision);
      held_[held_key(ask->key, ask->holder)] = Held{lease, token};
      return granted(*ask, token, false);
    }
    revoke(lease);  // not this holder's to keep
    // The key exists: whose is it?
    const Json* kv = nullptr;
    if (const auto r = body->find("responses"); r != body->end() && r->is_array() && r->size() == 1 && (*r)[0].is_object()) {
      const auto range = (*r)[0].find("response_range");
      if (range != (*r)[0].end() && range->is_object()) {
        const auto kvs = range->find("kvs");
        if (kvs != range->end() && kvs->is_array() && kvs->size() == 1) kv = &(*kvs)[0];
      }
    }
    if (kv == nullptr || !kv->is_object()) {
      ++failures_;
      return ask->answer(false, 0);
    }
    const std::optional<std::string> text = string_of(*kv, "value");
    const std::optional<std::string> value = text ? unbase64(*text, 64) : std::nullopt;
    const std::optional<std::int64_t> created = int64_of(*kv, "create_revision");
    const std::optional<std::int64_t> theirs = int64_of(*kv, "lease");
    if (value && *value == std::to_string(ask->holder) && created && *created > 0 && theirs && *theirs != 0) {
      // This holder's key on a lease of its own: an earlier grant whose answer did not come back.
      held_[held_key(ask->key, ask->holder)] = Held{*theirs, static_cast<std::uint64_t>(*created)};
      return keep_alive(ask, *theirs);
    }
    ask->answer(false, 0);
  });
}

void EtcdCoordinator::keep_alive(std::shared_ptr<Ask> ask, std::int64_t lease) {
  post("/v3/lease/keepalive", Json{{"ID", std::to_string(lease)}}.dump(), [this, ask, lease](HttpReply&& reply) {
    const std::optional<Json> body = answer_of(reply);
    const std::optional<std::int64_t> ttl =
        body && body->contains("result") ? int64_of((*body)["result"], "TTL") : std::nullopt;
    if (!ttl) {
      ++failures_;
      return ask->answer(false, 0);
    }
    const auto held = held_.find(held_key(ask->key, ask->holder));
    if (*ttl > 0 && std::chrono::seconds(*ttl) < ask->ttl) {
      // A lease granted for less than this ask wants (another coordinator of the holder asked
      // for a shorter one): renewing it would promise more than etcd keeps. It is given up (its
      // key goes with it) and the ask refused; the next one takes a lease of the right length.
      if (held != held_.end() && held->second.lease == lease) held_.erase(held);
      revoke(lease);
      return ask->answer(false, 0);
    }
    if (*ttl <= 0) {
      // The lease is gone, and the key with it: a new term, if the name is free. (Once: a key
      // etcd has yet to delete with its expired lease is refused, not chased.)
      if (held != held_.end() && held->second.lease == lease) held_.erase(held);
      if (ask->afresh) return ask->answer(false, 0);
      ask->afresh = true;
      return grant(ask);
    }
    if (held == held_.end() || held->second.lease != lease) return ask->answer(false, 0);  // released meanwhile
    granted(*ask, held->second.token, true);
  });
}

void EtcdCoordinator::granted(Ask& ask, std::uint64_t token, bool renewed) {
  if (grants_ != nullptr) {
    const std::string_view name = std::string_view(ask.key).substr(options_.prefix.size());
    grants_->emit(sim::LeaseGranted{name, ask.holder, token, renewed, ask.asked + ask.ttl, clock_.now()});
  }
  ask.answer(true, token);
}

void EtcdCoordinator::revoke(std::int64_t lease) {
  post("/v3/lease/revoke", Json{{"ID", std::to_string(lease)}}.dump(), [this](HttpReply&& reply) {
    // A lease not revoked runs out by itself; a revoke of one gone already is answered 404-like.
    if (reply.error != NetError::none) ++failures_;
  });
}

void EtcdCoordinator::release(std::string_view name, std::uint64_t holder) {
  const auto held = held_.find(held_key(options_.prefix + std::string(name), holder));
  if (held == held_.end()) return;
  const std::int64_t lease = held->second.lease;
  held_.erase(held);
  revoke(lease);
}

}  // namespace relaysim::live
