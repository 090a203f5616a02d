#include "model/sms/auth.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/core/random.h"
#include "model/sms/mutants.h"

namespace relaysim::sms {

Authorizer::Authorizer(TokenCodec& codec, const Clock& clock, std::size_t cache_entries)
    : codec_(codec), clock_(clock), cache_(cache_entries) {
  RELAYSIM_ASSERT(cache_entries > 0 && (cache_entries & (cache_entries - 1)) == 0, "the cache size is a power of two");
}

const Authorizer::Entry& Authorizer::lookup(std::string_view token) {
  // The cache slot comes from the token's tail only: a JWT ends in its signature, which differs
  // between any two tokens the platform issued, and hashing the whole token (a few hundred bytes,
  // on every send) cost more than the rest of the check. Two tokens with the same tail (a forgery
  // reusing a signature) only share a slot: the full comparison below tells them apart.
  constexpr std::size_t kTail = 24;
  const std::uint64_t h = hash_bytes(token.substr(token.size() > kTail ? token.size() - kTail : 0));
  Entry& e = cache_[h & (cache_.size() - 1)];
  if (e.hash != h || e.token != token) {
    e.hash = h;
    e.token.assign(token);
    e.fault = codec_.verify(token, e.claims);
    ++verified_;
  }
  return e;
}

AuthResult Authorizer::identify(std::string_view token) { return judge(lookup(token)); }

AuthResult Authorizer::judge(const Entry& e) const {
  if (e.fault != AuthFault::none) return {e.fault, 0, 0};
  const TokenClaims& c = e.claims;
  const std::int64_t now_s = to_ns(clock_.now()) / 1'000'000'000;
  const bool expired = planted(mutant::token_expiry_off_by_one) ? now_s > c.expires_at : now_s >= c.expires_at;
  if (expired && !planted(mutant::token_expiry_unchecked)) return {AuthFault::expired, 0, 0};
  return {AuthFault::none, c.business, c.epoch};
}

AuthResult Authorizer::check(std::string_view token, const SendScope& scope) {
  const Entry& e = lookup(token);
  const AuthResult who = judge(e);
  if (who.fault != AuthFault::none) return who;
  const TokenClaims& c = e.claims;
  const bool sender_granted = std::find(c.senders.begin(), c.senders.end(), scope.sender) != c.senders.end();
  const bool template_granted = std::find(c.templates.begin(), c.templates.end(), scope.template_id) != c.templates.end();
  if ((!sender_granted || !template_granted) && !planted(mutant::token_scope_unchecked)) {
    return {AuthFault::foreign_resource, 0, 0};
  }
  return who;
}

}  // namespace relaysim::sms
