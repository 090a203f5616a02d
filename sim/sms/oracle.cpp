#include "sim/sms/oracle.h"

namespace relaysim::sim::sms {

// A bus calls its sinks in attach order, and the order of the checkers here is the order of
// their reports within one event. Two events reach both the async and the message checker and
// must report S-async first: an accepted request (its send path) and a submit's start (a pod late
// into or out of async mode). One reaches both and must report S-async last: a finished submit,
// whose S-retry and S-failover checks come before the evidence it gives the pod's mode. So the
// async checker goes first, and its sink of finished submits after the message checker. The limit
// checker shares no judged event with the others.
void Oracle::attach(relaysim::sms::Events& model, WorldEvents& world, ProcessEvents& processes) {
  model.attach(async_);
  model.attach(limits_);
  model.attach(messages_);
  model.attach(async_.sync_submits());
  world.attach(messages_);
  // A start or a crash resets a pod's local limits and its mode; neither reports anything.
  processes.attach(limits_);
  processes.attach(async_);
}

void Oracle::finish(Time end, relaysim::sms::Store& store) {
  async_.finish(end);
  messages_.finish(end, store);
}

}  // namespace relaysim::sim::sms
