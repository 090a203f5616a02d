#include "model/webhook/signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <limits>

#include "model/core/assert.h"

namespace relaysim::webhook {

namespace {

constexpr std::string_view kSecretPrefix = "whsec_";
constexpr std::string_view kVersion = "v1,";

std::string base64(const unsigned char* data, std::size_t n) {
  std::string out(4 * ((n + 2) / 3), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  RELAYSIM_ASSERT(written >= 0 && static_cast<std::size_t>(written) == out.size(), "base64 of a block fills its length");
  return out;
}

// Strict base64 (padding included, nothing else): the bytes, or nothing.
std::optional<std::string> unbase64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0 || text.size() > 4096) return std::nullopt;
  for (char c : text) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
    if (!ok) return std::nullopt;
  }
  const std::size_t pad = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
  if (text.substr(0, text.size() - pad).find('=') != std::string_view::npos) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<std::size_t>(n) - pad);  // EVP_DecodeBlock counts the padding as zero bytes
  return out;
}

std::string mac(const std::string& key, std::string_view id, std::string_view timestamp, std::string_view body) {
  std::string message;
  message.reserve(id.size() + timestamp.size() + body.size() + 2);
  message.append(id).append(".").append(timestamp).append(".").append(body);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  const unsigned char* ok = HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
                                 message.size(), digest, &length);
  RELAYSIM_ASSERT(ok != nullptr && length == 32, "HMAC-SHA256 gives 32 bytes");
  return base64(digest, length);
}

}  // namespace

std::optional<SigningKey> SigningKey::parse(std::string_view text) {
  if (text.starts_with(kSecretPrefix)) text.remove_prefix(kSecretPrefix.size());
  std::optional<std::string> bytes = unbase64(text);
  if (!bytes || bytes->size() < 24 || bytes->size() > 64) return std::nullopt;
  return SigningKey(std::move(*bytes));
}

std::string SigningKey::text() const {
  return std::string(kSecretPrefix) + base64(reinterpret_cast<const unsigned char*>(bytes_.data()), bytes_.size());
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
