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

}  // namespace relaysim::outbox
