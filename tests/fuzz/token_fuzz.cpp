// libFuzzer target: SMS tokens as a send presents them (model/sms/auth.h). Whatever the bytes,
// the check answers with a reason and never crashes; a token it passes was signed with our
// secret, so its claims issue again to a token that passes with the same claims.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "model/sms/auth.h"
#include "model/sms/jwt_codec.h"
#include "sim/kernel/kernel.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace relaysim::sms;
  static LibjwtCodec codec("relaysim fuzz secret, 32 bytes ok");
  static relaysim::sim::Kernel clock;
  static Authorizer auth(codec, clock, 64);
  const std::string_view token(reinterpret_cast<const char*>(data), size);
  const AuthResult r = auth.check(token, SendScope{"SHOP", 3});
  if (static_cast<int>(r.fault) >= kAuthFaultCount) std::abort();
  TokenClaims claims;
  if (codec.verify(token, claims) == AuthFault::none) {
    TokenClaims again;
    if (codec.verify(codec.issue(claims), again) != AuthFault::none || !(again == claims)) {
      std::fprintf(stderr, "token: the claims of a passing token do not issue again\n");
      std::abort();
    }
  }
  return 0;
}
