// The one place that lists the systems relaysim simulates. A new system implements sim/system.h
// in its own folder and adds one line here (docs/architecture.md).
#include "sim/system.h"
#include "sim/outbox/system.h"
#include "sim/sms/system.h"
#include "sim/webhook/system.h"

namespace relaysim::sim {

std::span<const System* const> systems() {
  static const System* const kSystems[] = {&webhook::system(), &sms::system(), &outbox::system()};
  return kSystems;
}

const System* find_system(std::string_view name) {
  for (const System* s : systems()) {
    if (s->name() == name) return s;
  }
  return nullptr;
}

}  // namespace relaysim::sim
