// Oracle: judges an SMS run against its invariants (sim/sms/invariants.h) from the model's events,
// the world's ground truth, the pods' starts and crashes and the calls Redis applied, reporting
// every violation to the ledger; and attributes every duplicate SMS to its cause.
//
// The judging is done by one checker per concern, each a sink with its own state:
//
//   MessageChecker  S-dedup, S-quota, S-scope, S-final, S-schedule, S-failover, S-dup, S-retry,
//                   S-lifecycle, and S-marketing through its MarketingRules: per-message state
//                   (sim/sms/message_checker.h)
//   LimitChecker    S-limit: shared limits replayed, per key and per pod (sim/sms/limit_checker.h)
//   AsyncChecker    S-async: per-pod sync-to-async mode (sim/sms/async_checker.h)
//
// The Oracle owns them, attaches them to the buses and forwards the end-of-run checks and the
// counters. It attaches them so that the reports of one event come in one fixed order (see attach).
#pragma once

#include <cstdint>

#include "model/sms/events.h"
#include "model/sms/store.h"
#include "sim/oracle/ledger.h"
#include "sim/sms/async_checker.h"
#include "sim/sms/limit_checker.h"
#include "sim/sms/message_checker.h"
#include "sim/sms/spec.h"
#include "sim/sms/truth.h"
#include "sim/world/kv.h"
#include "sim/world/process.h"

namespace relaysim::sim::sms {

class Oracle {
 public:
  // `seed`: the run's, from which the directory's users are drawn.
  // `judged`: a simulation's events, or a live run's logs (sim/sms/violations.h).
  Oracle(const SmsSpec& spec, std::uint64_t seed, Ledger& ledger, Judged judged = Judged::simulation)
      : async_(spec, ledger, judged), limits_(ledger), messages_(spec, seed, ledger, judged) {}

  // Attaches the checkers to the run's buses, where the oracle's place among their sinks is.
  void attach(relaysim::sms::Events& model, WorldEvents& world, ProcessEvents& processes);
  // Attaches the checker of shared limits to the store's (Redis's) bus.
  void attach(KvBus& kv) { kv.attach(limits_); }
  // Attaches the message checker alone to `recovered`: the bus of the changes a live run's store
  // holds and no log of it tells (a process killed between a commit and its log line). Those are
  // the messages' truth, but no pod's mode or local limit is known to have seen them.
  void attach_recovered(relaysim::sms::Events& recovered) { recovered.attach(messages_); }

  // The end-of-run checks: no pod overdue into or out of async mode, then every message accepted
  // still in the store and the store's quota what the charges less refunds come to.
  void finish(Time end, relaysim::sms::Store& store);

  std::uint64_t duplicates(DuplicateCause c) const { return messages_.duplicates(c); }
  std::uint64_t sent() const { return messages_.sent(); }
  std::uint64_t lost() const { return messages_.lost(); }
  std::uint64_t refunds() const { return messages_.refunds(); }
  // Shared-limit decisions replayed against the definitions (store and local).
  std::uint64_t limit_checks() const { return limits_.checks(); }

 private:
  AsyncChecker async_;
  LimitChecker limits_;
  MessageChecker messages_;
};

}  // namespace relaysim::sim::sms
