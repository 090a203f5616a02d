#include "sim/outbox/leadership_checker.h"

#include <algorithm>
#include <string>

#include "model/core/assert.h"

namespace relaysim::sim::outbox {

using namespace relaysim::outbox;

LeadershipChecker::LeadershipChecker(const OutboxSpec& spec, Ledger& ledger)
    : violate_(ledger), fence_(spec.platform.shards, 0) {
  RELAYSIM_ASSERT(spec.platform.shards >= 1, "a relay has shards");
}

void LeadershipChecker::on(const LeaseGranted& e) {
  RELAYSIM_ASSERT(e.token != 0, "a grant carries a fencing token, counted from 1");
  Time& until = granted_until_[e.token];
  until = std::max(until, e.expires);
}

void LeadershipChecker::on(const LeadershipChanged& e) {
  if (!e.leading) return;
  // The coordinator decided the grant after it was asked, so a lease counted from the asking
  // ends no later than the coordinator's; one counted from the answer outlasts it, and a pod that
  // still believes it leads may act beside its successor.
  const auto it = granted_until_.find(e.token);
  const Time granted = it != granted_until_.end() ? it->second : Time{};
  if (e.until > granted) {
    violate_(Invariant::fence, e.at, {e.shard, 0},
             "pod-" + std::to_string(e.pod - 1) + " took the lease of token " + std::to_string(e.token) + " as lasting until " +
                 format_time(e.until) + ", but the coordinator granted it until " + format_time(granted));
  }
}

void LeadershipChecker::on(const LeaderWrote& e) {
  if (!e.applied) {
    ++fenced_out_;
    return;
  }
  RELAYSIM_ASSERT(e.shard < fence_.size(), "a write to a shard the relay has");
  FenceToken& fence = fence_[e.shard];
  if (e.token < fence) {
    violate_(Invariant::fence, e.at, {e.shard, 0},
             std::string("pod-") + std::to_string(e.pod - 1) + "'s " + std::string(to_string(e.write)) + " under token " +
                 std::to_string(e.token) + " took effect after a write under token " + std::to_string(fence));
  }
  fence = std::max(fence, e.token);
}

}  // namespace relaysim::sim::outbox
