// The webhook platform's own ports: ServiceB, the external directory of destination URLs, and
// the channel that tells tenants of their failed requests (see model/core/ports.h for what every
// port promises).
#pragma once

#include <cstdint>
#include <string_view>

#include "model/core/function.h"
#include "model/core/names.h"
#include "model/core/time.h"
#include "model/webhook/types.h"

namespace relaysim::webhook {

enum class LookupStatus : std::uint8_t { found, not_found, error };
inline constexpr auto kLookupStatusNames =
    names<LookupStatus>({{LookupStatus::found, "found"}, {LookupStatus::not_found, "not_found"}, {LookupStatus::error, "error"}});
constexpr std::string_view to_string(LookupStatus s) { return kLookupStatusNames[s]; }

struct LookupResult {
  LookupStatus status = LookupStatus::error;
  std::string_view url;            // valid during the callback only
  std::uint64_t version = 0;       // ServiceB's version of this cxid's URL
};

using LookupCallback = InplaceFunction<void(const LookupResult&), 48>;

class UrlDirectory {
 public:
  virtual ~UrlDirectory() = default;
  // `error` covers 5xx, timeouts and refused connections: ServiceB could not answer.
  virtual void lookup(std::string_view cxid, Duration timeout, LookupCallback done) = 0;
};

using NoticeCallback = InplaceFunction<void(bool sent), 32>;

// Tells a tenant that its request failed or was dead-lettered. `done(true)` once the notice is
// out for good (the relay then removes it from the outbox), `done(false)` when it is not (it is
// sent again after its lease). It may call `done` before it returns.
class NoticeChannel {
 public:
  virtual ~NoticeChannel() = default;
  virtual void tell(const Notice& notice, NoticeCallback done) = 0;
};

}  // namespace relaysim::webhook
