#include "model/outbox/types.h"

#include "model/core/assert.h"
#include "model/core/random.h"
#include "model/outbox/events.h"
#include "model/outbox/ports.h"
#include "model/outbox/store.h"

namespace relaysim::outbox {

std::uint32_t Log::partition_of(EntityKey key) const {
  const std::uint32_t n = partitions();
  RELAYSIM_ASSERT(n > 0, "a log has at least one partition");
  return static_cast<std::uint32_t>(mix64(key ^ 0x706172746974ULL) % n);
}

Handled classify_handled(NetError error, int status) {
  switch (error) {
    case NetError::none: break;
    case NetError::timeout: return Handled::timeout;
    case NetError::connect_error:
    case NetError::dns_error:
    case NetError::forbidden_address:
    case NetError::bad_url:
    case NetError::too_late: return Handled::failed;
  }
  if (status >= 200 && status <= 299) return Handled::done;
  if (status == 408 || status == 429 || status >= 500) return Handled::failed;
  if (status >= 400 && status <= 499) return Handled::rejected;
  return Handled::failed;  // 1xx, 3xx: not an answer a downstream gives
}

}  // namespace relaysim::outbox
