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
  push_entry(Entry{to_ns(when), next_seq_++, slot, s.generation});
  ++live_;
  return EventId{(static_cast<std::uint64_t>(s.generation) << 32) | slot};
}

bool Kernel::cancel(EventId id) {
  if (!id) return false;
  const auto slot = static_cast<std::uint32_t>(id.value & 0xffffffffU);
  const auto generation = static_cast<std::uint32_t>(id.value >> 32);
  if (slot >= slots_.size() || slots_[slot].generation != generation) return false;
  Slot& s = slots_[slot];
  RELAYSIM_ASSERT(live_ > 0, "a pending event is counted as pending");
  s.action.reset();
  ++s.generation;
  slots_.release(slot);
  --live_;
  return true;
}

// The heap is 4-ary: half as deep as a binary one, and a node's four children share a cache
// line or two, so a pop touches fewer lines for the same number of comparisons.
void Kernel::push_entry(const Entry& e) {
  std::size_t i = heap_.size();
  heap_.push_back(e);
  const Later later;
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!later(heap_[parent], e)) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void Kernel::pop_entry() {
  const Entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  const Later later;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < end; ++c) {
      if (later(heap_[best], heap_[c])) best = c;
    }
    if (!later(last, heap_[best])) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
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
    // The event's id is spent before it runs (cancelling it, even from inside the action, does
    // nothing). The action runs in its slot, which stays taken until it returns: slots never move,
    // so scheduling from inside cannot pull the running action from under itself, and nothing is
    // moved out and back per event.
    current_ = EventId{(static_cast<std::uint64_t>(top.generation) << 32) | top.slot};
    ++s.generation;
    --live_;
    ++events_run_;
    s.action();
    s.action.reset();
    slots_.release(top.slot);
    return true;
  }
  return false;
}

void Kernel::advance_to(Time t) {
  // Events before `t` must have run; events at `t` itself may still wait (the clock does not pass
  // them: they run next, at `t`), so the world can be read at `t` before they run.
  RELAYSIM_ASSERT(heap_.empty() || heap_.front().time_ns >= to_ns(t), "advancing the clock past an event not yet run");
  if (t > now_) now_ = t;
}

bool Kernel::run_until(Time limit) {
  while (step(limit)) {
  }
  if (live_ == 0) return false;
  if (limit > now_) now_ = limit;
  return true;
}

}  // namespace relaysim::sim
