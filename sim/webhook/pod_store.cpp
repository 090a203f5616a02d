#include "sim/webhook/pod_store.h"

namespace relaysim::sim::webhook {

using namespace relaysim::webhook;

namespace {
// Lets `pass` write steps through, then fails the next one as an I/O error: the process died.
class DieAfter final : public FailPoint {
 public:
  explicit DieAfter(int pass) : pass_(pass) {}
  std::optional<StoreFailure> before_step(bool writes) override {
    if (!writes) return std::nullopt;
    if (pass_-- > 0) return std::nullopt;
    return StoreFailure::io;
  }

 private:
  int pass_;
};
}  // namespace

template <class Call>
auto PodStore::guarded(int writes, Call&& call) {
  const Time now = kernel_.now();
  if (dying_) throw StoreError(StoreFailure::io, "the pod died in the middle of a store write");
  if (const auto failure = faults_.failure(now, writes > 0)) {
    throw StoreError(*failure, "the store is failing (" + std::string(to_string(*failure)) + ")");
  }
  if (writes > 0) {
    if (const auto crash = faults_.take_crash(pod_, now)) {
      dying_ = true;
      kernel_.at(now, [this, restart = crash->restart_after] { processes_.crash_and_restart(pod_, restart); });
      if (db_ == nullptr) throw StoreError(StoreFailure::io, "the pod died as it began a store write");
      // The last statement of the transaction fails; the ones before it ran and roll back.
      DieAfter die(writes - 1);
      db_->set_fail_point(&die);
      try {
        call();
      } catch (...) {
        db_->set_fail_point(nullptr);
        throw;
      }
      db_->set_fail_point(nullptr);
      throw StoreError(StoreFailure::io, "the pod died in the middle of a store write");
    }
  }
  return call();
}

CreateResult PodStore::create(const NewRequest& r) {
  return guarded(1, [&] { return store_.create(r); });
}

// On SQLite a claim is one statement (its trigger moves the token counter on within it).
bool PodStore::claim_due(Time now, PodId pod, Duration lease, RequestRow& out) {
  return guarded(1, [&] { return store_.claim_due(now, pod, lease, out); });
}

bool PodStore::claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) {
  return guarded(1, [&] { return store_.claim_expired(now, pod, lease, out); });
}

// A completion writes the row, then (with an attempt) the attempt: one transaction.
bool PodStore::complete(RequestId id, ClaimToken token, const Completion& c) {
  return guarded(c.attempt != nullptr ? 2 : 1, [&] { return store_.complete(id, token, c); });
}

std::optional<Time> PodStore::next_due() {
  return guarded(0, [&] { return store_.next_due(); });
}

ReplayOutcome PodStore::replay(RequestId id, Time now, Time new_deadline) {
  return guarded(1, [&] { return store_.replay(id, now, new_deadline); });
}

}  // namespace relaysim::sim::webhook
