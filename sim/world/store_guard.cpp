#include "sim/world/store_guard.h"

#include <optional>
#include <string>

namespace relaysim::sim {

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

bool StoreGuard::enter(int writes) {
  RELAYSIM_ASSERT(writes >= 0, "a call writes no statements or some");
  const Time now = kernel_.now();
  if (dying_) throw StoreError(StoreFailure::io, "the pod died in the middle of a store write");
  if (const auto failure = faults_.failure(now, writes > 0)) {
    throw StoreError(*failure, "the store is failing (" + std::string(to_string(*failure)) + ")");
  }
  if (writes == 0) return false;
  const auto crash = faults_.take_crash(pod_, now);
  if (!crash) return false;
  dying_ = true;
  kernel_.at(now, [this, restart = crash->restart_after] { processes_.crash_and_restart(pod_, restart); });
  return true;
}

void StoreGuard::die_during(int writes, InplaceFunction<void(), 16> write) {
  RELAYSIM_ASSERT(writes >= 1, "a pod dies in the middle of a write, not of a read");
  if (db_ == nullptr) throw StoreError(StoreFailure::io, "the pod died as it began a store write");
  // The last statement of the transaction fails; the ones before it ran and roll back.
  DieAfter die(writes - 1);
  db_->set_fail_point(&die);
  try {
    write();
  } catch (...) {
    db_->set_fail_point(nullptr);
    throw;
  }
  db_->set_fail_point(nullptr);
  throw StoreError(StoreFailure::io, "the pod died in the middle of a store write");
}

}  // namespace relaysim::sim
