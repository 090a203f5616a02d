// Auth for the SMS gateway: the tokens the back office issues to an approved business, and the
// check every send passes before it is stored.
//
// A token is a JWT signed with HS256 (through libjwt: model/sms/jwt_codec.h). Its claims name the
// business and the resources it was granted — senders ("s:<name>") and templates ("t:<id>") —
// with an expiry and the grant's epoch: revoking a business's grant starts a new epoch, so every
// token of the old one is refused.
//
// Promises of Authorizer::check:
//  - a token that does not parse is `malformed`; one signed with another key or altered is
//    `bad_signature`; one whose header names any algorithm but HS256 (none, HS384, HS512) is
//    `wrong_alg` — even when its HMAC would verify under the same secret;
//  - a token whose exp has come (by the clock the gateway runs on) is `expired`;
//  - a send whose sender or template the token does not grant is `foreign_resource`;
//  - otherwise it passes, naming the business and the token's epoch. Whether that epoch is still
//    the business's is judged where the epoch is stored, in the same transaction that accepts the
//    message, so a revocation cannot race a send (`revoked`).
//  - Verified tokens are cached by their text (a bounded table), so a business sending with one
//    token pays for its HMAC once; expiry and scope are judged on every send.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/names.h"
#include "model/core/ports.h"

namespace relaysim::sms {

using BusinessId = std::uint32_t;

struct TokenClaims {
  BusinessId business = 0;                // "bid"
  std::string name;                       // "sub": the business's name
  std::vector<std::string> senders;       // "res": "s:<sender>"
  std::vector<std::uint32_t> templates;   // "res": "t:<id>"
  std::int64_t issued_at = 0;             // "iat", in seconds of the gateway's clock
  std::int64_t expires_at = 0;            // "exp", the same
  std::uint64_t epoch = 0;                // "gen": the grant's epoch
  bool operator==(const TokenClaims&) const = default;
};

enum class AuthFault : std::uint8_t { none, malformed, bad_signature, wrong_alg, expired, foreign_resource, revoked };
inline constexpr auto kAuthFaultNames = names<AuthFault>({
    {AuthFault::none, "none"}, {AuthFault::malformed, "malformed"}, {AuthFault::bad_signature, "bad_signature"},
    {AuthFault::wrong_alg, "wrong_alg"}, {AuthFault::expired, "expired"},
    {AuthFault::foreign_resource, "foreign_resource"}, {AuthFault::revoked, "revoked"}});
constexpr std::string_view to_string(AuthFault f) { return kAuthFaultNames[f]; }
inline constexpr int kAuthFaultCount = kAuthFaultNames.count;

// The port to a JWT library.
class TokenCodec {
 public:
  virtual ~TokenCodec() = default;
  virtual std::string issue(const TokenClaims& claims) = 0;
  // Checks the token's form, algorithm and signature and reads its claims; judges neither time
  // nor scope. Returns none, malformed, bad_signature or wrong_alg.
  virtual AuthFault verify(std::string_view token, TokenClaims& out) = 0;
};

// What a send asks to use.
struct SendScope {
  std::string_view sender;
  std::uint32_t template_id = 0;
};

struct AuthResult {
  AuthFault fault = AuthFault::malformed;
  BusinessId business = 0;  // when it passed
  std::uint64_t epoch = 0;
};

class Authorizer {
 public:
  // `cache_entries`: a power of two.
  Authorizer(TokenCodec& codec, const Clock& clock, std::size_t cache_entries = 4096);
  AuthResult check(std::string_view token, const SendScope& scope);
  // The same without a scope, for a call that uses no resource (a query): whose token it is.
  AuthResult identify(std::string_view token);

  std::uint64_t verified() const { return verified_; }  // codec calls so far (cache misses)

 private:
  struct Entry {
    std::uint64_t hash = 0;
    std::string token;
    AuthFault fault = AuthFault::malformed;
    TokenClaims claims;
  };
  // The cached verification of `token` (the codec is asked on a miss).
  const Entry& lookup(std::string_view token);
  // Its form and signature, then its expiry.
  AuthResult judge(const Entry& e) const;

  TokenCodec& codec_;
  const Clock& clock_;
  std::vector<Entry> cache_;
  std::uint64_t verified_ = 0;
};

}  // namespace relaysim::sms
