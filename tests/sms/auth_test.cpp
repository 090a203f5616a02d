// SMS tokens (model/sms/auth.h, model/sms/jwt_codec.h): every bad token is refused with its true
// reason, a good one only for what it grants, and the HMAC is paid once per token.
#include <gtest/gtest.h>
#include <jwt.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "model/sms/auth.h"
#include "model/sms/jwt_codec.h"
#include "sim/kernel/kernel.h"

namespace relaysim::sms {
namespace {

const std::string kSecret = "0123456789abcdef0123456789abcdef";

TokenClaims claims() {
  TokenClaims c;
  c.business = 7;
  c.name = "shop-7";
  c.senders = {"SHOP"};
  c.templates = {3, 4};
  c.issued_at = 0;
  c.expires_at = 3600;
  c.epoch = 2;
  return c;
}

// A token signed by hand with libjwt under another algorithm or none.
std::string signed_with(jwt_alg_t alg, const std::string& key) {
  jwt_t* j = nullptr;
  jwt_new(&j);
  if (alg != JWT_ALG_NONE) jwt_set_alg(j, alg, reinterpret_cast<const unsigned char*>(key.data()), static_cast<int>(key.size()));
  jwt_add_grants_json(j, R"({"bid":7,"sub":"shop-7","res":["s:SHOP","t:3"],"iat":0,"exp":3600,"gen":2})");
  char* t = jwt_encode_str(j);
  std::string out(t);
  std::free(t);
  jwt_free(j);
  return out;
}

class CountingCodec final : public TokenCodec {
 public:
  explicit CountingCodec(TokenCodec& inner) : inner_(inner) {}
  std::string issue(const TokenClaims& c) override { return inner_.issue(c); }
  AuthFault verify(std::string_view t, TokenClaims& out) override {
    ++calls;
    return inner_.verify(t, out);
  }
  int calls = 0;

