#include "model/webhook/signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <limits>

#include "model/core/assert.h"
#include "model/core/base64.h"

namespace relaysim::webhook {

namespace {

constexpr std::string_view kSecretPrefix = "whsec_";
constexpr std::string_view kVersion = "v1,";

std::string mac(const std::string& key, std::string_view id, std::string_view timestamp, std::string_view body) {
  std::string message;
  message.reserve(id.size() + timestamp.size() + body.size() + 2);
  message.append(id).append(".").append(timestamp).append(".").append(body);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  const unsigned char* ok = HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
                                 message.size(), digest, &length);
  RELAYSIM_ASSERT(ok != nullptr && length == 32, "HMAC-SHA256 gives 32 bytes");
  return base64(std::string_view(reinterpret_cast<const char*>(digest), length));
}

}  // namespace

std::optional<SigningKey> SigningKey::parse(std::string_view text) {
  if (text.starts_with(kSecretPrefix)) text.remove_prefix(kSecretPrefix.size());
  std::optional<std::string> bytes = unbase64(text, 4096);
  if (!bytes || bytes->size() < 24 || bytes->size() > 64) return std::nullopt;
  return SigningKey(std::move(*bytes));
}

std::string SigningKey::text() const {
  return std::string(kSecretPrefix) + base64(bytes_);
}

std::string sign(const SigningKey& key, std::string_view id, std::int64_t timestamp_s, std::string_view body) {
  RELAYSIM_ASSERT(key.bytes().size() >= 24 && key.bytes().size() <= 64, "a signing key holds 24 to 64 bytes");
  return std::string(kVersion) + mac(key.bytes(), id, std::to_string(timestamp_s), body);
}

SignatureFault verify(const SigningKey& key, std::string_view id, std::string_view timestamp, std::string_view signature_header,
                      std::string_view body, std::int64_t now_s, std::int64_t tolerance_s) {
  RELAYSIM_ASSERT(tolerance_s >= 0, "a timestamp's tolerance is not negative");
  std::int64_t at = 0;
  const auto [end, ec] = std::from_chars(timestamp.data(), timestamp.data() + timestamp.size(), at);
  if (ec != std::errc{} || end != timestamp.data() + timestamp.size() || timestamp.empty() || timestamp.front() == '-') {
    return SignatureFault::malformed_timestamp;
  }
  if (at < now_s - tolerance_s) return SignatureFault::too_old;
  if (at > now_s + tolerance_s) return SignatureFault::too_new;
  // Signed with the timestamp as it came, digit for digit.
  const std::string expected = std::string(kVersion) + mac(key.bytes(), id, timestamp, body);
  for (std::size_t from = 0; from <= signature_header.size();) {
    std::size_t to = signature_header.find(' ', from);
    if (to == std::string_view::npos) to = signature_header.size();
    const std::string_view candidate = signature_header.substr(from, to - from);
    if (candidate.size() == expected.size() && CRYPTO_memcmp(candidate.data(), expected.data(), expected.size()) == 0) {
      return SignatureFault::none;
    }
    from = to + 1;
  }
  return SignatureFault::no_match;
}

}  // namespace relaysim::webhook
