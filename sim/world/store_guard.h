// StoreGuard: the scenario's store faults (sim/world/store_faults.h), applied to one pod's calls
// into a system's shared store. Each system's pod-side store facade (for the webhook platform,
// sim/webhook/pod_store.h) wraps every store call in `run`, so the faults reach the real store
// code the same way for every system.
//
// Promises:
//  - A store fault (busy, full, failing) makes the call throw StoreError before it changes
//    anything, as a busy or failing database would.
//  - A crash during a write is injected into the middle of the write's transaction: on SQLite
//    through the database's FailPoint, so the statements before the last one run and the real
//    rollback undoes them; the in-memory store has no transaction to interrupt and fails the call
//    whole. Either way the pod then dies (its crash is the next event at this instant), and until
//    it restarts every call it makes throws.
#pragma once

#include <cstdint>

#include "model/core/assert.h"
#include "model/store/sqlite_db.h"
#include "model/store/store_error.h"
#include "sim/kernel/kernel.h"
#include "sim/world/process.h"
#include "sim/world/store_faults.h"

namespace relaysim::sim {

class StoreGuard {
 public:
  // `db`: the SQLite store's database, to fail in the middle of a transaction; nullptr for an
  // in-memory store.
  StoreGuard(Db* db, StoreFaults& faults, Kernel& kernel, Processes& processes, std::uint32_t pod)
      : db_(db), faults_(faults), kernel_(kernel), processes_(processes), pod_(pod) {
    RELAYSIM_ASSERT(pod < processes.size(), "a guard for a pod the platform has");
  }

  // A new incarnation of the pod: it is no longer dying.
  void restart() { dying_ = false; }

  // Runs `call`, a store call that writes `writes` statements on SQLite (0: a read), unless a
  // fault says otherwise; returns what it returns.
  template <class Call>
  decltype(auto) run(int writes, Call&& call) {
    if (enter(writes)) die_during(writes, [&] { static_cast<void>(call()); });
    return call();
  }

 private:
  // Throws for a fault or a dying pod; true when the pod dies during this write.
  bool enter(int writes);
  // Runs the write with a failure at its last statement, then throws: the pod died in it.
  [[noreturn]] void die_during(int writes, InplaceFunction<void(), 16> write);

  Db* db_;
  StoreFaults& faults_;
  Kernel& kernel_;
  Processes& processes_;
  std::uint32_t pod_;
  bool dying_ = false;
};

// The base of every system's pod-side store facade (sim/webhook/pod_store.h, sim/sms/pod_store.h):
// a `Store` of that system that holds the shared store and the pod's guard. The facade overrides
// each call to run it through `guard_`, saying how many statements it writes.
template <class Store>
class GuardedStore : public Store {
 public:
  // `db`: the SQLite store's database, to fail in the middle of a transaction; nullptr for an
  // in-memory store.
  GuardedStore(Store& store, Db* db, StoreFaults& faults, Kernel& kernel, Processes& processes, std::uint32_t pod)
      : store_(store), guard_(db, faults, kernel, processes, pod) {}

  // A new incarnation of the pod: it is no longer dying.
  void restart() { guard_.restart(); }

 protected:
  Store& store_;
  StoreGuard guard_;
};

}  // namespace relaysim::sim
