// Processes: the simulated platform's crashable processes (pods), whatever system they run.
//
// A Process is an index, a generation and the Timers port its model runs on. A crash drops
// everything the process held in memory (its host destroys the model objects) and bumps the
// generation: every timer it set and every answer the world still owes the dead incarnation is
// dropped when it comes due — but what it already sent keeps going, as in life (a request in
// flight still reaches its endpoint). A restart builds the process anew, from the durable store.
//
// A pause stops a process without killing it (a long garbage-collection pause): until it ends,
// every timer and answer of the process that comes due waits, and then runs, in the order it came
// due; the process resumes with everything it believed before.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "model/core/assert.h"
#include "model/core/events.h"
#include "model/core/ports.h"
#include "sim/kernel/kernel.h"
#include "sim/scenario/scenario.h"

namespace relaysim::sim {

struct ProcessStarted {
  std::uint32_t pod;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(9);
    fp.mix(pod);
  }
};

struct ProcessCrashed {
  std::uint32_t pod;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(8);
    fp.mix(pod);
  }
};

struct ProcessPaused {
  std::uint32_t pod;
  Time at;
  Time until;
  void mix(Fingerprint& fp) const {
    fp.mix(10);
    fp.mix(pod);
    fp.mix(until);
  }
};

using ProcessEvents = EventBus<ProcessStarted, ProcessCrashed, ProcessPaused>;

class Process final : public Timers {
 public:
  Process(Kernel& kernel, std::uint32_t index) : kernel_(kernel), index_(index) {}

  // Timers: a timer of a crashed incarnation never fires.
  TimerId schedule_at(Time at, TimerCallback cb) override;
  void cancel(TimerId id) override;

  // Runs `f` at `t` (or after `d`) unless this process crashes first: for the answers the world
  // owes it (a lookup's result, an HTTP response).
  template <class F>
  void at(Time t, F&& f) {
    at(incarnation(), t, std::forward<F>(f));
  }
  // The same for an answer owed to the incarnation that asked (`incarnation()` when it asked):
  // a world that decides the answer later — when the request arrives — must not hand it to the
  // next incarnation of a process that crashed meanwhile.
  template <class F>
  void at(std::uint64_t asked_by, Time t, F&& f) {
    if (asked_by != generation_) return;
    kernel_.at(t, [this, asked_by, f = std::forward<F>(f)]() mutable {
      if (asked_by != generation_) return;
      if (kernel_.now() < paused_until_) {
        at(asked_by, paused_until_, std::move(f));  // waits for the pause to end
        return;
      }
      f();
    });
  }
  // Which life of the process this is: bumped by every crash.
  std::uint64_t incarnation() const { return generation_; }
  template <class F>
  void after(Duration d, F&& f) {
    at(kernel_.now() + d, std::forward<F>(f));
  }

  std::uint32_t index() const { return index_; }
  bool up() const { return up_; }
  bool paused() const { return kernel_.now() < paused_until_; }

 private:
  friend class Processes;
  // A timer that came due during a pause, moved to the pause's end: `original` is the id it was
  // scheduled under, so cancelling it still works.
  void defer_timer(std::uint64_t original, TimerCallback cb);
  Kernel& kernel_;
  std::uint32_t index_;
  std::uint32_t generation_ = 0;
  bool up_ = false;
  Time paused_until_{};
  std::vector<std::pair<std::uint64_t, EventId>> deferred_;  // original timer id -> where it waits now
};

// The processes' pauses as an oracle learns of them (from ProcessPaused and ProcessCrashed): when a
// process could first act on what reached it. A frozen process reads an answer that came during
// its pause only when the pause ends -- it sees it then, and its clocks and windows count from then.
class PauseHistory {
 public:
  explicit PauseHistory(std::uint32_t processes) : pauses_(processes) {}
  void paused(const ProcessPaused& e);
  void crashed(const ProcessCrashed& e);  // a crash ends a pause: the next incarnation is awake
  // When `process` could first act on what reached it at `t`: `t`, or the end of the pause it came in.
  // (Asked for every lookup and answer an oracle judges: a process never paused answers at once.)
  Time read_at(std::uint32_t process, Time t) const {
    RELAYSIM_ASSERT(process < pauses_.size(), "a process the scenario has");
    return pauses_[process].empty() ? t : read_after_pauses(process, t);
  }
  // The end of the process's latest pause (Time{} if none).
  Time paused_until(std::uint32_t process) const;

 private:
  Time read_after_pauses(std::uint32_t process, Time t) const;
  std::vector<std::vector<std::pair<Time, Time>>> pauses_;  // per process: [from, until), in order
};

// What runs in a process: built when it starts, destroyed when it crashes.
class ProcessHost {
 public:
  virtual ~ProcessHost() = default;
  virtual void start(Process& p) = 0;  // build the process's model from the store and start it
  virtual void stop(Process& p) = 0;   // destroy everything it held in memory
};

class Processes {
 public:
  Processes(Kernel& kernel, std::uint32_t count, ProcessHost& host, ProcessEvents& events);
  Processes(const Processes&) = delete;
  Processes& operator=(const Processes&) = delete;

  // Schedules every process to start at time zero. Call it before anything else is scheduled at
  // time zero: events at one time run in scheduling order, and a client's call at time zero must
  // find the pods up.
  void start_all();
  // Schedules the scenario's crashes (and restarts). Crashes during a store write are the
  // store's to trigger (sim/world/store_faults.h), through crash_and_restart.
  void install(const std::vector<CrashFault>& crashes);
  void install(const std::vector<PauseFault>& pauses);

  void start(std::uint32_t index);
  void crash(std::uint32_t index);
  // Pauses `index` (if it is up) from now for `length`.
  void pause(std::uint32_t index, Duration length);
  // Crashes `index` now (if it is up) and starts it again after `restart_after` (kForever: never).
  void crash_and_restart(std::uint32_t index, Duration restart_after);

  std::uint32_t size() const { return static_cast<std::uint32_t>(processes_.size()); }
  Process& operator[](std::uint32_t index) {
    RELAYSIM_ASSERT(index < processes_.size(), "a process the platform has");
    return *processes_[index];
  }
  std::uint32_t up() const { return up_; }
  // The next process that is up, round robin (a load balancer in front of them), or nullptr.
  Process* next_up();
  // The same, skipping paused ones: where a load balancer sends a client's call, since a frozen
  // process fails its health check (it would otherwise serve calls it cannot run). nullptr when
  // every process is down or paused.
  Process* next_awake();

 private:
  Kernel& kernel_;
  ProcessHost& host_;
  ProcessEvents& events_;
  std::vector<std::unique_ptr<Process>> processes_;
  std::uint32_t next_ = 0;
  std::uint32_t up_ = 0;
};

}  // namespace relaysim::sim
