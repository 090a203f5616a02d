// Kernel: virtual time and the event queue — the whole simulator runs on these two things.
//
// Vocabulary: an *event* is an Action scheduled at a Time. Events run in (time, sequence) order,
// so ties run in the order they were scheduled; time never moves backwards. An EventId cancels a
// pending event.
//
// Allocation: events live in a slab of reusable slots, ordered by a queue of 24-byte entries (a
// 4-ary heap while small, a radix heap when large: sim/kernel/event_queue.h); once both have
// grown to the run's peak, scheduling allocates nothing. A cancelled event stays in the queue and is skipped when it surfaces (its slot
// generation no longer matches).
#pragma once

#include <cstdint>
#include <utility>

#include "model/core/function.h"
#include "model/core/ports.h"
#include "model/core/slot_pool.h"
#include "model/core/time.h"
#include "sim/kernel/event_queue.h"

namespace relaysim::sim {

using Action = InplaceFunction<void(), 112>;

struct EventId {
  std::uint64_t value = 0;
  explicit operator bool() const { return value != 0; }
};

class Kernel final : public Clock {
 public:
  Kernel() = default;
  // A kernel on the given queue: `Kernel(EventQueue(SIZE_MAX))` keeps its events in the 4-ary heap
  // at every size, as the kernel did before the radix buckets; the benchmarks measure what the
  // buckets and the look-ahead win against it in one run.
  explicit Kernel(EventQueue queue) : queue_(std::move(queue)) {}
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  Time now() const override { return now_; }

  // Schedules `action` at `at`, which must not be in the past.
  EventId at(Time at, Action action);
  EventId after(Duration delay, Action action) { return at(now_ + delay, std::move(action)); }
  // Returns true if the event was pending and will now never run.
  bool cancel(EventId id);

  // Runs the earliest event if its time is <= `limit`; false when there is none.
  bool step(Time limit = kTimeNever);
  // Runs events up to and including `limit`, then sets the clock to `limit` if events remain.
  // Stops early (returns false) when the queue runs dry.
  bool run_until(Time limit);
  // Moves the clock forward to `t` without running anything; events before `t` must have run.
  void advance_to(Time t);

  // The id the running event was scheduled under (a process's timer that a pause moves keeps
  // answering to it).
  EventId current() const { return current_; }

  std::size_t pending() const { return live_; }
  std::uint64_t events_run() const { return events_run_; }

  // An event that did the work of thousands (a chunk of a huge burst) asks whoever drives the
  // kernel to look outside -- progress, stop requests -- before the next event, as if that many
  // events had run. Virtual time is not touched: the run is the same either way.
  void yield() { yield_ = true; }
  // Whether an event has asked since the last call.
  bool take_yield() { return std::exchange(yield_, false); }

 private:
  // An event's action and the generation its id must match. In a large queue a surfacing slot is
  // a cache miss; step() asks for the lines of the next event, and of those the queue announces
  // ahead, while the current one runs.
  struct Slot {
    Action action;
    std::uint32_t generation = 1;
  };

  Time now_{};
  std::uint64_t next_seq_ = 0;
  std::uint64_t events_run_ = 0;
  std::size_t live_ = 0;
  bool yield_ = false;
  EventId current_{};
  EventQueue queue_;
  StableSlotPool<Slot> slots_;  // stable: an action runs where it is stored
};

}  // namespace relaysim::sim
