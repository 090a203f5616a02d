// The kernel's event queue against an ordered set: the same entries must leave in the same
// (time, sequence) order through both of its structures and every move between them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
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

// Grows past the bucket threshold, holds there, shrinks under the heap threshold and empties,
// twice, with pushes and looks interleaved; over many seeds, time spans (a span of 1 is all ties)
// and starting times (negative ones, and near the end of time).
TEST(EventQueue, LeavesInTimeThenSequenceOrderAsAnOrderedSetDoes) {
  for (const std::int64_t span : {std::int64_t{1}, std::int64_t{64}, std::int64_t{1'000'000}, std::int64_t{1} << 50}) {
    // From 0; from before 0, so that times cross it while bucketed; and near the end of time.
    const std::int64_t starts[] = {0, -span / 2 - 1000, std::numeric_limits<std::int64_t>::max() - (std::int64_t{1} << 56)};
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const std::int64_t start = starts[seed - 1];
      SCOPED_TRACE(testing::Message() << "span " << span << ", seed " << seed << ", from " << start);
      Rng rng(seed);
      Checked q;
      q.now = start;
      for (int cycle = 0; cycle < 2; ++cycle) {
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
}

// A start that schedules far timers first and then its near work: the near work, all before the
// buckets' earliest entry, must not pile up in the heap.
TEST(EventQueue, NearWorkScheduledAfterFarTimersDoesNotPileUpInTheHeap) {
  Checked q;
  for (std::size_t i = 0; i <= EventQueue::kToRadix; ++i) q.push(1'000'000'000'000);
  ASSERT_TRUE(q.queue.bucketed());
  q.peek();
  Rng rng(5);
  for (int i = 0; i < 100'000; ++i) {
    q.push(static_cast<std::int64_t>(rng.below(1'000'000'000)));
    ASSERT_LE(q.queue.in_heap(), std::max(EventQueue::kToRadix, q.queue.size() / 4) + 1);
  }
  while (!q.expected.empty()) q.pop();
}

// Memory follows what is pending, not what has passed: bursts at one instant, and in buckets far
// apart, leave no more room than a few times the peak, and none once the queue is small again.
TEST(EventQueue, KeepsRoomForWhatIsPendingOnly) {
  Checked q;
  constexpr std::size_t kPending = 50'000;
  for (std::size_t i = 0; i < kPending; ++i) q.push(7);
  for (std::size_t i = 0; i < 6 * kPending; ++i) {  // each event schedules one more at its instant
    q.pop();
    q.push(7);
  }
  EXPECT_LE(q.queue.retained(), 4 * kPending);
  while (!q.expected.empty()) q.pop();
  for (int k = 40; k >= 1; --k) {  // bursts, each in a bucket of its own
    const std::int64_t at = q.now + (std::int64_t{1} << k);
    for (std::size_t i = 0; i < kPending; ++i) q.push(at);
    while (!q.expected.empty()) q.pop();
  }
  EXPECT_LE(q.queue.retained(), 3 * kPending);
  q.peek();
  EXPECT_FALSE(q.queue.bucketed());
  EXPECT_LE(q.queue.retained(), 2 * kPending);  // the heap's own vector only
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

// The look-ahead: with nothing pushed, what a spread announces is exactly what leaves next, and
// nearly every entry of a large queue is announced before it leaves (the kernel asks for their
// slots' lines early; an announcement of the wrong entries, or of none, would cost only time).
TEST(EventQueue, AnnouncesTheEntriesThatLeaveNext) {
  EventQueue queue;
  Rng rng(9);
  constexpr std::uint32_t kPending = 100'000;
  for (std::uint32_t i = 0; i < kPending; ++i) {
    queue.push(QueuedEvent{static_cast<std::int64_t>(rng.below(1'000'000'000)), i, i, 0});
  }
  ASSERT_TRUE(queue.bucketed());
  std::set<std::uint32_t> announced;  // announced and not yet left
  std::size_t left = 0;
  std::size_t left_announced = 0;
  while (queue.bucketed()) {
    const QueuedEvent* top = queue.top();
    ASSERT_NE(top, nullptr);
    const std::span<const std::uint32_t> ahead = queue.take_ahead();
    if (!ahead.empty()) {
      ASSERT_TRUE(announced.empty()) << "an announcement before the last one's entries all left";
      ASSERT_LE(ahead.size(), EventQueue::kAhead);
      announced.insert(ahead.begin(), ahead.end());
      ASSERT_EQ(announced.size(), ahead.size()) << "an entry announced twice at once";
    }
    ASSERT_TRUE(queue.take_ahead().empty()) << "an announcement is read once";
    const std::uint32_t slot = top->slot;
    if (!announced.empty()) {
      ASSERT_EQ(announced.erase(slot), 1U) << "entry " << slot << " left before the ones announced";
      ++left_announced;
    }
    ++left;
    queue.pop();
  }
  EXPECT_GT(left, kPending - EventQueue::kToHeap - 1);
  EXPECT_GE(left_announced * 10, left * 9) << left_announced << " of " << left << " announced before they left";
}

}  // namespace
}  // namespace relaysim::sim
