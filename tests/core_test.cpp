#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "model/core/big_memory.h"
#include "model/core/concurrency_limit.h"
#include "model/core/function.h"
#include "model/core/inline_text.h"
#include "model/core/names.h"
#include "model/core/random.h"
#include "model/core/ring.h"
#include "model/core/short_text.h"
#include "model/core/slot_pool.h"
#include "model/core/time.h"
#include "sim/scenario/units.h"

namespace relaysim {
namespace {

enum class Colour : std::uint8_t { red, green, blue };
constexpr auto kColourNames = names<Colour>({{Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "dark blue"}});
// A table that misses, repeats or reorders an enumerator does not compile (names.h); what it
// answers at run time is checked here.
static_assert(kColourNames.count == 3);
static_assert(kColourNames[Colour::blue] == "dark blue");

TEST(Names, NameParseAndCountComeFromOneTable) {
  EXPECT_EQ(kColourNames[Colour::green], "green");
  EXPECT_EQ(kColourNames.parse("dark blue"), Colour::blue);
  EXPECT_EQ(kColourNames.parse("blue"), std::nullopt);
  EXPECT_EQ(kColourNames.parse(""), std::nullopt);
  // A value no enumerator has (a corrupted byte) is named, not read out of bounds.
  EXPECT_EQ(kColourNames[static_cast<Colour>(7)], "?");
  ASSERT_EQ(kColourNames.all().size(), 3U);
  EXPECT_EQ(kColourNames.all()[0], "red");
}

TEST(ConcurrencyLimit, HoldsAtMostItsLimitAndIntegratesBusyTime) {
  ConcurrencyLimit slots(2);
  const Time t0{};
  EXPECT_TRUE(slots.has_room());
  slots.take(t0);
  slots.take(t0 + std::chrono::seconds(1));
  EXPECT_FALSE(slots.has_room());
  EXPECT_EQ(slots.busy(), 2U);
  slots.release(t0 + std::chrono::seconds(3));
  EXPECT_TRUE(slots.has_room());
  // 3 s of one slot, 2 s of the other, then 1 s of one: 6 slot-seconds at 4 s.
  EXPECT_EQ(slots.busy_time(t0 + std::chrono::seconds(4)), std::chrono::seconds(6));
  EXPECT_EQ(slots.limit(), 2U);
}

TEST(Rng, SameSeedSameStream) {
  Rng a(42), b(42);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, DerivedStreamsAreIndependentOfEachOther) {
  Rng load = Rng::derive(7, "load");
  Rng faults = Rng::derive(7, "faults");
  EXPECT_NE(load.next_u64(), faults.next_u64());
  // Deriving another stream does not disturb an existing one.
  Rng load_again = Rng::derive(7, "load");
  (void)Rng::derive(7, "endpoints").next_u64();
  Rng load_fresh = Rng::derive(7, "load");
  EXPECT_EQ(load_again.next_u64(), load_fresh.next_u64());
}

TEST(Rng, BelowStaysInRangeAndCoversIt) {
  Rng r(1);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const auto v = r.below(10);
    ASSERT_LT(v, 10u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 10u);
}

TEST(Rng, Uniform01IsHalfOpen) {
  Rng r(3);
  for (int i = 0; i < 10000; ++i) {
    const double u = r.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(InplaceFunction, MovesAndCallsAndDestroysCaptures) {
  auto counter = std::make_shared<int>(0);
  InplaceFunction<int(int), 32> f = [counter](int x) { return ++*counter + x; };
  EXPECT_EQ(counter.use_count(), 2);
  InplaceFunction<int(int), 32> g = std::move(f);
  EXPECT_FALSE(static_cast<bool>(f));
  EXPECT_EQ(g(10), 11);
  g.reset();
  EXPECT_EQ(counter.use_count(), 1);
}

TEST(Time, FormatsDurationsForPeople) {
  EXPECT_EQ(format_duration(std::chrono::hours(26) + std::chrono::minutes(3)), "26h03m00.000s");
  EXPECT_EQ(format_duration(std::chrono::milliseconds(1500)), "1.500s");
  EXPECT_EQ(format_duration(std::chrono::seconds(90)), "1m30.000s");
  EXPECT_EQ(format_duration(Duration(1)), "1ns");
  EXPECT_EQ(format_duration(std::chrono::microseconds(250)), "0.25ms");
}

TEST(Units, ParsesDurations) {
  Duration d{};
  ASSERT_TRUE(sim::parse_duration("250ms", d));
  EXPECT_EQ(d, std::chrono::milliseconds(250));
  ASSERT_TRUE(sim::parse_duration("1h30m", d));
  EXPECT_EQ(d, std::chrono::minutes(90));
  ASSERT_TRUE(sim::parse_duration("1.5s", d));
  EXPECT_EQ(d, std::chrono::milliseconds(1500));
  ASSERT_TRUE(sim::parse_duration("1d", d));
  EXPECT_EQ(d, std::chrono::hours(24));
  ASSERT_TRUE(sim::parse_duration("10 ms", d));
  EXPECT_EQ(d, std::chrono::milliseconds(10));
  ASSERT_TRUE(sim::parse_duration("0", d));
  EXPECT_EQ(d, Duration::zero());
  EXPECT_FALSE(sim::parse_duration("10", d));
  EXPECT_FALSE(sim::parse_duration("5 parsecs", d));
  EXPECT_FALSE(sim::parse_duration("-1s", d));
  EXPECT_FALSE(sim::parse_duration("", d));
  EXPECT_FALSE(sim::parse_duration("1h 30", d));
}

TEST(Units, ParsesRatesAndFractions) {
  double v = 0;
  ASSERT_TRUE(sim::parse_rate("800/s", v));
  EXPECT_DOUBLE_EQ(v, 800.0);
  ASSERT_TRUE(sim::parse_rate("30/min", v));
  EXPECT_DOUBLE_EQ(v, 0.5);
  EXPECT_FALSE(sim::parse_rate("800", v));
  ASSERT_TRUE(sim::parse_fraction("5%", v));
  EXPECT_DOUBLE_EQ(v, 0.05);
  ASSERT_TRUE(sim::parse_fraction("0.25", v));
  EXPECT_DOUBLE_EQ(v, 0.25);
  EXPECT_FALSE(sim::parse_fraction("150%", v));
  EXPECT_FALSE(sim::parse_fraction("2", v));
}

TEST(Units, EditDistance) {
  EXPECT_EQ(sim::edit_distance("retyr", "retry"), 2u);
  EXPECT_EQ(sim::edit_distance("lease", "lease"), 0u);
  EXPECT_EQ(sim::edit_distance("", "abc"), 3u);
}

}  // namespace
}  // namespace relaysim

namespace relaysim {
namespace {

TEST(InlineText, KeepsShortAndLongTextsWholeAcrossMoves) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, InlineText::kInline, InlineText::kInline + 1, std::size_t{1000}}) {
    const std::string a(n / 2, 'a');
    const std::string b(n - n / 2, 'b');
    InlineText t;
    t.assign(a, std::string_view("|"), b);
    EXPECT_EQ(t.view(), a + "|" + b);
    InlineText moved(std::move(t));
    EXPECT_EQ(moved.view(), a + "|" + b);
    EXPECT_EQ(t.size(), 0u);  // NOLINT(bugprone-use-after-move): a moved-from text is empty
    InlineText other;
    other.assign(std::string_view("something else entirely, longer than the inline buffer"));
    other = std::move(moved);
    EXPECT_EQ(other.view(), a + "|" + b);
    other.clear();
    EXPECT_EQ(other.view(), "");
  }
}

}  // namespace
}  // namespace relaysim

