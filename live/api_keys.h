// ApiKeys: who may call a live service's API. An admin key may do everything; a tenant's key
// (the webhook service's) may create, read and replay that tenant's requests and list its dead
// letters, nothing else. The SMS gateway's admin calls take an admin key; its businesses send
// with the tokens the back office issues them (model/sms/auth.h), not with these keys.
//
// A key is `rsk_<id>_<secret>`: the id finds its row, the secret (32 random bytes, hex) proves it.
// The database keeps the secret's SHA-256 only, so a copy of the database gives no usable key;
// a fast hash suffices where the secret is 256 random bits (no dictionary reaches it), and it is
// compared in constant time. A key is shown once, when created; it is revoked, never deleted (its
// id is not handed out again). Keys live in the service's own database, beside its requests or messages.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/time.h"
#include "model/store/sqlite_db.h"

namespace relaysim::live {

// Who a key speaks for: the admin, or one tenant (its cxid).
struct Principal {
  std::uint64_t key_id = 0;
  std::optional<std::string> tenant;  // none: the admin
  bool admin() const { return !tenant.has_value(); }
  // May act on the requests of `cxid`.
  bool may_act_for(std::string_view cxid) const { return admin() || *tenant == cxid; }
};

struct KeyInfo {
  std::uint64_t id = 0;
  std::optional<std::string> tenant;
  Time created_at{};
  std::optional<Time> revoked_at;
};

class ApiKeys {
 public:
  // Creates the table when absent. Throws StoreError.
  explicit ApiKeys(Db& db);
  ~ApiKeys();
  ApiKeys(const ApiKeys&) = delete;
  ApiKeys& operator=(const ApiKeys&) = delete;

  // A new key for `tenant` (none: an admin key): its text, to be shown once.
  struct Created {
    std::uint64_t id = 0;
    std::string key;
  };
  Created create(const std::optional<std::string>& tenant, Time now);
  // Whose key `presented` is; nullopt when it is not a key, not ours, or revoked.
  std::optional<Principal> check(std::string_view presented);
  enum class Revoked : std::uint8_t { revoked, no_such_key, last_admin };
  // Revokes key `id` (no_such_key: none, or revoked already). `keep_an_admin`: not when it is the
  // last admin key not revoked (last_admin) -- the API cannot lock its admins out; the command on
  // the host, which can make another, may.
  Revoked revoke(std::uint64_t id, Time now, bool keep_an_admin);
  // Admin keys that are not revoked.
  std::uint64_t active_admins();
  std::vector<KeyInfo> list();

 private:
  Db& db_;
  std::unique_ptr<Db::Statement> insert_, find_, revoke_, list_, admins_;
};

// Why `tenant` cannot be a key's tenant, or empty: it must be a cxid a create could carry (1 to
// 256 bytes), printable, with no space at either end (a list prints it as it is).
std::string tenant_problem(std::string_view tenant);

// The bearer token of an Authorization header ("Bearer rsk_..."); empty when it is not one.
std::string_view bearer_token(std::string_view authorization);

}  // namespace relaysim::live
