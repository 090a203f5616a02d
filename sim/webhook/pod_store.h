// PodStore: one pod's handle on the platform's shared store, through which the scenario's store
// faults reach the real store code (sim/world/store_faults.h).
//
// A store fault makes the call fail before it changes anything, as a busy or failing database
// would. A crash during a write is injected into the middle of the write's transaction: on SQLite
// through the database's FailPoint, after the transaction's first statement, so the real rollback
// runs; the in-memory store has no transaction to interrupt and fails the call whole. Either way
// the pod then dies (its crash is the next event), and until it does every call it makes fails.
#pragma once

#include "model/store/sqlite_db.h"
#include "model/webhook/store.h"
#include "sim/kernel/kernel.h"
#include "sim/world/process.h"
#include "sim/world/store_faults.h"

namespace relaysim::sim::webhook {

class PodStore final : public relaysim::webhook::Store {
 public:
  // `db`: the SQLite store's database, to fail in the middle of a transaction; nullptr for the
  // in-memory store.
  PodStore(relaysim::webhook::Store& store, Db* db, StoreFaults& faults, Kernel& kernel, Processes& processes,
           std::uint32_t pod)
      : store_(store), db_(db), faults_(faults), kernel_(kernel), processes_(processes), pod_(pod) {}

  // A new incarnation of the pod: it is no longer dying.
  void restart() { dying_ = false; }

  using RequestId = relaysim::webhook::RequestId;
  relaysim::webhook::CreateResult create(const relaysim::webhook::NewRequest& r) override;
  bool claim_due(Time now, relaysim::webhook::PodId pod, Duration lease, relaysim::webhook::RequestRow& out) override;
  bool claim_expired(Time now, relaysim::webhook::PodId pod, Duration lease, relaysim::webhook::RequestRow& out) override;
  bool complete(RequestId id, relaysim::webhook::ClaimToken token, const relaysim::webhook::Completion& c) override;
  std::optional<Time> next_due() override;
  relaysim::webhook::ReplayOutcome replay(RequestId id, Time now, Time new_deadline) override;

  std::optional<relaysim::webhook::RequestRow> get(RequestId id) override { return store_.get(id); }
  std::vector<relaysim::webhook::AttemptRow> attempts(RequestId id) override { return store_.attempts(id); }
  relaysim::webhook::StoreCounts counts() override { return store_.counts(); }
  std::optional<Duration> retention() const override { return store_.retention(); }

 private:
  // Runs `call` (a store call that writes `writes` statements on SQLite; 0: a read) unless a fault
  // says otherwise.
  template <class Call>
  auto guarded(int writes, Call&& call);

  relaysim::webhook::Store& store_;
  Db* db_;
  StoreFaults& faults_;
  Kernel& kernel_;
  Processes& processes_;
  std::uint32_t pod_;
  bool dying_ = false;
};

}  // namespace relaysim::sim::webhook
