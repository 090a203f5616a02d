// Ledger: where every checker of a run reports what it found — one table of the system's
// invariants (id, title), a count of violations per invariant, and the first few of each kept
// whole (when, about what, what happened). Summaries, the JSON and the property tests read it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/time.h"

namespace relaysim::sim {

// What an oracle judges. A `simulation`'s events come in the order they happened: timers fire
// on the dot, and a pod's read of a store and what it decides from it come at one instant, with
// nothing between. A `live` run's come from its processes' logs merged by when each line was
// written: a timer's callback runs a little after its deadline, another process may commit a
// change between a pod's read and the line of what it then did, and a store numbers what it
// holds in the order its transactions took numbers, not the order they committed.
enum class Judged : std::uint8_t { simulation, live };

struct InvariantInfo {
  std::string_view id;     // "W-deadline"
  std::string_view title;  // one line: what it promises
};

struct Violation {
  std::size_t invariant = 0;  // index into the ledger's table
  Time at{};
  std::string subject;  // what it is about, in the user's terms: "request 12 (cx3, r45)"; may be empty
  std::string what;     // what happened, with the bound it broke
};

class Ledger {
 public:
  static constexpr std::size_t kExamplesKept = 20;  // per invariant

  Ledger() = default;
  explicit Ledger(std::span<const InvariantInfo> invariants)
      : invariants_(invariants), counts_(invariants.size(), 0), kept_(invariants.size(), 0) {}

  void violate(std::size_t invariant, Time at, std::string subject, std::string what);

  std::span<const InvariantInfo> invariants() const { return invariants_; }
  std::uint64_t count(std::size_t invariant) const { return counts_.at(invariant); }
  std::uint64_t total() const;
  // The first kExamplesKept of each invariant, in the order they were found.
  const std::vector<Violation>& examples() const { return examples_; }
  // "W-deadline at 2h03m request 12 (cx3, r45): ...", for messages.
  std::string describe(const Violation& v) const;

 private:
  std::span<const InvariantInfo> invariants_;
  std::vector<std::uint64_t> counts_;
  std::vector<std::uint64_t> kept_;
  std::vector<Violation> examples_;
};

}  // namespace relaysim::sim
