#include "sim/sms/limit_checker.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/resilience/shared_limiter.h"
#include "sim/report/text.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

void LimitChecker::on(const KvApplied& e) {
  RELAYSIM_ASSERT(!e.key.empty(), "a shared limit is kept under a key");
  auto it = store_limits_.find(e.key);
  if (it == store_limits_.end()) it = store_limits_.emplace(std::string(e.key), LimitReplay(e.spec)).first;
  LimitReplay& replay = it->second;
  if (e.op == LimitOp::peek) return;  // records nothing
  ++checks_;
  const LimitReplay::Verdict v = replay.judge(e.at, e.cost, e.member);
  const bool counted = e.op == LimitOp::force || e.decision.admitted;
  if (e.op == LimitOp::force && !v.admitted) {
    violate_(Invariant::limit, e.at, 0,
             "limit '" + std::string(e.key) + "' recorded a call its " + std::string(to_string(e.spec.algorithm)) +
                 " refuses: it was checked, then set in a second call");
  } else if (e.op == LimitOp::take && e.decision.admitted != v.admitted) {
    violate_(Invariant::limit, e.at, 0,
             "limit '" + std::string(e.key) + "' (" + std::string(to_string(e.spec.algorithm)) + ", " +
                 std::to_string(e.spec.limit) + " per " + format_duration(e.spec.window) + ") " +
                 (e.decision.admitted ? "admitted a call its definition refuses" : "refused a call its definition admits"));
  }
  if (counted && !v.repeat) replay.record(e.at, e.cost, e.member);
}

void LimitChecker::on(const KvRestarted&) {
  // The store came back empty: every limit starts afresh, which lets up to one limit's worth
  // more through (attributed to the restart, not a violation).
  for (auto& [key, replay] : store_limits_) replay.reset();
}

void LimitChecker::on(const LimitDecided& e) {
  const SharedDecision& d = e.decision;
  if (d.via == LimitVia::deny && d.admitted) {
    violate_(Invariant::limit, e.at, e.message, "admitted by the deny policy");
    return;
  }
  if (d.via != LimitVia::local) return;
  // The pod's share of the limit while the store is down, as the promise states it: the limit
  // and the burst divided among the pods, rounded up.
  const std::uint32_t n = std::max<std::uint32_t>(1, e.limit.pods);
  LimiterSpec share = e.limit.spec;
  share.limit = (share.limit + n - 1) / n;
  share.burst = (share.burst + n - 1) / n;
  RELAYSIM_ASSERT(e.pod >= 1, "a pod");
  if (local_limits_.size() < e.pod) local_limits_.resize(e.pod);
  RELAYSIM_ASSERT(share.limit >= 1 || e.limit.spec.limit == 0, "a pod's share of a limit is at least one call");
  auto it = local_limits_[e.pod - 1].try_emplace(e.business, share).first;
  ++checks_;
  const LimitReplay::Verdict v = it->second.judge(e.at, 1, e.member);
  if (d.admitted && !v.admitted) {
    violate_(Invariant::limit, e.at, e.message,
             "pod " + std::to_string(e.pod) + "'s local limit admitted more than its share (" +
                 std::to_string(share.limit) + " per " + format_duration(share.window) + ") while the store was down");
  }
  if (d.admitted && !v.repeat) it->second.record(e.at, 1, e.member);
}

void LimitChecker::reset_local_limits(PodId pod) {
  RELAYSIM_ASSERT(pod >= 1, "gateway pods are numbered from 1");
  if (pod <= local_limits_.size()) local_limits_[pod - 1].clear();
}

void LimitChecker::on(const ProcessStarted& e) { reset_local_limits(e.pod + 1); }
void LimitChecker::on(const ProcessCrashed& e) { reset_local_limits(e.pod + 1); }

}  // namespace relaysim::sim::sms
