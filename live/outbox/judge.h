// `relaysim judge` for the outbox relay: a live run judged by the simulator's own outbox oracle
// (sim/outbox/oracle.h), every O-* invariant.
//
// A live run leaves two kinds of record, each written by the one who saw it happen:
//   - each `serve` process's event log (`serve --events`, live/outbox/event_log.h): what its relay
//     did — business operations, leaderships, every leader write (fence, scan, mark, rescue) with
//     the rows it changed and whether the fence let it in, publishes, re-locks, handlings and
//     finishes, consumer positions and commits — and what Redis's script and etcd answered it:
//     each record written or taken for a repeat, each commit taken or refused, each lease granted;
//   - the world's receipts (`world --receipts`): each effect the downstream's inbox applied.
// And the shards' PostgreSQL databases (the serve file's `serve.shards`), read after the run for
// the end-of-run checks: nothing lost, nothing stuck.
//
// The judge merges them into the stream of events a simulated run gives the oracle, on the run's
// clock (Unix time less the world's start). The policies are the serve configuration's (the
// relay's platform, the log's partitions, sessions and poll interval); the faults, the
// downstream's and the slack for stuck messages are the scenario's.
//
// Each log is kept in the order it was written; between logs, records go by when each line was
// written (`logged`, after the change it tells of committed), the world's effects by their own
// times. Lines are written a little after their commits, so a process may commit a change and be
// overtaken by another process's line about what came of it. Before a record, the judge therefore
// first brings up to date the other logs that tell of what it depends on, wherever the database's
// order says it came first:
//   - the operation that committed each message the record names;
//   - the message's previous change of state: a re-lock, a finish or an effect of attempt N
//     comes after the write that made it processing under N, and so does a rescue of it; a mark
//     or a scan after the finish or rescue that ended the attempt before;
//   - with per-key ordering, a scan or an effect comes after the finish of every earlier message
//     of its entity;
//   - a leader write under a larger fencing token comes after every write under a smaller one
//     that began before it was logged (the shard's fence orders them; one that began after is
//     held against the fence: O-fence).
// Only a change that began before the record was written (within the pods' clock skew) is brought
// up first: one that began after cannot have come first, and the oracle judges the record without
// it. A re-lock is judged by the row it read (processing under the record's attempt), since its
// line may come after another process's later change of the message.
//
// A process that logged `started` again without `stopped` (or whose log ends without it) was
// killed, and may have committed a change after its last line; so may a call to a shard's
// database that failed without an answer (`store_failed`, io or other: PostgreSQL may have
// committed it and restarted before answering). What the logs then lack, the judge takes from
// the killed life (or failed call) that could have made it (the latest before the record that
// needs it; for a change to processing, one that led the shard, or stepped down from it in the
// middle of a cycle, whose mark it still commits): a message the shards hold that no log tells
// of joins the replay at its row's time (none killed then: a log was left out, and the run is
// refused); a change of state a record needs and no log tells of is taken as the store would have
// it at the life's end; and a message the shards hold in a later state than the logs brought it to
// takes that state (none killed then: refused). Each is judged only as a move of its lifecycle (MessageChecker::recovered).
// Then each row is held to what the logs made of its message (MessageChecker::held).
// Inputs that do not fit together (another scenario's or seed's receipts, a webhook or SMS run's,
// two logs of one pod, a record of a shard, partition or pod the relay does not have, ids far past
// any the shards hold, offsets past the records the logs' publishes carried, a message no log and no
// kill explains) are refused, not judged; so are records no real run could have written
// (LogChecker).

#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "live/outbox/config.h"
#include "model/outbox/store.h"
#include "sim/oracle/ledger.h"
#include "sim/scenario/scenario.h"

namespace relaysim::live::outbox {

struct JudgeInputs {
  std::string scenario;             // the world's scenario file
  std::string config;               // the serve configuration file
  std::vector<std::string> events;  // the serve processes' event logs
  std::string receipts;             // the world's receipts
};

struct Judgement {
  sim::Ledger ledger;
  std::uint32_t processes = 0;       // event logs
  std::uint64_t committed = 0;       // business operations committed (and their messages)
  std::uint64_t messages = 0;
  std::uint64_t rolled_back = 0;     // business operations rolled back
  std::uint64_t leader_writes = 0;   // that took effect
  std::uint64_t fenced_out = 0;      // leader writes the fence kept out
  std::uint64_t appended = 0;        // records the log wrote (as its answers told)
  std::uint64_t effects = 0;         // effects the downstream applied
  std::uint64_t pulled = 0;          // records replayed before lines logged earlier (see above)
  std::uint64_t crashes = 0;         // lives that ended killed
  std::uint64_t recovered = 0;       // changes a killed process committed and never logged
  std::vector<std::pair<std::string, std::uint64_t>> duplicates;  // second records, by cause
};

// Throws std::invalid_argument naming the file and line of anything it cannot read,
// sim::ScenarioError for a bad scenario or configuration, and StoreError when a shard's database
// cannot be read.
Judgement judge(const JudgeInputs& in);

// The two halves of judge(), apart so that the logs' and receipts' reading and their replay can
// be driven over stores that are not PostgreSQL (the fuzz target's memory stores).
//
// The scenario file as the run played it: its outbox system, with the relay and the log `config`
// ran. Throws std::invalid_argument if its system is not outbox.
sim::Scenario scenario_as_run(const std::string& scenario_path, const OutboxServeConfig& config);

// The shards as the run left them, one per platform shard: its store, for the end-of-run checks,
// and its rows, in id order, with their times as stored (Unix).
struct ShardsAtEnd {
  std::vector<relaysim::outbox::Store*> stores;
  std::vector<std::vector<relaysim::outbox::Message>> rows;
};

// Reads the logs and receipts and replays them over the shards `open_shards` gives, as judge()
// does once it has read the files it names. The shards are opened once the logs and receipts are
// read: what no run wrote is refused before a database is asked.
Judgement judge(const sim::Scenario& scenario, const OutboxServeConfig& config, const std::vector<std::string>& events,
                const std::string& receipts, const std::function<ShardsAtEnd()>& open_shards);

}  // namespace relaysim::live::outbox
