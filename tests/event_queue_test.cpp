// The kernel's event queue against an ordered set: the same entries must leave in the same
// (time, sequence) order through both of its structures and every move between them.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <tuple>

#include "model/core/random.h"
#include "sim/kernel/event_queue.h"

namespace relaysim::sim {
namespace {

using Key = std::tuple<std::int64_t, std::uint64_t>;  // (time, sequence)

struct Checked {
  EventQueue queue;
  std::set<Key> expected;
  std::uint64_t seq = 0;
  std::int64_t now = 0;  // the last time popped: nothing may be pushed before it
  bool was_bucketed = false;

  void push(std::int64_t time) {
    ASSERT_GE(time, now);
    queue.push(QueuedEvent{time, seq, static_cast<std::uint32_t>(seq), 0});
    expected.emplace(time, seq);
    ++seq;
    was_bucketed = was_bucketed || queue.bucketed();
  }
  // Looks at the earliest entry (as the kernel does when it stops at a limit) and checks it.
  void peek() {
    const QueuedEvent* top = queue.top();
    if (expected.empty()) {
      ASSERT_EQ(top, nullptr);
      return;
    }
    ASSERT_NE(top, nullptr);
    ASSERT_EQ(Key(top->time_ns, top->seq), *expected.begin());
  }
  void pop() {
    peek();
    if (expected.empty()) return;
    now = std::get<0>(*expected.begin());
    expected.erase(expected.begin());
    queue.pop();
    ASSERT_EQ(queue.size(), expected.size());
  }
  // A time at or after the clock: often a tie with the clock or with the queue's earliest entry,
  // sometimes between the two (before the earliest entry the queue has looked at), else spread
  // over `span`.
  std::int64_t some_time(Rng& rng, std::int64_t span) {
    switch (rng.below(6)) {
      case 0:
        return now;
      case 1:
        return expected.empty() ? now : std::get<0>(*expected.begin());
      case 2: {
        const std::int64_t first = expected.empty() ? now : std::get<0>(*expected.begin());
        return now + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(first - now) + 1));
      }
      default:
        return now + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(span)));
    }
  }
};

// Grows past the bucket threshold, holds there, shrinks under the heap threshold and empties, with
// pushes and looks interleaved; over many seeds and time spans (a span of 1 is all ties).
TEST(EventQueue, LeavesInTimeThenSequenceOrderAsAnOrderedSetDoes) {
  for (const std::int64_t span : {std::int64_t{1}, std::int64_t{64}, std::int64_t{1'000'000}, std::int64_t{1} << 50}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(testing::Message() << "span " << span << ", seed " << seed);
      Rng rng(seed);
      Checked q;
      const std::size_t peak = EventQueue::kToRadix + 3000;
      while (q.expected.size() < peak) {
        q.push(q.some_time(rng, span));
        if (rng.below(4) == 0) q.pop();
        if (rng.below(8) == 0) q.peek();
      }
      for (int i = 0; i < 20'000; ++i) {
        // A look between a pop and a push finds the next earliest entry before the push, which
        // may then come before it (the kernel's driver does this at every limit).
        q.pop();
        if (rng.below(2) == 0) q.peek();
        q.push(q.some_time(rng, span));
      }
      EXPECT_TRUE(q.queue.bucketed());
      while (!q.expected.empty()) {
        if (rng.below(4) == 0) q.push(q.some_time(rng, span));
        if (rng.below(8) == 0) q.peek();
        q.pop();
        if (HasFatalFailure()) return;
      }
      q.peek();
      EXPECT_TRUE(q.was_bucketed);
      EXPECT_FALSE(q.queue.bucketed());  // back in the heap once small
      EXPECT_TRUE(q.queue.empty());
    }
  }
}

// Once the queue has looked at its earliest entry, an entry scheduled before it (but not before
// the clock) still leaves first.
TEST(EventQueue, AnEntryScheduledBeforeTheOneLookedAtLeavesFirst) {
  Checked q;
  for (std::int64_t t = 0; t <= static_cast<std::int64_t>(EventQueue::kToRadix) + 1; ++t) q.push(1000 * t);
  ASSERT_TRUE(q.queue.bucketed());
  q.pop();   // 0: the clock is at 0
  q.peek();  // finds 1000
  q.push(500);
  q.push(1000);  // a tie with the entry looked at: after it
  q.pop();
  EXPECT_EQ(q.now, 500);
  while (!q.expected.empty()) q.pop();
}

// A hundred thousand entries at one instant (a burst all due at once) leave in the order they came, and
// more pushed at that instant while they leave go after them.
TEST(EventQueue, ABurstAtOneInstantLeavesInOrder) {
  Checked q;
  for (int i = 0; i < 100'000; ++i) q.push(7);
  for (int i = 0; i < 50'000; ++i) {
    q.pop();
    q.push(7);
  }
  while (!q.expected.empty()) q.pop();
  EXPECT_TRUE(q.was_bucketed);
}

}  // namespace
}  // namespace relaysim::sim
