#include "model/webhook/notice_relay.h"

#include "model/core/assert.h"
#include "model/webhook/mutants.h"

namespace relaysim::webhook {

NoticeRelay::NoticeRelay(PodId pod, const PlatformConfig& config, Store& store, Clock& clock, Timers& timers,
                         NoticeChannel& channel, Events& events)
    : pod_(pod), config_(config), store_(store), clock_(clock), channel_(channel), events_(events),
      waker_(timers, [this] { pump(); }) {}

void NoticeRelay::pump() {
  // A channel that answers at once calls told(), and so pump(), from inside this loop: folded in.
  const bool outermost = loop_.run([this] {
    Time now{};
    while (out_ < kMaxOut && (now = clock_.now()) >= store_retry_at_) {
      try {
        if (!store_.claim_notice(now, config_.lease, notice_)) break;
      } catch (const StoreError& e) {
        store_failed(e.failure());
        break;
      }
      RELAYSIM_ASSERT(notice_.sends >= 1 &&
                          (notice_.status == Status::failed || notice_.status == Status::dead_lettered),
                      "a claimed notice is of a failure, and counted");
      ++out_;
      events_.emit(TenantNotified{pod_, notice_, now});
      channel_.tell(notice_, [this, id = notice_.id](bool sent) { told(id, sent); });
    }
  });
  if (outermost) arm_wake(clock_.now());
}

void NoticeRelay::told(NoticeId id, bool sent) {
  RELAYSIM_ASSERT(out_ > 0, "an answer for a send that is out");
  const bool was_full = out_ == kMaxOut;
  --out_;
  if (sent && !planted(mutant::notice_never_removed)) {
    try {
      store_.notice_sent(id);
    } catch (const StoreError& e) {
      // It stays in the outbox, leased: sent again when the lease expires (a duplicate, never a
      // loss).
      store_failed(e.failure());
    }
  }
  if (was_full) pump();
}

void NoticeRelay::store_failed(StoreFailure failure) {
  const Time now = clock_.now();
  events_.emit(StoreFailed{pod_, StoreOp::notice, failure, now});
  store_retry_at_ = now + config_.store_retry;
}

void NoticeRelay::arm_wake(Time now) {
  // Full: a send's answer pumps. (Waking for a notice due now would only find the relay full.)
  if (out_ >= kMaxOut) return;
  std::optional<Time> next;
  if (now >= store_retry_at_) {
    try {
      next = store_.next_notice();
    } catch (const StoreError& e) {
      store_failed(e.failure());
    }
  }
  waker_.arm(now, store_retry_at_, next);
}

}  // namespace relaysim::webhook
