// libFuzzer target: a delivery's Standard Webhooks headers as a receiver reads them
// (model/webhook/signature.h). The input is split at its first two newlines into the
// webhook-timestamp and webhook-signature values and the body. Whatever the bytes, verifying
// answers with a reason and never crashes; what the sender signs, the receiver accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "model/webhook/signature.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace relaysim::webhook;
  static const SigningKey key = *SigningKey::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::size_t a = in.find('\n');
  const std::size_t b = a == std::string_view::npos ? a : in.find('\n', a + 1);
  if (b == std::string_view::npos) return 0;
  const std::string_view timestamp = in.substr(0, a), header = in.substr(a + 1, b - a - 1), body = in.substr(b + 1);
  constexpr std::int64_t kNow = 1614265330;
  if (static_cast<int>(verify(key, "msg_1", timestamp, header, body, kNow)) > static_cast<int>(SignatureFault::no_match)) std::abort();
  if (verify(key, "msg_1", std::to_string(kNow), sign(key, "msg_1", kNow, body), body, kNow) != SignatureFault::none) std::abort();
  (void)SigningKey::parse(header);
  return 0;
}
