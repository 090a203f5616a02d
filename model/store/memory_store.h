// MemoryStore: the Store contract in process memory, for long simulated runs and sweeps.
//
// Due work is a binary heap of (due_at, id, epoch) with lazy deletion: every change to a row bumps
// its epoch, and heap entries with an old epoch are dropped when they surface. Expiry is a second
// heap of (deadline_at, id) holding at most one live entry per row (a deadline changes only on
// replay), so retries and deferrals do not grow it. claim_due, claim_expired and next_due are
// O(log n) amortised; nothing scans.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "model/store/store.h"

namespace relaysim::webhook {

class MemoryStore final : public Store {
 public:
  MemoryStore() = default;

  CreateResult create(const NewRequest& request) override;
  bool claim_due(Time now, PodId pod, Duration lease, RequestRow& out) override;
  bool claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) override;
  bool complete(RequestId id, ClaimToken token, const Completion& completion) override;
  std::optional<Time> next_due() override;
  ReplayOutcome replay(RequestId id, Time now, Time new_deadline) override;

  std::optional<RequestRow> get(RequestId id) override;
  std::vector<AttemptRow> attempts(RequestId id) override;
  StoreCounts counts() override;

 private:
  struct DueEntry {
    Time due;
    RequestId id;
    std::uint32_t epoch;
  };
  RequestRow* row(RequestId id);
  void schedule(RequestRow& r);  // push r's due_at with a fresh epoch
  void drop_stale();
  void claim(RequestRow& r, Time now, PodId pod, Duration lease, RequestRow& out);

  std::vector<RequestRow> rows_;        // rows_[id - 1]
  std::vector<std::uint32_t> epochs_;   // epochs_[id - 1]
  std::vector<DueEntry> due_;           // min-heap on (due, id)
  std::vector<DueEntry> expiry_;        // min-heap on (deadline, id); `due` holds the deadline
  std::vector<std::uint8_t> in_expiry_; // in_expiry_[id - 1]: the row has a live expiry entry
  std::unordered_map<std::string, RequestId> keys_;
  std::vector<AttemptRow> attempts_;
  std::array<std::uint64_t, kStatusCount> by_status_{};
  ClaimToken next_token_ = 1;
  std::string key_scratch_;
};

}  // namespace relaysim::webhook