namespace relaysim {
namespace {

TEST(HashBytes, SeesEveryByteAndTheLength) {
  std::set<std::uint64_t> seen;
  std::string s;
  for (int n = 0; n < 40; ++n) {
    EXPECT_TRUE(seen.insert(hash_bytes(s)).second) << "length " << n;
    s.push_back('a');
  }
  const std::string url = "https://endpoint-17.example/hooks/cx17";
  for (std::size_t i = 0; i < url.size(); ++i) {
    std::string other = url;
    other[i] = '#';
    EXPECT_NE(hash_bytes(other), hash_bytes(url)) << "byte " << i;
  }
  EXPECT_EQ(hash_bytes(std::string(url)), hash_bytes(url));
  // Short texts and the tail of longer ones are read in overlapping loads: every byte still counts.
  for (std::size_t n = 1; n <= 17; ++n) {
    const std::string text(n, 'x');
    for (std::size_t i = 0; i < n; ++i) {
      std::string other = text;
      other[i] = 'y';
      EXPECT_NE(hash_bytes(other), hash_bytes(text)) << "length " << n << ", byte " << i;
    }
  }
}

TEST(Ring, KeepsFifoOrderAcrossWrapAndGrowth) {
  Ring<int> ring;
  int next_in = 0, next_out = 0;
  // Interleave pushes and pops so the ring wraps before each time it grows.
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 50 * (round + 1); ++i) ring.push_back(next_in++);
    for (int i = 0; i < 30 * (round + 1); ++i) {
      ASSERT_EQ(ring.front(), next_out++);
      ring.pop_front();
    }
    ASSERT_EQ(ring.size(), static_cast<std::size_t>(next_in - next_out));
    for (std::size_t i = 0; i < ring.size(); ++i) ASSERT_EQ(ring[i], next_out + static_cast<int>(i));
    ASSERT_EQ(ring.back(), next_in - 1);
  }
  while (!ring.empty()) {
    ASSERT_EQ(ring.front(), next_out++);
    ring.pop_front();
  }
  EXPECT_EQ(next_out, next_in);
}