 private:
  TokenCodec& inner_;
};

TEST(JwtCodec, AnIssuedTokenVerifiesToItsClaims) {
  LibjwtCodec codec(kSecret);
  TokenClaims out;
  EXPECT_EQ(codec.verify(codec.issue(claims()), out), AuthFault::none);
  EXPECT_EQ(out, claims());
}

TEST(JwtCodec, EachBadTokenIsRefusedWithItsTrueReason) {
  LibjwtCodec codec(kSecret);
  TokenClaims out;
  const std::string good = codec.issue(claims());
  std::string forged = LibjwtCodec("another secret, also 32 bytes long!").issue(claims());
  // Another business's claims under this token's signature: what a tenant would try.
  TokenClaims theirs = claims();
  theirs.business = 8;
  const std::string other = codec.issue(theirs);
  const std::string altered = good.substr(0, good.find('.')) + other.substr(other.find('.'), other.rfind('.') - other.find('.')) +
                              good.substr(good.rfind('.'));
  EXPECT_EQ(codec.verify(forged, out), AuthFault::bad_signature);
  EXPECT_EQ(codec.verify(altered, out), AuthFault::bad_signature);
  EXPECT_EQ(codec.verify(signed_with(JWT_ALG_HS512, kSecret), out), AuthFault::wrong_alg);  // verifies, wrong algorithm
  EXPECT_EQ(codec.verify(signed_with(JWT_ALG_HS384, kSecret), out), AuthFault::wrong_alg);
  EXPECT_EQ(codec.verify(signed_with(JWT_ALG_NONE, ""), out), AuthFault::wrong_alg);
  EXPECT_EQ(codec.verify("", out), AuthFault::malformed);
  EXPECT_EQ(codec.verify("abc.def", out), AuthFault::malformed);
  EXPECT_EQ(codec.verify("abc.def.ghi", out), AuthFault::malformed);
  EXPECT_EQ(codec.verify(std::string("a\0b", 3), out), AuthFault::malformed);
  EXPECT_EQ(codec.verify(std::string(10000, 'a'), out), AuthFault::malformed);
}

// A genuine signature over claims that are not ours (a field missing) is still refused.
TEST(JwtCodec, GenuineButIncompleteClaimsAreMalformed) {
  jwt_t* j = nullptr;
  jwt_new(&j);
  jwt_set_alg(j, JWT_ALG_HS256, reinterpret_cast<const unsigned char*>(kSecret.data()), static_cast<int>(kSecret.size()));
  jwt_add_grants_json(j, R"({"bid":7,"sub":"shop-7","res":["x:SHOP"],"iat":0,"exp":3600,"gen":2})");
  char* t = jwt_encode_str(j);
  const std::string token(t);
  std::free(t);
  jwt_free(j);
  LibjwtCodec codec(kSecret);
  TokenClaims out;
  EXPECT_EQ(codec.verify(token, out), AuthFault::malformed);
}

class AuthorizerTest : public ::testing::Test {
 protected:
  LibjwtCodec jwt{kSecret};
  CountingCodec codec{jwt};
  sim::Kernel clock;
  Authorizer auth{codec, clock, 16};
};

TEST_F(AuthorizerTest, AGoodTokenPassesForWhatItGrantsOnly) {
  const std::string t = codec.issue(claims());
  const AuthResult ok = auth.check(t, {"SHOP", 3});
  EXPECT_EQ(ok.fault, AuthFault::none);
  EXPECT_EQ(ok.business, 7U);
  EXPECT_EQ(ok.epoch, 2U);
  EXPECT_EQ(auth.check(t, {"OTHER", 3}).fault, AuthFault::foreign_resource);
  EXPECT_EQ(auth.check(t, {"SHOP", 5}).fault, AuthFault::foreign_resource);
}

// A query uses no resource: identify names the business and the epoch, and judges expiry and the
// signature as check does.
TEST_F(AuthorizerTest, IdentifyJudgesTheTokenButNoScope) {
  const std::string t = codec.issue(claims());
  const AuthResult who = auth.identify(t);
  EXPECT_EQ(who.fault, AuthFault::none);
  EXPECT_EQ(who.business, 7U);
  EXPECT_EQ(who.epoch, 2U);
  EXPECT_EQ(auth.identify(signed_with(JWT_ALG_HS384, kSecret)).fault, AuthFault::wrong_alg);
  EXPECT_EQ(auth.identify(LibjwtCodec("another secret, also 32 bytes long").issue(claims())).fault,
            AuthFault::bad_signature);
  clock.advance_to(Time{} + std::chrono::seconds(3600));
  EXPECT_EQ(auth.identify(t).fault, AuthFault::expired);
}

TEST_F(AuthorizerTest, ExpiryIsJudgedOnEverySendByTheClock) {
  const std::string t = codec.issue(claims());
  EXPECT_EQ(auth.check(t, {"SHOP", 3}).fault, AuthFault::none);
  clock.advance_to(Time{} + std::chrono::seconds(3599));
  EXPECT_EQ(auth.check(t, {"SHOP", 3}).fault, AuthFault::none);
  clock.advance_to(Time{} + std::chrono::seconds(3600));
  EXPECT_EQ(auth.check(t, {"SHOP", 3}).fault, AuthFault::expired);
}

TEST_F(AuthorizerTest, TheHmacIsPaidOncePerTokenAndBadTokensAreCachedToo) {
  const std::string t = codec.issue(claims());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(auth.check(t, {"SHOP", 3}).fault, AuthFault::none);
  EXPECT_EQ(codec.calls, 1);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(auth.check("abc.def.ghi", {"SHOP", 3}).fault, AuthFault::malformed);
  EXPECT_EQ(codec.calls, 2);
  EXPECT_EQ(auth.verified(), 2U);
}

// Two tokens in one cache slot: each is judged as itself, never as the other.
TEST_F(AuthorizerTest, ACacheSlotNeverAnswersForAnotherToken) {
  std::vector<std::string> tokens;
  for (std::uint32_t b = 0; b < 64; ++b) {
    TokenClaims c = claims();
    c.business = b;
    tokens.push_back(codec.issue(c));
  }
  for (int round = 0; round < 2; ++round) {
    for (std::uint32_t b = 0; b < 64; ++b) EXPECT_EQ(auth.check(tokens[b], {"SHOP", 3}).business, b);
  }
}

}  // namespace
}  // namespace relaysim::sms
