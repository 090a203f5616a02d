#include "sim/outbox/metrics.h"

#include <algorithm>

#include "model/core/assert.h"

namespace relaysim::sim::outbox {

using namespace relaysim::outbox;

void Metrics::on(const OperationDone& e) {
  if (e.committed) committed += e.count();
}

void Metrics::on(const OperationCalled& e) {
  ++operations;
  RELAYSIM_ASSERT(e.outcome == 255 || e.outcome < model::kOperationOutcomeNames.count, "an operation's outcome the table counts, or none");
  ++operation_outcomes[e.outcome == 255 ? 3 : std::min<std::size_t>(e.outcome, 2)];
}

void Metrics::believe(ShardId shard, std::uint32_t pod, bool leading, Time at) {
  if (shard >= believers_.size()) return;
  RELAYSIM_ASSERT(split_since_.size() == believers_.size(), "a split's start for every shard");
  std::vector<std::uint32_t>& b = believers_[shard];
  const auto it = std::find(b.begin(), b.end(), pod);
  if (leading == (it != b.end())) return;
  if (leading) {
    b.push_back(pod);
  } else {
    b.erase(it);
  }
  if (b.size() >= 2 && split_since_[shard] == kTimeNever) split_since_[shard] = at;
  if (b.size() < 2 && split_since_[shard] != kTimeNever) {
    RELAYSIM_ASSERT(at >= split_since_[shard], "a split ends no earlier than it began");
    split_brain += at - split_since_[shard];
    split_since_[shard] = kTimeNever;
  }
}

void Metrics::on(const LeadershipChanged& e) {
  believe(e.shard, e.pod, e.leading, e.at);
  if (e.leading) {
    ++leader_terms;
    if (terms.size() < kTermsKept) {
      terms.push_back(Term{e.shard, e.pod, e.token, e.at, kTimeNever});
    } else {
      ++terms_dropped;
    }
    return;
  }
  for (auto it = terms.rbegin(); it != terms.rend(); ++it) {
    if (it->shard == e.shard && it->pod == e.pod && it->to == kTimeNever) {
      it->to = e.at;
      break;
    }
  }
}

void Metrics::on(const ProcessCrashed& e) {
  ++crashes;
  // A dead pod leads nothing, though it never said so.
  for (ShardId s = 0; s < believers_.size(); ++s) believe(s, e.pod + 1, false, e.at);
  for (Term& t : terms) {
    if (t.pod == e.pod + 1 && t.to == kTimeNever) t.to = e.at;
  }
}

void Metrics::on(const LeaderWrote& e) {
  if (!e.applied) {
    ++stale_writes;
    return;
  }
  if (e.write == LeaderWrite::scan) ++scans;
  if (e.write == LeaderWrite::rescue) rescued += e.messages.size();
  if (e.write == LeaderWrite::rescue) {
    for (const Message& m : e.messages) {
      if (m.status == Status::failed) {
        RELAYSIM_ASSERT(static_cast<std::size_t>(m.reason) < final[0].size(), "a reason the table counts");
        ++final[static_cast<std::size_t>(m.status)][static_cast<std::size_t>(m.reason)];
        ++finals;
        attempts_of_finals += m.attempt;
        last_final_at = std::max(last_final_at, e.at);
      }
    }
  }
}

void Metrics::on(const Finished& e) {
  if (!e.applied) return;
  const Finish& f = e.finish;
  if (f.status == Status::pending) {
    ++retries;
    return;
  }
  RELAYSIM_ASSERT(static_cast<std::size_t>(f.status) < final.size() &&
                      static_cast<std::size_t>(f.reason) < final[0].size(),
                  "a final status and reason the table counts");
  ++final[static_cast<std::size_t>(f.status)][static_cast<std::size_t>(f.reason)];
  ++finals;
  attempts_of_finals += e.record.attempt;
  last_final_at = std::max(last_final_at, f.at);
  if (f.status == Status::handled) latency.add(f.at - e.record.created_at);
}

void Metrics::restart(Time at) {
  Metrics next;
  next.believers_ = std::move(believers_);
  next.split_since_ = std::move(split_since_);
  for (Time& t : next.split_since_) {
    if (t != kTimeNever) t = at;
  }
  next.terms = std::move(terms);
  next.terms_dropped = terms_dropped;
  *this = std::move(next);
  RELAYSIM_ASSERT(split_since_.size() == believers_.size(), "a split's start for every shard");
}

void Metrics::close(Time end) {
  for (ShardId s = 0; s < split_since_.size(); ++s) {
    if (split_since_[s] != kTimeNever) {
      RELAYSIM_ASSERT(end >= split_since_[s], "a run ends no earlier than a split in it began");
      split_brain += end - split_since_[s];
      split_since_[s] = kTimeNever;
    }
  }
}

double detail::latency_quantile_s(const Figures& f, double q) {
  RELAYSIM_ASSERT(q > 0 && q <= 100, "a percentile is in (0, 100]");
  if (f.metrics.latency.count() == 0) return std::numeric_limits<double>::quiet_NaN();
  return to_seconds(f.metrics.latency.quantile(q / 100.0));
}

}  // namespace relaysim::sim::outbox
