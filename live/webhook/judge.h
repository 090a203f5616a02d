// `relaysim judge`: a live run judged by the simulator's own oracle (sim/webhook/oracle.h).
//
// A live run leaves three kinds of record, each written by the one who saw it happen:
//   - each `serve` process's event log (`serve --events`, live/webhook/event_log.h): what the
//     platform did — creates, claims, attempts, completions, lookups, breaker changes;
//   - the world's receipts (`world --receipts`): what reached each endpoint — when, with which
//     webhook-id, payload and URL, what it answered and whether the answer was lost on purpose;
//   - the client's calls (one JSON line per create call, see docs/live.md): which key it sent, with
//     which payload, and what it was answered.
// The judge merges them into one stream of the events the simulator's checkers take — a receipt
// becomes the HttpSent of the attempt that carried it, a logged lookup a ServiceBCalled, a client
// call a ClientCalling/ClientCreated — on the world's clock (every time minus the world's start)
// and with the simulator's URLs (http://127.0.0.1:P/ep3/hooks/cx7/v2 is http://ep3.sim/hooks/cx7/v2),
// then hands the stream to RequestChecker and BreakerChecker and the store's final counts to their
// end-of-run checks. The policies come from the serve configuration (what the platform ran with),
// ServiceB's outages and URLs from the world's scenario.
//
// A process that logged `started` again without `stopped` (or whose log ends without it) was
// killed: it is taken to have crashed just after the last event it logged. What it committed and
// died before logging — a create, a terminal completion — the judge takes from the store. Inputs
// that do not fit together (another scenario's receipts, a second world, events before the
// world's start, two logs of one pod, payloads that name no key) are refused, not judged; so are
// records no real run could have written (LogChecker, live/webhook/event_log.h: a claim token or a
// create given twice, an attempt under no claim, a completion of a claim not held; a receipt or a
// client call given twice).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "sim/oracle/ledger.h"
#include "sim/report/backlog.h"
#include "sim/webhook/metrics.h"

namespace relaysim::live::webhook {

struct JudgeInputs {
  std::string scenario;             // the world's scenario file
  std::string config;               // the serve configuration file
  std::vector<std::string> events;  // the serve processes' event logs
  std::string receipts;             // the world's receipts
  std::string calls;                // the client's calls
  std::string database;             // the store the processes shared, after the run
};

struct Judgement {
  sim::Ledger ledger;
  std::uint64_t acknowledged = 0;  // requests the platform created
  std::uint64_t attempts = 0;
  std::uint64_t receipts = 0;
  std::uint64_t lookups = 0;
  std::uint64_t calls = 0;
  std::uint64_t crashes = 0;
  std::uint64_t breaker_changes = 0;
  std::uint64_t recovered = 0;  // creates and completions a killed process committed but never logged
  std::vector<std::pair<std::string, std::uint64_t>> duplicates;  // by cause
  std::uint64_t retry_after_honoured = 0;
  std::string terminal_bound;
  // The run's figures, counted from the same stream by the simulator's own metrics: every metric
  // of `relaysim metrics` but utilisation (no log says how busy the slots were).
  sim::webhook::Figures figures;
  // The backlog's drain after each fault episode (ServiceB's outages, endpoints down or in an
  // incident), read from the run's backlog as a simulated run's is.
  std::vector<sim::Drain> drains;
};

// Throws std::invalid_argument naming the file and line of anything it cannot read, and
// sim::ScenarioError for a bad scenario or configuration.
Judgement judge(const JudgeInputs& in);

}  // namespace relaysim::live::webhook
