// NoticeRelay: one pod's sender of the store's outbox of tenants' notices.
//
// A completion that fails a request writes the failure and its notice in one transaction
// (Completion::notify), so a notice exists exactly when its failure does. The relay claims each
// notice under a lease (so no two pods send it at once), tells the tenant through the
// NoticeChannel, and removes it once the channel says it is out. A pod that dies between the send
// and the removal leaves the notice leased; once the lease has expired, the next relay that looks
// sends it again: at least once, never lost. It goes on while its node drains (Node::stop).
//
// It never polls: it looks when its own dispatcher has just written a notice (pump), when the
// shell nudges the node (serve does, every `poll`) or starts it (a restarted pod), and when the
// outbox's next notice falls due, as its last look saw it (a DueWaker).
// When a store call fails it leaves the store alone for `store_retry`, as the dispatcher does.
#pragma once

#include <cstdint>

#include "model/core/folded_loop.h"
#include "model/core/ports.h"
#include "model/store/due_waker.h"
#include "model/webhook/config.h"
#include "model/webhook/events.h"
#include "model/webhook/ports.h"
#include "model/webhook/store.h"

namespace relaysim::webhook {

class NoticeRelay {
 public:
  NoticeRelay(PodId pod, const PlatformConfig& config, Store& store, Clock& clock, Timers& timers, NoticeChannel& channel,
              Events& events);
  NoticeRelay(const NoticeRelay&) = delete;
  NoticeRelay& operator=(const NoticeRelay&) = delete;

  // Sends what the outbox holds that is due now.
  void pump();

  // Sends whose channel has not answered yet.
  std::uint32_t out() const { return out_; }

  // At most this many sends wait for their channel at once; the rest wait in the outbox.
  static constexpr std::uint32_t kMaxOut = 64;

 private:
  void told(NoticeId id, bool sent);
  void arm_wake(Time now);
  void store_failed(StoreFailure failure);

  PodId pod_;
  const PlatformConfig& config_;
  Store& store_;
  Clock& clock_;
  NoticeChannel& channel_;
  Events& events_;

  std::uint32_t out_ = 0;
  FoldedLoop loop_;
  Time store_retry_at_{};
  Notice notice_;  // the one being claimed (reused)
  DueWaker waker_;
};

}  // namespace relaysim::webhook
