#include <gtest/gtest.h>

#include "model/webhook/memory_store.h"
#include "model/webhook/ingest.h"
#include "tests/manual_clock.h"

namespace relaysim::webhook {
namespace {

using testing::ManualClock;

struct IngestTest : ::testing::Test {
  ManualClock clock;
  MemoryStore store;
  Events events;
  PlatformConfig config;
  int nudges = 0;
  Ingest ingest{0, config, store, clock, events, [this] { ++nudges; }};
};

TEST_F(IngestTest, PersistsBeforeAcknowledgingWithTheDeadline) {
  clock.t = Time{} + std::chrono::hours(1);
  const IngestResult r = ingest.create("cx1", "r1", "{}");
  ASSERT_EQ(r.status, IngestStatus::created);
  const auto row = store.get(r.id);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->created_at, clock.t);
  EXPECT_EQ(row->deadline_at, clock.t + std::chrono::hours(24));
  EXPECT_EQ(row->status, Status::pending);
  EXPECT_EQ(nudges, 1);
}

TEST_F(IngestTest, ADuplicateReturnsTheOriginalAndAConflictIsRefused) {
  const IngestResult a = ingest.create("cx1", "r1", "{\"a\":1}");
  const IngestResult b = ingest.create("cx1", "r1", "{\"a\":1}");
  const IngestResult c = ingest.create("cx1", "r1", "{\"a\":2}");
  const IngestResult d = ingest.create("cx2", "r1", "{\"a\":1}");  // another cxid: another key
  EXPECT_EQ(b.status, IngestStatus::duplicate);
  EXPECT_EQ(b.id, a.id);
  EXPECT_EQ(c.status, IngestStatus::conflict);
  EXPECT_EQ(c.id, a.id);
  EXPECT_EQ(d.status, IngestStatus::created);
  EXPECT_NE(d.id, a.id);
  EXPECT_EQ(store.counts().by_status[0], 2u);
  EXPECT_EQ(nudges, 2);
}

TEST_F(IngestTest, RejectsMalformedRequestsWithAReason) {
  EXPECT_EQ(ingest.create("", "r1", "{}").status, IngestStatus::invalid);
  EXPECT_EQ(ingest.create("cx", "", "{}").status, IngestStatus::invalid);
  const IngestResult big = ingest.create("cx", "r", std::string(config.max_payload_bytes + 1, 'x'));
  EXPECT_EQ(big.status, IngestStatus::invalid);
  EXPECT_EQ(big.problem, "payload is too large");
  EXPECT_EQ(store.counts().by_status[0], 0u);
}

}  // namespace
}  // namespace relaysim::webhook
