#include "sim/kernel/kernel.h"

#include <algorithm>

#include "model/core/assert.h"

namespace relaysim::sim {

namespace {
struct Later {
  template <class E>
  bool operator()(const E& a, const E& b) const {
    return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.seq > b.seq;
  }
};
}  // namespace

EventId Kernel::at(Time when, Action action) {
  RELAYSIM_ASSERT(when >= now_, "an event scheduled in the past");
  RELAYSIM_ASSERT(static_cast<bool>(action), "an event needs an action");
  const std::uint32_t slot = slots_.acquire();
  Slot& s = slots_[slot];
  s.action = std::move(action);
  heap_.push_back(Entry{to_ns(when), next_seq_++, slot, s.generation});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  ++live_;
  return EventId{(static_cast<std::uint64_t>(s.generation) << 32) | slot};
}

bool Kernel::cancel(EventId id) {
  if (!id) return false;
  const auto slot = static_cast<std::uint32_t>(id.value & 0xffffffffU);
  const auto generation = static_cast<std::uint32_t>(id.value >> 32);
  if (slot >= slots_.size() || slots_[slot].generation != generation) return false;
  Slot& s = slots_[slot];
  s.action.reset();
  ++s.generation;
  slots_.release(slot);
  --live_;
  return true;
}

void Kernel::pop_entry() {
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  heap_.pop_back();
}

bool Kernel::step(Time limit) {
  const std::int64_t limit_ns = to_ns(limit);
  while (!heap_.empty()) {
    const Entry top = heap_.front();
    Slot& s = slots_[top.slot];
    if (s.generation != top.generation) {  // cancelled
      pop_entry();
      continue;
    }
    if (top.time_ns > limit_ns) return false;
    pop_entry();
    RELAYSIM_ASSERT(top.time_ns >= to_ns(now_), "time moved backwards");
    now_ = time_from_ns(top.time_ns);
    // Free the slot before running, so the action may schedule into it; keep the action alive.
    Action action = std::move(s.action);
    ++s.generation;
    slots_.release(top.slot);
    --live_;
    ++events_run_;
    action();
    return true;
  }
  return false;
}

bool Kernel::run_until(Time limit) {
  while (step(limit)) {
  }
  if (live_ == 0) return false;
  if (limit > now_) now_ = limit;
  return true;
}

}  // namespace relaysim::sim