// Counts live elements: each one added to a StableVector is constructed once and destroyed once
// with the vector. `Bytes` sets its size, and so how soon the vector's chunks reach their full size.
template <std::size_t Bytes>
struct Counted {
  static inline int live = 0;
  std::uint64_t value = 0;
  std::array<unsigned char, Bytes - sizeof(std::uint64_t)> padding{};
  Counted() { ++live; }
  ~Counted() { --live; }
};

template <class T, unsigned ChunkBits>
void expect_elements_stay_put_and_apart(std::size_t count) {
  {
    StableVector<T, ChunkBits> items;
    std::vector<const T*> where;
    for (std::size_t i = 0; i < count; ++i) {
      T& c = items.emplace_back();
      ASSERT_EQ(c.value, 0u) << "a new element is value-initialized: " << i;
      c.value = i * 7 + 1;
      where.push_back(&c);
    }
    EXPECT_EQ(T::live, static_cast<int>(count));
    ASSERT_EQ(items.size(), count);
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_EQ(&items[i], where[i]) << "element " << i << " moved";
      ASSERT_EQ(items[i].value, i * 7 + 1) << "element " << i << " was written over";
    }
  }
  EXPECT_EQ(T::live, 0);
}

TEST(StableVector, ElementsStayPutAndApartAsTheChunksGrow) {
  // Small elements: chunks of 4, 8, 16, ... elements, the last one partly used.
  expect_elements_stay_put_and_apart<Counted<8>, 2>(5000);
  // 64 KiB elements: chunks of 4, 8 and 16, then of 32 (2 MiB) from the 29th element on.
  expect_elements_stay_put_and_apart<Counted<64 * 1024>, 2>(200);
  // 24 KiB elements, which do not divide a huge page: chunks of 4 ... 64, then of 85 from the 125th.
  expect_elements_stay_put_and_apart<Counted<24 * 1024>, 2>(400);
}

TEST(BigMemory, BlocksOfEverySizeHoldWhatIsWrittenAndAreAlignedAsAsked) {
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{4096}, kOwnPagesFrom - 1, kOwnPagesFrom, kHugePageBytes,
                                  3 * kHugePageBytes + 5}) {
    for (const std::size_t alignment : {alignof(std::uint64_t), std::size_t{64}}) {
      auto* block = static_cast<unsigned char*>(allocate_big(bytes, alignment));
      ASSERT_NE(block, nullptr);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(block) % alignment, 0u) << bytes;
      for (std::size_t i = 0; i < bytes; i += 997) block[i] = static_cast<unsigned char>(i);
      block[bytes - 1] = 0xAB;
      for (std::size_t i = 0; i + 1 < bytes; i += 997) ASSERT_EQ(block[i], static_cast<unsigned char>(i));
      EXPECT_EQ(block[bytes - 1], 0xAB);
      release_big(block, bytes, alignment);
    }
  }
  // A vector on it grows past the huge-page size and keeps its elements.
  std::vector<std::uint32_t, BigAllocator<std::uint32_t>> big;
  for (std::uint32_t i = 0; i < 3'000'000; ++i) big.push_back(i);
  for (std::uint32_t i = 0; i < 3'000'000; i += 1009) ASSERT_EQ(big[i], i);
}

TEST(ShortText, JoinsLiteralsAndNumbers) {
  ShortText<64> t;
  t << "http://ep" << std::uint64_t{0} << ".sim/v" << UINT64_MAX;
  EXPECT_EQ(t.view(), "http://ep0.sim/v18446744073709551615");
  EXPECT_EQ(ShortText<8>{}.view(), "");
}

}  // namespace
}  // namespace relaysim
