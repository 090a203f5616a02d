// Standard Webhooks signatures (standardwebhooks.com): what a delivery carries so that its receiver
// can tell it came from us, unaltered, and not replayed long after.
//
// A delivery carries three headers: `webhook-id` (the request's stable id, types.h),
// `webhook-timestamp` (Unix seconds when the attempt was sent) and `webhook-signature`:
// "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)). The key is the tenant's
// secret, written "whsec_" + base64 of its bytes. A receiver accepts a delivery when one of the
// space-separated signatures of the header is a v1 signature of what it received, compared in
// constant time, and the timestamp is within its tolerance of its own clock.
//
// The scheme is the same for every sender and receiver of the project: the live service signs
// with it, and `relaysim world`'s endpoints verify with it. HMAC and base64 are OpenSSL's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "model/core/names.h"

namespace relaysim::webhook {

inline constexpr std::string_view kWebhookTimestampHeader = "webhook-timestamp";
inline constexpr std::string_view kWebhookSignatureHeader = "webhook-signature";

// A tenant's signing key: its bytes.
class SigningKey {
 public:
  // "whsec_" + base64, or the base64 alone (as the reference libraries accept); nothing when the
  // text is not base64 or holds fewer than 24 bytes (the scheme asks for 24 to 64).
  static std::optional<SigningKey> parse(std::string_view text);
  // The key as a secret is written: "whsec_" + base64.
  std::string text() const;
  // Its bytes: what the HMAC is keyed with.
  const std::string& bytes() const { return bytes_; }

 private:
  explicit SigningKey(std::string bytes) : bytes_(std::move(bytes)) {}
  std::string bytes_;
};

// The webhook-signature header of a delivery: "v1," + base64 of the HMAC.
std::string sign(const SigningKey& key, std::string_view id, std::int64_t timestamp_s, std::string_view body);

// Why a delivery is refused, or none.
enum class SignatureFault : std::uint8_t {
  none,
  malformed_timestamp,  // webhook-timestamp is not a whole number of seconds
  too_old,              // older than the tolerance
  too_new,              // further in the future than the tolerance
  no_match,             // no v1 signature of the header matches
};
inline constexpr auto kSignatureFaultNames = names<SignatureFault>({
    {SignatureFault::none, "none"}, {SignatureFault::malformed_timestamp, "malformed_timestamp"},
    {SignatureFault::too_old, "too_old"}, {SignatureFault::too_new, "too_new"},
    {SignatureFault::no_match, "no_match"}});
constexpr std::string_view to_string(SignatureFault f) { return kSignatureFaultNames[f]; }

// Checks a received delivery: its headers' values, its body, the receiver's clock (Unix seconds)
// and how far from it a timestamp may be.
SignatureFault verify(const SigningKey& key, std::string_view id, std::string_view timestamp, std::string_view signature_header,
                      std::string_view body, std::int64_t now_s, std::int64_t tolerance_s = 300);

}  // namespace relaysim::webhook
