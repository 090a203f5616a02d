#include "model/sms/jwt_codec.h"

#include <jwt.h>

#include <charconv>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "model/core/assert.h"

namespace relaysim::sms {

namespace {
struct JwtFree {
  void operator()(jwt_t* j) const { jwt_free(j); }
};
using JwtPtr = std::unique_ptr<jwt_t, JwtFree>;
struct CharFree {
  void operator()(char* s) const { std::free(s); }
};
using CharPtr = std::unique_ptr<char, CharFree>;

const unsigned char* key_of(const std::string& s) { return reinterpret_cast<const unsigned char*>(s.data()); }

// Reads the claims of a verified token; false when one is missing or of the wrong type.
bool read_claims(jwt_t* j, TokenClaims& out) {
  const CharPtr json(jwt_get_grants_json(j, nullptr));
  if (!json) return false;
  const nlohmann::json claims = nlohmann::json::parse(json.get(), nullptr, /*allow_exceptions=*/false);
  if (!claims.is_object()) return false;
  const auto num = [&](const char* k) { return claims.contains(k) && claims[k].is_number_integer(); };
  if (!num("bid") || !num("iat") || !num("exp") || !num("gen") || !claims.contains("sub") || !claims["sub"].is_string() ||
      !claims.contains("res") || !claims["res"].is_array()) {
    return false;
  }
  out = TokenClaims{};
  out.business = claims["bid"].get<BusinessId>();
  out.name = claims["sub"].get<std::string>();
  out.issued_at = claims["iat"].get<std::int64_t>();
  out.expires_at = claims["exp"].get<std::int64_t>();
  out.epoch = claims["gen"].get<std::uint64_t>();
  for (const auto& r : claims["res"]) {
    if (!r.is_string()) return false;
    const std::string& s = r.get_ref<const std::string&>();
    if (s.rfind("s:", 0) == 0) {
      out.senders.push_back(s.substr(2));
    } else if (s.rfind("t:", 0) == 0) {
      std::uint32_t id = 0;
      const auto [end, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), id);
      if (ec != std::errc{} || end != s.data() + s.size()) return false;
      out.templates.push_back(id);
    } else {
      return false;
    }
  }
  return true;
}
}  // namespace

LibjwtCodec::LibjwtCodec(std::string secret) : secret_(std::move(secret)) {
  RELAYSIM_ASSERT(secret_.size() >= 32, "an HS256 secret has at least 32 bytes (RFC 7518 3.2)");
}

std::string LibjwtCodec::issue(const TokenClaims& claims) {
  nlohmann::json res = nlohmann::json::array();
  for (const std::string& s : claims.senders) res.push_back("s:" + s);
  for (const std::uint32_t t : claims.templates) res.push_back("t:" + std::to_string(t));
  const nlohmann::json grants = {{"bid", claims.business}, {"sub", claims.name}, {"res", res},
                                 {"iat", claims.issued_at}, {"exp", claims.expires_at}, {"gen", claims.epoch}};
  jwt_t* raw = nullptr;
  RELAYSIM_ASSERT(jwt_new(&raw) == 0, "out of memory");
  const JwtPtr j(raw);
  RELAYSIM_ASSERT(jwt_set_alg(j.get(), JWT_ALG_HS256, key_of(secret_), static_cast<int>(secret_.size())) == 0, "HS256");
  RELAYSIM_ASSERT(jwt_add_grants_json(j.get(), grants.dump().c_str()) == 0, "the claims are JSON");
  const CharPtr token(jwt_encode_str(j.get()));
  RELAYSIM_ASSERT(token != nullptr, "out of memory");
  return std::string(token.get());
}

AuthFault LibjwtCodec::verify(std::string_view token, TokenClaims& out) {
  if (token.size() > 8192 || token.find('\0') != std::string_view::npos) return AuthFault::malformed;
  text_.assign(token);
  jwt_t* raw = nullptr;
  if (jwt_decode(&raw, text_.c_str(), key_of(secret_), static_cast<int>(secret_.size())) == 0) {
    const JwtPtr j(raw);
    if (jwt_get_alg(j.get()) != JWT_ALG_HS256) return AuthFault::wrong_alg;
    return read_claims(j.get(), out) ? AuthFault::none : AuthFault::malformed;
  }
  // It failed: unreadable, or readable with a signature that does not verify, or an algorithm
  // (such as none) that needs no key. Read it without verifying, only to say which.
  if (jwt_decode(&raw, text_.c_str(), nullptr, 0) != 0) return AuthFault::malformed;
  const JwtPtr j(raw);
  const char* alg = jwt_get_header(j.get(), "alg");
  if (alg == nullptr) return AuthFault::malformed;
  return std::string_view(alg) == "HS256" ? AuthFault::bad_signature : AuthFault::wrong_alg;
}

}  // namespace relaysim::sms
