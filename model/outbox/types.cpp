#include "model/outbox/types.h"

#include "model/core/random.h"
#include "model/outbox/events.h"
#include "model/outbox/ports.h"
#include "model/outbox/store.h"

namespace relaysim::outbox {

std::uint32_t Log::partition_of(EntityKey key) const {
  return static_cast<std::uint32_t>(mix64(key ^ 0x706172746974ULL) % partitions());
}

}  // namespace relaysim::outbox
