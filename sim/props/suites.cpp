// The one place that lists the systems' property suites (the counterpart of sim/systems.cpp for
// the test build: the shipped relaysim links neither RapidCheck nor this file).
#include "sim/outbox/props/properties.h"
#include "sim/props/property.h"
#include "sim/sms/props/properties.h"
#include "sim/webhook/props/properties.h"

namespace relaysim::props {

std::span<const Suite> suites() {
  static const Suite kSuites[] = {sim::webhook::props::suite(), sim::sms::props::suite(),
                                   sim::outbox::props::suite()};
  return kSuites;
}

}  // namespace relaysim::props
