#include "sim/world/process.h"

#include <algorithm>

#include "model/core/assert.h"

namespace relaysim::sim {

TimerId Process::schedule_at(Time at, TimerCallback cb) {
  const EventId id = kernel_.at(std::max(at, kernel_.now()), [this, generation = generation_, cb = std::move(cb)]() mutable {
    if (generation == generation_) cb();
  });
  return TimerId{id.value};
}

void Process::cancel(TimerId id) { kernel_.cancel(EventId{id.value}); }

Processes::Processes(Kernel& kernel, std::uint32_t count, ProcessHost& host, ProcessEvents& events)
    : kernel_(kernel), host_(host), events_(events) {
  RELAYSIM_ASSERT(count >= 1, "a platform has at least one process");
  for (std::uint32_t i = 0; i < count; ++i) processes_.push_back(std::make_unique<Process>(kernel, i));
}

void Processes::start_all() {
  kernel_.at(Time{}, [this] {
    for (std::uint32_t i = 0; i < size(); ++i) start(i);
  });
}

void Processes::install(const std::vector<CrashFault>& crashes) {
  for (const CrashFault& f : crashes) {
    RELAYSIM_ASSERT(f.pod < size(), "the loader checks crash targets");
    if (f.during_write) continue;
    kernel_.at(f.at, [this, f] { crash_and_restart(f.pod, f.restart_after); });
  }
}

void Processes::crash_and_restart(std::uint32_t index, Duration restart_after) {
  if (!processes_[index]->up()) return;
  crash(index);
  if (restart_after < kForever) {
    kernel_.after(restart_after, [this, index] {
      if (!processes_[index]->up()) start(index);
    });
  }
}

void Processes::start(std::uint32_t index) {
  Process& p = *processes_[index];
  RELAYSIM_ASSERT(!p.up_, "starting a process that is up");
  p.up_ = true;
  ++up_;
  events_.emit(ProcessStarted{index, kernel_.now()});
  host_.start(p);
}

void Processes::crash(std::uint32_t index) {
  Process& p = *processes_[index];
  if (!p.up_) return;
  ++p.generation_;  // every callback owed to this incarnation is now dropped
  p.up_ = false;
  --up_;
  host_.stop(p);
  events_.emit(ProcessCrashed{index, kernel_.now()});
}

Process* Processes::next_up() {
  for (std::size_t tried = 0; tried < processes_.size(); ++tried) {
    Process& p = *processes_[next_];
    next_ = (next_ + 1) % size();
    if (p.up_) return &p;
  }
  return nullptr;
}

}  // namespace relaysim::sim
