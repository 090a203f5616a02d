// PodStore: one pod's handle on the platform's shared store, through which the scenario's store
// faults reach the real store code (sim/world/store_faults.h).
//
// The faults are applied by a StoreGuard (sim/world/store_guard.h, which says what they do); this
// class only says how many statements each call writes on SQLite.
#pragma once

#include "model/webhook/store.h"
#include "sim/world/store_guard.h"

namespace relaysim::sim::webhook {

class PodStore final : public GuardedStore<relaysim::webhook::Store> {
 public:
  using GuardedStore::GuardedStore;

  using RequestId = relaysim::webhook::RequestId;
  relaysim::webhook::CreateResult create(const relaysim::webhook::NewRequest& r) override;
  bool claim_due(Time now, relaysim::webhook::PodId pod, Duration lease, relaysim::webhook::RequestRow& out,
                 relaysim::webhook::Claimable which) override;
  bool claim_expired(Time now, relaysim::webhook::PodId pod, Duration lease, relaysim::webhook::RequestRow& out) override;
  bool complete(RequestId id, relaysim::webhook::ClaimToken token, const relaysim::webhook::Completion& c) override;
  std::optional<Time> next_due(relaysim::webhook::Claimable which) override;
  std::optional<Time> next_expiry() override;
  relaysim::webhook::ReplayOutcome replay(RequestId id, Time now, Time new_deadline) override;
  bool claim_notice(Time now, Duration lease, relaysim::webhook::Notice& out) override;
  void notice_sent(relaysim::webhook::NoticeId id) override;
  std::optional<Time> next_notice() override;
  std::vector<relaysim::webhook::Notice> notices() override { return store_.notices(); }

  std::optional<relaysim::webhook::RequestRow> get(RequestId id) override { return store_.get(id); }
  std::vector<relaysim::webhook::AttemptRow> attempts(RequestId id) override { return store_.attempts(id); }
  relaysim::webhook::StoreCounts counts() override { return store_.counts(); }
  std::vector<RequestId> with_status(relaysim::webhook::Status status, RequestId after, std::size_t limit) override {
    return store_.with_status(status, after, limit);
  }
  std::optional<Duration> retention() const override { return store_.retention(); }
};

}  // namespace relaysim::sim::webhook
