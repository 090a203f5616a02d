#include "model/sms/pod.h"

#include "model/core/assert.h"

namespace relaysim::sms {

Pod::Pod(PodId pod, const PlatformConfig& platform, const NodePorts& ports) : NodePorts(ports), id(pod), config(platform) {
  RELAYSIM_ASSERT(id >= 1, "pod 0 means no pod to the store");
  RELAYSIM_ASSERT(providers.count() >= 1 && providers.count() <= kMaxProviders, "1 to 64 providers");
}

void Pod::store_failed(StoreOp op, StoreFailure failure) {
  const Time now = clock.now();
  events.emit(StoreFailed{id, op, failure, now});
  store_retry_at = now + config.store_retry;
}

ModeSwitch::~ModeSwitch() {
  if (timer_) pod_.timers.cancel(timer_);
}

SendPath ModeSwitch::route(Time now) {
  ModeChange change;
  const SendPath path = switch_.route(now, change);
  if (change) changed(change, now);
  return path;
}

void ModeSwitch::observe(Time now, Duration latency, bool failed, SendPath path) {
  RELAYSIM_ASSERT(path != SendPath::async, "the switch judges only submits made in a client's request");
  const ModeChange change = switch_.observe(now, latency, failed, path);
  if (change) changed(change, now);
}

void ModeSwitch::changed(const ModeChange& change, Time now) {
  RELAYSIM_ASSERT(change.entered != change.left, "a change of mode either enters async mode or leaves it");
  pod_.events.emit(ModeChanged{pod_.id, change, now});
  if (timer_) {
    pod_.timers.cancel(timer_);
    timer_ = TimerId{};
  }
  if (change.entered && pod_.config.sync_to_async.exit == SyncAsyncConfig::Exit::after) {
    timer_ = pod_.timers.schedule_at(now + pod_.config.sync_to_async.after, [this] {
      timer_ = TimerId{};
      const Time at = pod_.clock.now();
      const ModeChange left = switch_.expire(at);
      if (left) changed(left, at);
    });
  }
}

}  // namespace relaysim::sms
