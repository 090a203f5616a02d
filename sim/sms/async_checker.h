// AsyncChecker: S-async. Follows each gateway pod's sync-to-async mode (model/sms/sync_async.h)
// on the pod's own evidence, and checks that:
//
//   - the pod entered async mode when, and only when, one of its rules held on its sync submits
//     (each rule re-read from its definition), and in the event right after the one that made it
//     hold;
//   - it left by its timer exactly at entry + after, or right after the probe that made min_probes
//     good ones in a row, and was not still in async mode past either;
//   - while in async mode it sent nothing synchronously, and at most one probe in probe_every
//     sends; in sync mode it sent no probe.
//
// A pod starts (and restarts) in sync mode. The state is per pod and its own.
//
// Order: an accepted request and a submit's start reach this checker before the MessageChecker,
// so their S-async reports (a send path against the mode; a pod late into or out of async mode)
// come before the message's; a finished submit reaches it after (see sync_submits()).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "model/core/events.h"
#include "model/sms/events.h"
#include "model/sms/types.h"
#include "sim/oracle/ledger.h"
#include "sim/sms/spec.h"
#include "sim/sms/violations.h"
#include "sim/world/process.h"

namespace relaysim::sim::sms {

class AsyncChecker final : public SinkFor<relaysim::sms::Accepted>,
                           public SinkFor<relaysim::sms::SubmitStarted>,
                           public SinkFor<relaysim::sms::ModeChanged>,
                           public SinkFor<ProcessStarted>,
                           public SinkFor<ProcessCrashed> {
 public:
  // How a pod's timer ends async mode: on the dot in a simulation. Live, the timer's callback runs
  // a little after its deadline, and a send decision made in between ends the mode first (the
  // switch's route); so the exit may come after entered + after, and only the pod's send
  // decisions (an accepted request's path) are held to it.
  AsyncChecker(const SmsSpec& spec, Ledger& ledger, Judged judged = Judged::simulation)
      : spec_(spec), violate_(ledger), judged_(judged), sync_submits_(*this) {}
  // sync_submits_ refers back to this checker.
  AsyncChecker(const AsyncChecker&) = delete;
  AsyncChecker& operator=(const AsyncChecker&) = delete;

  void on(const relaysim::sms::Accepted& e) override;
  void on(const relaysim::sms::SubmitStarted& e) override;
  void on(const relaysim::sms::ModeChanged& e) override;
  void on(const ProcessStarted& e) override;
  void on(const ProcessCrashed& e) override;

  // The sink of finished submits: the sync submits and probes that are S-async's evidence. A sink
  // apart from the checker so that it can be attached after the MessageChecker: a finished
  // submit's message checks (S-retry, S-failover) are reported before a pod found late into async
  // mode, as they always were.
  class SyncSubmits final : public SinkFor<relaysim::sms::SubmitFinished> {
   public:
    explicit SyncSubmits(AsyncChecker& checker) : checker_(checker) {}
    void on(const relaysim::sms::SubmitFinished& e) override;

   private:
    AsyncChecker& checker_;
  };
  SyncSubmits& sync_submits() { return sync_submits_; }

  // The end-of-run check: no pod still owes its entry into async mode, or is still in it past its exit.
  void finish(Time end);

 private:
  // A sync submit (or probe) as the rules read it.
  struct Sample {
    Time at;
    std::int64_t latency_ns;
    bool failed;
  };
  // One pod's mode as the oracle follows it, and the evidence its rules read: the pod's sync
  // submits since it last left async mode (or started).
  struct PodMode {
    bool async = false;
    bool late_reported = false;
    Time entered{};
    std::uint32_t slow_in_a_row = 0;
    std::uint32_t good_probes = 0;
    std::uint64_t probes = 0;  // in this period
    std::uint64_t sends = 0;   // accepted in this period
    std::deque<Sample> samples;
    // A rule that held after the last sync submit, so the pod's next event must be its entry.
    relaysim::sms::AsyncRule must_enter = relaysim::sms::AsyncRule::none;
    Time must_enter_at{};
  };

  PodMode& mode(relaysim::sms::PodId pod);
  // A pod restarts in sync mode.
  void reset(relaysim::sms::PodId pod);
  void check_send_path(const relaysim::sms::Accepted& e);
  void observe_sync_submit(const relaysim::sms::SubmitFinished& e);
  std::string async_rule_unmet(const PodMode& m, relaysim::sms::AsyncRule rule, Time at) const;
  std::string latency_window_unmet(const PodMode& m, Time at) const;
  std::string growth_unmet(const PodMode& m, Time at) const;
  std::string error_rate_unmet(const PodMode& m, Time at) const;
  // `send_decision`: `at` is an accepted request's (a late timer exit is held to those only).
  void check_async_late(PodMode& m, relaysim::sms::PodId pod, Time at, bool send_decision);

  const SmsSpec& spec_;
  Violations violate_;
  Judged judged_;
  std::vector<PodMode> modes_;  // by pod - 1
  SyncSubmits sync_submits_;
};

}  // namespace relaysim::sim::sms
