// `relaysim judge` for the SMS gateway: a live run judged by the simulator's own SMS oracle
// (sim/sms/oracle.h).
//
// A live run leaves three kinds of record, each written by the one who saw it happen:
//   - each `serve` process's event log (`serve --events`, live/sms/event_log.h): what the gateway
//     did — accepts, claims, shared-limit decisions, submits and their outcomes, completions,
//     changes of the sync-to-async mode, receipts;
//   - the world's submit log (`world --receipts`): what reached each provider — when, which
//     message and attempt, and the fate the provider drew (sent and answered, sent with the answer
//     lost or late, throttled, refused, swallowed);
//   - the clients' calls (`--calls`, one JSON line per send answered, docs/live.md): which request,
//     with what kind of token (good, or forged, expired or foreign to its scope, on purpose),
//     whether it repeated an earlier one, and what it was answered.
// The judge merges them into the stream of events a simulated run gives the oracle, on the run's
// clock (every time minus the run's epoch: the latest whole day before the world started that is
// also a whole number of every width the gateway buckets time by, live/sms/directory.h, so that
// quiet hours and the replayed limits and windows fall as the gateway's did), and hands the
// oracle the store at the end.
// The policies are the serve configuration's (what the gateway ran with); the businesses are the
// store's (applied for while it ran), each with the configuration's business policy; the
// providers are the configuration's, by name, and their ids its order.
//
// Each log is kept in the order it was written; between logs, records go by when each line was
// written (`logged`, after the change it tells of committed: an event's own time is read before
// the database's lock is taken, and another process may commit in between), world submits and
// client answers by their own times. The checkers see each event's own time. So the merge follows
// the database's order of commits, except where a process was paused between a commit and its
// line: the message checker takes ids out of order, and a record about a message whose accept
// another log wrote later (the accepting process paused after its commit, and another claimed
// the message meanwhile) first brings that log up to the accept.
// A process that logged `started` again without `stopped` (or whose log ends without it) was
// killed: it crashed just after the last event it logged. What it committed and died before
// logging — an accept, a claim, a completion, a receipt, a place in a frequency cap — the judge
// takes from the store: each message's row holds its status history (every change with its time
// and pod), the cap's table every place with its time, and a change no logged record matches (by
// message, time and status) joins the stream at its time, seen by the message checker alone (no
// pod's mode or local limit is known to have seen it).
//
// What no record of this run tells, the judge does not judge: the shared limits' decisions made
// by Redis (their replay needs Redis's own clock and order; the twin check of the limiter, in
// tests/live/redis_limiter_test.cpp, shows the scripts decide as the simulated store does) — the
// decisions a process took on its own share while Redis was down are judged; and which accepts
// a claim saw when it read its message again before a submit (no line tells of the read: an
// accept is held against the submit when it was recorded before the claim, or before the claim's
// last shared-limit decision, whose line comes just before the read; sim/sms/message_checker.h). Inputs that do not
// fit together (another scenario's or seed's world log, a webhook run's, a world run with another
// serve file, two logs of one pod, a submit naming a provider the gateway does not have, a log
// accepting under an id a key the database holds another under, a store change no log tells of
// that no killed process can explain — outside every killed life's last moments, or by a pod
// whose log is missing) are refused, not judged; so are records no real run could have written
// (LogChecker). A message a log accepted that the database does not hold is lost: S-final.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/oracle/ledger.h"

namespace relaysim::live::sms {

struct JudgeInputs {
  std::string scenario;             // the world's scenario file
  std::string config;               // the serve configuration file
  std::vector<std::string> events;  // the serve processes' event logs
  std::string receipts;             // the world's submit log
  std::string calls;                // the clients' calls; empty: not judged
  std::string database;             // the store the processes shared, after the run
};

struct Judgement {
  sim::Ledger ledger;
  std::uint64_t accepted = 0;          // messages the gateway accepted
  std::uint64_t submits = 0;           // submits the gateway started
  std::uint64_t provider_submits = 0;  // submits that reached a provider
  std::uint64_t sent = 0;              // SMS the providers sent
  std::uint64_t receipts = 0;          // receipts the gateway applied
  std::uint64_t calls = 0;             // client calls answered
  std::uint64_t mode_changes = 0;
  std::uint64_t crashes = 0;
  std::uint64_t recovered = 0;         // store changes a killed process committed and never logged
  std::uint64_t limit_checks = 0;      // decisions on a process's own share, replayed
  std::uint64_t limit_by_store = 0;    // decisions Redis made (not judged here)
  std::vector<std::pair<std::string, std::uint64_t>> duplicates;  // second SMS, by cause
  // Invariants no record of the run lets the judge check at all, by id, with why.
  std::vector<std::pair<std::string, std::string>> not_judged;
};

// Throws std::invalid_argument naming the file and line of anything it cannot read, and
// sim::ScenarioError for a bad scenario or configuration.
Judgement judge(const JudgeInputs& in);

}  // namespace relaysim::live::sms
