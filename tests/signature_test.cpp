// Standard Webhooks signatures: the scheme's own test vector, and what a receiver refuses.
#include <gtest/gtest.h>

#include <string>

#include "model/webhook/signature.h"

namespace relaysim::webhook {
namespace {

// From the Standard Webhooks reference libraries' tests (libraries/go/webhook_test.go).
constexpr std::string_view kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr std::string_view kId = "msg_p5jXN8AQM9LWM0D4loKWxJek";
constexpr std::int64_t kAt = 1614265330;
constexpr std::string_view kBody = R"({"test": 2432232314})";
constexpr std::string_view kSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

TEST(Signature, SignsAsTheReferenceLibrariesDo) {
  const auto key = SigningKey::parse(kSecret);
  ASSERT_TRUE(key);
  EXPECT_EQ(sign(*key, kId, kAt, kBody), kSignature);
  EXPECT_EQ(key->text(), kSecret);
  const auto bare = SigningKey::parse(kSecret.substr(6));
  ASSERT_TRUE(bare) << "the base64 alone is the same key";
  EXPECT_EQ(sign(*bare, kId, kAt, kBody), kSignature);
}

TEST(Signature, AKeyIsBase64OfTwentyFourToSixtyFourBytes) {
  for (const char* bad : {"", "whsec_", "whsec_!!!!", "abc", "ab=c", "whsec_AAAAAAAAAAAAAAAAAAAAAA==", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS"}) {
    EXPECT_FALSE(SigningKey::parse(bad)) << "'" << bad << "'";
  }
  EXPECT_TRUE(SigningKey::parse("whsec_" + std::string(32, 'A')));   // 24 bytes
  EXPECT_FALSE(SigningKey::parse("whsec_" + std::string(88, 'A')));  // 66 bytes
}

TEST(Signature, AReceiverAcceptsWhatWasSignedAndRefusesTheRest) {
  const auto key = *SigningKey::parse(kSecret);
  const std::string at = std::to_string(kAt);
  EXPECT_EQ(verify(key, kId, at, kSignature, kBody, kAt), SignatureFault::none);
  EXPECT_EQ(verify(key, kId, at, "v1,bm9wZQ== v2,x " + std::string(kSignature) + " v1,YWJj", kBody, kAt), SignatureFault::none)
      << "one of several signatures (a key being rotated) is enough";
  EXPECT_EQ(verify(key, kId, at, kSignature, R"({"test": 2432232315})", kAt), SignatureFault::no_match) << "another body";
  EXPECT_EQ(verify(key, "msg_other", at, kSignature, kBody, kAt), SignatureFault::no_match) << "another id";
  EXPECT_EQ(verify(key, kId, at, "v2," + std::string(kSignature.substr(3)), kBody, kAt), SignatureFault::no_match) << "another version";
  EXPECT_EQ(verify(key, kId, at, "", kBody, kAt), SignatureFault::no_match);
  EXPECT_EQ(verify(*SigningKey::parse("whsec_" + std::string(32, 'A')), kId, at, kSignature, kBody, kAt), SignatureFault::no_match)
      << "another key";
  EXPECT_EQ(verify(key, kId, "0" + at, kSignature, kBody, kAt), SignatureFault::no_match) << "signed digit for digit as sent";
  EXPECT_EQ(verify(key, kId, at, kSignature, kBody, kAt + 301), SignatureFault::too_old);
  EXPECT_EQ(verify(key, kId, at, kSignature, kBody, kAt + 300), SignatureFault::none);
  EXPECT_EQ(verify(key, kId, at, kSignature, kBody, kAt - 301), SignatureFault::too_new);
  for (const char* bad : {"", "12a", "-5", " 1", "99999999999999999999"}) {
    EXPECT_EQ(verify(key, kId, bad, kSignature, kBody, kAt), SignatureFault::malformed_timestamp) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace relaysim::webhook
