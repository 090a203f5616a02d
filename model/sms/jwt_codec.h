// LibjwtCodec: SMS tokens as HS256 JWTs, signed and verified by libjwt (Debian's libjwt-dev).
//
// libjwt 1.10 accepts any HMAC algorithm the token's header names and reports a bad signature and
// a malformed token alike (EINVAL); this codec insists on HS256 and tells the three apart by
// reading the header of a token that failed. It judges neither exp nor scope: the Authorizer does,
// against the gateway's clock.
#pragma once

#include <string>

#include "model/sms/auth.h"

namespace relaysim::sms {

class LibjwtCodec final : public TokenCodec {
 public:
  explicit LibjwtCodec(std::string secret);
  std::string issue(const TokenClaims& claims) override;
  AuthFault verify(std::string_view token, TokenClaims& out) override;

 private:
  std::string secret_;
  std::string text_;  // the token, NUL-terminated for libjwt
};

}  // namespace relaysim::sms
