#include "model/outbox/types.h"

#include "model/core/random.h"
#include "model/outbox/events.h"
#include "model/outbox/ports.h"
#include "model/outbox/store.h"

namespace relaysim::outbox {

std::string_view to_string(Status s) {
  switch (s) {
    case Status::pending: return "pending";
    case Status::processing: return "processing";
    case Status::handled: return "handled";
    case Status::failed: return "failed";
  }
  return "?";
}

std::string_view to_string(Reason r) {
  switch (r) {
    case Reason::none: return "none";
    case Reason::rejected: return "rejected";
    case Reason::exhausted: return "exhausted";
  }
  return "?";
}

std::string_view to_string(PublishOrder o) {
  return o == PublishOrder::publish_then_mark ? "publish_then_mark" : "mark_then_publish";
}

std::string_view to_string(Ordering o) { return o == Ordering::none ? "none" : "per_key"; }

std::string_view to_string(Relock r) {
  switch (r) {
    case Relock::locked: return "locked";
    case Relock::not_yet: return "not_yet";
    case Relock::gone: return "gone";
  }
  return "?";
}

std::string_view to_string(Produced p) {
  switch (p) {
    case Produced::ok: return "ok";
    case Produced::unavailable: return "unavailable";
    case Produced::timeout: return "timeout";
  }
  return "?";
}

std::string_view to_string(Handled h) {
  switch (h) {
    case Handled::done: return "done";
    case Handled::failed: return "failed";
    case Handled::rejected: return "rejected";
    case Handled::timeout: return "timeout";
  }
  return "?";
}

std::string_view to_string(LeaderWrite w) {
  switch (w) {
    case LeaderWrite::fence: return "fence";
    case LeaderWrite::scan: return "scan";
    case LeaderWrite::mark: return "mark";
    case LeaderWrite::rescue: return "rescue";
  }
  return "?";
}

std::uint32_t Log::partition_of(EntityKey key) const {
  return static_cast<std::uint32_t>(mix64(key ^ 0x706172746974ULL) % partitions());
}

}  // namespace relaysim::outbox
