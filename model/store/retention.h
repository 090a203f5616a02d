// Retention: finished work is forgotten a fixed time after it finished.
//
// Long runs keep memory proportional to the open work, not to the whole history: a store forgets
// a finished row (and its idempotency key) once it has been finished for `keep`, and whoever
// mirrors the store — the simulator's oracle — forgets at the same moments. Finished entries
// arrive in time order, so they wait in a FIFO; a row that was reopened since (a replay) is
// recognised by the caller and skipped.
#pragma once

#include <cstdint>
#include <optional>

#include "model/core/assert.h"
#include "model/core/prefetch.h"
#include "model/core/ring.h"
#include "model/core/time.h"

namespace relaysim {

class Retention {
 public:
  struct Finished {
    Time at;             // when it finished
    std::uint64_t id;    // the caller's id for it
    std::uint32_t slot;  // where the caller keeps it
  };

  // `keep` nullopt: forever (nothing is ever forgotten).
  explicit Retention(std::optional<Duration> keep) : keep_(keep) {
    RELAYSIM_ASSERT(!keep || *keep >= Duration::zero(), "a retention is not negative");
  }

  bool forever() const { return !keep_.has_value(); }
  const std::optional<Duration>& keep() const { return keep_; }

  // Records that `id` (in `slot`) finished at `at`; times must not go back. Nothing when forever.
  void finished(Time at, std::uint64_t id, std::uint32_t slot) {
    if (keep_) queue_.push_back({at, id, slot});
  }

  // The entry `ahead` places from the front, for prefetching what is forgotten soon; or nullptr.
  const Finished* peek(std::size_t ahead) const { return queue_.size() > ahead ? &queue_[ahead] : nullptr; }
  // Asks the cache, a few calls of expire() ahead, for what it will read: the queue's entry 16
  // places from the front, and every line of the caller's record (`record_of(entry)`) 8 places
  // from it. Both were last touched a whole retention ago; reading them cold would stall.
  template <class RecordOf>
  void prefetch(RecordOf&& record_of) const {
    if (queue_.size() > 16) __builtin_prefetch(&queue_[16]);
    if (queue_.size() > 8) prefetch_lines(record_of(queue_[8]));
  }

  // Calls `forget(entry)` for every entry whose time to be forgotten has come by `now`, oldest
  // first. The caller checks that the slot still holds what finished then.
  template <class Forget>
  void expire(Time now, Forget&& forget) {
    if (!keep_) return;
    while (!queue_.empty() && queue_.front().at + *keep_ <= now) {
      const Finished f = queue_.front();
      queue_.pop_front();
      forget(f);
    }
  }

 private:
  std::optional<Duration> keep_;
  Ring<Finished> queue_;  // in the order they finished
};

}  // namespace relaysim
