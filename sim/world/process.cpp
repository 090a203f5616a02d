#include "sim/world/process.h"

#include <algorithm>

#include "model/core/assert.h"

namespace relaysim::sim {

TimerId Process::schedule_at(Time at, TimerCallback cb) {
  RELAYSIM_ASSERT(static_cast<bool>(cb), "a timer has a callback");
  const EventId id = kernel_.at(std::max(at, kernel_.now()), [this, generation = generation_, cb = std::move(cb)]() mutable {
    if (generation != generation_) return;
    if (kernel_.now() < paused_until_) {
      defer_timer(kernel_.current().value, std::move(cb));
      return;
    }
    cb();
  });
  return TimerId{id.value};
}

void Process::defer_timer(std::uint64_t original, TimerCallback cb) {
  RELAYSIM_ASSERT(kernel_.now() < paused_until_, "a timer is deferred only while its process is paused");
  const EventId moved = kernel_.at(paused_until_, [this, original, generation = generation_, cb = std::move(cb)]() mutable {
    for (std::size_t i = 0; i < deferred_.size(); ++i) {
      if (deferred_[i].first == original) {
        deferred_[i] = deferred_.back();
        deferred_.pop_back();
        break;
      }
    }
    if (generation != generation_) return;
    if (kernel_.now() < paused_until_) {  // paused again meanwhile
      defer_timer(original, std::move(cb));
      return;
    }
    cb();
  });
  deferred_.emplace_back(original, moved);
}

void Process::cancel(TimerId id) {
  if (kernel_.cancel(EventId{id.value}) || deferred_.empty()) return;
  for (std::size_t i = 0; i < deferred_.size(); ++i) {
    if (deferred_[i].first == id.value) {
      kernel_.cancel(deferred_[i].second);
      deferred_[i] = deferred_.back();
      deferred_.pop_back();
      return;
    }
  }
}

void PauseHistory::paused(const ProcessPaused& e) {
  RELAYSIM_ASSERT(e.pod < pauses_.size(), "a pause of a process the scenario does not have");
  RELAYSIM_ASSERT(e.until >= e.at, "a pause ends no earlier than it begins");
  RELAYSIM_ASSERT(pauses_[e.pod].empty() || e.at >= pauses_[e.pod].back().first, "pauses are recorded in the order they begin");
  pauses_[e.pod].emplace_back(e.at, e.until);
}

void PauseHistory::crashed(const ProcessCrashed& e) {
  RELAYSIM_ASSERT(e.pod < pauses_.size(), "a crash of a process the scenario does not have");
  for (auto& [from, until] : pauses_[e.pod]) until = std::min(until, std::max(from, e.at));
}

Time PauseHistory::read_after_pauses(std::uint32_t process, Time t) const {
  RELAYSIM_ASSERT(process < pauses_.size(), "a process the scenario does not have");
  Time read = t;
  // Pauses are recorded in the order they began; a later one may extend an earlier one.
  for (const auto& [from, until] : pauses_[process]) {
    if (from <= read && read < until) read = until;
  }
  return read;
}

Time PauseHistory::paused_until(std::uint32_t process) const {
  RELAYSIM_ASSERT(process < pauses_.size(), "a process the scenario does not have");
  return pauses_[process].empty() ? Time{} : pauses_[process].back().second;
}

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

void Processes::install(const std::vector<PauseFault>& pauses) {
  for (const PauseFault& f : pauses) {
    RELAYSIM_ASSERT(f.pod < size(), "the loader checks pause targets");
    kernel_.at(f.at, [this, f] { pause(f.pod, f.length); });
  }
}

void Processes::pause(std::uint32_t index, Duration length) {
  RELAYSIM_ASSERT(index < size(), "a pause of a process the platform has");
  Process& p = *processes_[index];
  if (!p.up_) return;
  p.paused_until_ = std::max(p.paused_until_, kernel_.now() + length);
  events_.emit(ProcessPaused{index, kernel_.now(), p.paused_until_});
}

void Processes::crash_and_restart(std::uint32_t index, Duration restart_after) {
  RELAYSIM_ASSERT(index < size(), "a crash of a process the platform has");
  RELAYSIM_ASSERT(restart_after >= Duration::zero(), "a restart does not come before its crash");
  if (!processes_[index]->up()) return;
  crash(index);
  if (restart_after < kForever) {
    kernel_.after(restart_after, [this, index] {
      if (!processes_[index]->up()) start(index);
    });
  }
}

void Processes::start(std::uint32_t index) {
  RELAYSIM_ASSERT(index < size(), "a start of a process the platform has");
  Process& p = *processes_[index];
  RELAYSIM_ASSERT(!p.up_, "starting a process that is up");
  p.up_ = true;
  ++up_;
  RELAYSIM_ASSERT(up_ <= size(), "no more processes are up than there are");
  events_.emit(ProcessStarted{index, kernel_.now()});
  host_.start(p);
}

void Processes::crash(std::uint32_t index) {
  RELAYSIM_ASSERT(index < size(), "a crash of a process the platform has");
  Process& p = *processes_[index];
  if (!p.up_) return;
  RELAYSIM_ASSERT(up_ > 0, "a process that is up is counted as up");
  ++p.generation_;  // every callback owed to this incarnation is now dropped
  p.up_ = false;
  p.paused_until_ = Time{};
  for (const auto& [original, moved] : p.deferred_) kernel_.cancel(moved);
  p.deferred_.clear();
  --up_;
  host_.stop(p);
  events_.emit(ProcessCrashed{index, kernel_.now()});
}

Process* Processes::next_awake() {
  Process* p = next_up();
  for (std::uint32_t tried = 1; p != nullptr && p->paused() && tried < size(); ++tried) p = next_up();
  return p != nullptr && p->paused() ? nullptr : p;
}

Process* Processes::next_up() {
  RELAYSIM_ASSERT(next_ < size(), "the round robin points at a process");
  for (std::size_t tried = 0; tried < processes_.size(); ++tried) {
    Process& p = *processes_[next_];
    next_ = (next_ + 1) % size();
    if (p.up_) return &p;
  }
  return nullptr;
}

}  // namespace relaysim::sim
