// The work a run has open now — acknowledged, not yet final — by id, and the group each piece is
// in (GroupTally's groups: a webhook request's endpoint group, an SMS message's provider): what
// the spine samples every second for each group's backlog (`pending[slow]` in the time series,
// each group's drain after a fault, sim/report/backlog.h).
//
// Ids are dense and grow with time (a store's row ids), so a table by id costs two bytes a piece
// and the least open id is the oldest.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "model/core/assert.h"
#include "sim/report/groups.h"

namespace relaysim::sim {

class OpenWork {
 public:
  // What the table costs per id ever opened, at most: two bytes, twice over while it grows.
  static constexpr double kBytesPerId = 4;

  explicit OpenWork(std::size_t groups) : count_(groups, 0) {
    RELAYSIM_ASSERT(groups <= kMaxGroups, "a system has at most kMaxGroups groups (its scenario is refused otherwise)");
  }

  // `id` is acknowledged, in `group` (an index of the system's groups, or GroupTally::kNone).
  // Opened while open only under a planted bug (a replay of an open request), which the oracle
  // reports: it stays where it was, counted once.
  void open(std::uint64_t id, std::size_t group) {
    if (id >= ids_) [[likely]] grow(id);
    if (is_open(id)) return;
    put(id, group);
  }
  // A closed `id` opens again in the group it was in (a replayed request); nothing if it is open
  // or was never opened.
  void reopen(std::uint64_t id) {
    if (id >= slot_.size() || slot_[id] == kNever || is_open(id)) return;
    slot_[id] |= kOpen;
    count(id, +1);
  }
  // An open `id` is now in `group` (an SMS message submitted to another provider); nothing if
  // it is not open.
  void move(std::uint64_t id, std::size_t group) {
    if (!is_open(id)) return;
    count(id, -1);
    put(id, group);
  }
  // `id` reached its final state; nothing if it is not open.
  void close(std::uint64_t id) {
    if (!is_open(id)) return;
    count(id, -1);
    slot_[id] &= static_cast<std::uint16_t>(~kOpen);
  }

  bool is_open(std::uint64_t id) const { return id < slot_.size() && (slot_[id] & kOpen) != 0; }
  // Whether `id` was ever opened (its group is then known, open or not).
  bool opened(std::uint64_t id) const { return id < slot_.size() && slot_[id] != kNever; }
  // The group an `id` opened was last in (GroupTally::kNone: none, or never opened).
  std::size_t group_of(std::uint64_t id) const {
    const std::uint16_t code = id < slot_.size() ? static_cast<std::uint16_t>(slot_[id] & ~kOpen) : kNever;
    return code < kFirstGroup ? GroupTally::kNone : code - kFirstGroup;
  }
  // Open now in each group, in the system's order.
  std::span<const std::uint64_t> by_group() const { return count_; }
  // One past the greatest id ever opened.
  std::uint64_t ids() const { return ids_; }

 private:
  // A slot: kOpen while open, and which group: kNoGroup, or kFirstGroup + the group's index.
  static constexpr std::uint16_t kNever = 0, kNoGroup = 1, kFirstGroup = 2, kOpen = 0x8000;
  static_assert(kMaxGroups + kFirstGroup <= kOpen, "a group fits beside the open bit");
  void put(std::uint64_t id, std::size_t group) {
    RELAYSIM_ASSERT(group == GroupTally::kNone || group < count_.size(), "a group of the system");
    slot_[id] = static_cast<std::uint16_t>(kOpen | (group == GroupTally::kNone ? kNoGroup : group + kFirstGroup));
    count(id, +1);
  }
  // Ids come one at a time, so the table grows by doubling (entries past ids_ are kNever), not
  // by one entry per id.
  void grow(std::uint64_t id) {
    if (id >= slot_.size()) slot_.resize(std::max<std::size_t>(id + 1, 2 * slot_.size()), kNever);
    ids_ = id + 1;
  }
  void count(std::uint64_t id, int by) {
    const std::size_t g = group_of(id);
    if (g == GroupTally::kNone) return;
    RELAYSIM_ASSERT(by > 0 || count_[g] > 0, "a group's open count stays at zero or above");
    count_[g] += static_cast<std::uint64_t>(by);
  }

  std::vector<std::uint16_t> slot_;   // by id: kNever, or the id's group and whether it is open
  std::vector<std::uint64_t> count_;  // by group: open now
  std::uint64_t ids_ = 0;             // one past the greatest id ever opened
};

}  // namespace relaysim::sim
