#include "sim/outbox/oracle.h"

namespace relaysim::sim::outbox {

// A bus calls its sinks in attach order, and the order of the checkers here is the order of
// their reports within one event. Only a leader's write reaches two of them: its fencing token is
// judged first (by the LeadershipChecker), then each message it returned (by the MessageChecker),
// so the leadership checker goes first. The LogChecker shares no event with the others.
void Oracle::attach(relaysim::outbox::Events& model, WorldEvents& world) {
  model.attach(leadership_);
  model.attach(messages_);
  model.attach(log_);
  world.attach(messages_);
  world.attach(log_);
}

}  // namespace relaysim::sim::outbox
