#include "live/api_keys.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <array>
#include <charconv>
#include <stdexcept>

#include "model/core/assert.h"

namespace relaysim::live {

namespace {

constexpr std::string_view kPrefix = "rsk_";
constexpr std::size_t kSecretBytes = 32;
constexpr std::size_t kSecretHex = 2 * kSecretBytes;

std::string hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

// The secret's SHA-256, in hex: what the database keeps.
std::string digest(std::string_view secret) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> out{};
  SHA256(reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), out.data());
  return hex(out.data(), out.size());
}

}  // namespace

std::string tenant_problem(std::string_view tenant) {
  if (tenant.empty()) return "a tenant is a cxid: it is empty";
  if (tenant.size() > 256) return "a tenant is a cxid of at most 256 bytes";
  if (tenant.front() == ' ' || tenant.back() == ' ') return "a tenant has no space at either end";
  for (const char c : tenant) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "a tenant holds no control characters";
  }
  return {};
}

std::string_view bearer_token(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() <= kBearer.size()) return {};
  for (std::size_t i = 0; i < kBearer.size(); ++i) {  // the scheme's name is case-insensitive (RFC 9110)
    const char c = authorization[i];
    const char want = kBearer[i];
    if ((c | 0x20) != (want | 0x20)) return {};
  }
  std::string_view token = authorization.substr(kBearer.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token;
}

ApiKeys::ApiKeys(Db& db) : db_(db) {
  db_.exec(
      "CREATE TABLE IF NOT EXISTS api_keys ("
      "  id INTEGER PRIMARY KEY AUTOINCREMENT,"  // never reused: a revoked key's id stays its own
      "  tenant TEXT,"                           // NULL: an admin key
      "  digest TEXT NOT NULL,"                  // SHA-256 of the secret, hex
      "  created_at INTEGER NOT NULL,"
      "  revoked_at INTEGER)");
}

ApiKeys::~ApiKeys() = default;

ApiKeys::Created ApiKeys::create(const std::optional<std::string>& tenant, Time now) {
  std::array<unsigned char, kSecretBytes> random{};
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
    throw std::runtime_error("the system's random generator failed; no key was made");
  }
  RELAYSIM_ASSERT(!tenant || tenant_problem(*tenant).empty(), "a key's tenant was checked before");
  const std::string secret = hex(random.data(), random.size());
  const std::string d = digest(secret);
  Db::Statement& insert =
      db_.prepared(insert_, "INSERT INTO api_keys (tenant, digest, created_at) VALUES (?1, ?2, ?3)");
  ResetOnExit reset(insert);
  if (tenant) {
    insert.bind(1, std::string_view(*tenant));
  }
  insert.bind(2, std::string_view(d)).bind(3, now);
  insert.run();
  const auto id = static_cast<std::uint64_t>(db_.last_insert_rowid());
  db_.wrote();
  return {id, std::string(kPrefix) + std::to_string(id) + "_" + secret};
}

std::optional<Principal> ApiKeys::check(std::string_view presented) {
  if (presented.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  presented.remove_prefix(kPrefix.size());
  const std::size_t sep = presented.find('_');
  if (sep == std::string_view::npos || presented.size() - sep - 1 != kSecretHex) return std::nullopt;
  std::uint64_t id = 0;
  const auto [end, ec] = std::from_chars(presented.data(), presented.data() + sep, id);
  // One key, one spelling: no leading zeros (a scanner looking for a key finds it as made).
  if (ec != std::errc{} || end != presented.data() + sep || id == 0 || presented.front() == '0') return std::nullopt;
  const std::string_view secret = presented.substr(sep + 1);
  Db::Statement& find = db_.prepared(find_, "SELECT tenant, digest, revoked_at FROM api_keys WHERE id = ?1");
  ResetOnExit reset(find);
  find.bind(1, id);
  if (!find.step()) return std::nullopt;
  const std::string_view stored = find.text_view(1);
  const std::string d = digest(secret);
  // Constant time: how much of a guess matches must not show in how long the answer takes.
  if (stored.size() != d.size() || CRYPTO_memcmp(stored.data(), d.data(), d.size()) != 0) return std::nullopt;
  if (!find.is_null(2)) return std::nullopt;  // revoked
  Principal p;
  p.key_id = id;
  if (!find.is_null(0)) p.tenant = std::string(find.text_view(0));
  return p;
}

ApiKeys::Revoked ApiKeys::revoke(std::uint64_t id, Time now, bool keep_an_admin) {
  // One statement: the count of admins it leaves is read where it writes.
  Db::Statement& revoke = db_.prepared(
      revoke_,
      "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL AND NOT (?3 AND tenant IS NULL AND "
      "(SELECT COUNT(*) FROM api_keys WHERE tenant IS NULL AND revoked_at IS NULL) = 1)");
  revoke.bind(1, id).bind(2, now).bind(3, keep_an_admin ? 1 : 0).run();
  if (db_.changes() == 1) {
    db_.wrote();
    return Revoked::revoked;
  }
  Db::Statement& find = db_.prepared(find_, "SELECT tenant, digest, revoked_at FROM api_keys WHERE id = ?1");
  ResetOnExit reset(find);
  find.bind(1, id);
  return find.step() && find.is_null(2) ? Revoked::last_admin : Revoked::no_such_key;
}

std::vector<KeyInfo> ApiKeys::list() {
  Db::Statement& list = db_.prepared(list_, "SELECT id, tenant, created_at, revoked_at FROM api_keys ORDER BY id");
  ResetOnExit reset(list);
  std::vector<KeyInfo> out;
  while (list.step()) {
    KeyInfo k;
    k.id = static_cast<std::uint64_t>(list.i64(0));
    if (!list.is_null(1)) k.tenant = std::string(list.text_view(1));
    k.created_at = list.time(2);
    if (!list.is_null(3)) k.revoked_at = list.time(3);
    out.push_back(std::move(k));
  }
  return out;
}

std::uint64_t ApiKeys::active_admins() {
  Db::Statement& admins =
      db_.prepared(admins_, "SELECT COUNT(*) FROM api_keys WHERE tenant IS NULL AND revoked_at IS NULL");
  ResetOnExit reset(admins);
  return admins.step() ? static_cast<std::uint64_t>(admins.i64(0)) : 0;
}


}  // namespace relaysim::live
