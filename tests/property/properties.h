// The property suite, as data: the gtest binary and the mutants runner run the same list.
//
// Each property generates scenarios (generators.h), runs them through the real webhook model in
// the simulator and checks one family of invariants. When a case fails, the case is written as a
// scenario file (the last one written is the shrunk, minimal case) and its path is part of the
// failure message, so `relaysim run FILE` replays it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace relaysim::props {

struct Property {
  std::string name;        // e.g. "W_deadline_memory"
  std::string invariant;   // what it checks, e.g. "W-deadline"
  bool sqlite = false;     // runs on the SQLite store (slower: fewer cases by default)
  std::function<void()> body;
};

const std::vector<Property>& all_properties();

// Shrinking re-runs a failing property hundreds of times; past a budget of runs (or of simulated
// events) after the first failure, later candidates are let pass, so shrinking stops with the
// smallest failing case so far (already written to its file). Call before each property check.
void reset_shrink_budget(int runs_after_first_failure = 400);

// Where shrunk failures are written (RELAYSIM_FAILURE_DIR, default "property-failures").
std::string failure_dir();

// What must happen at least once across a whole property run, or the suite checks too little.
enum class Gate : std::uint8_t {
  breaker_cycle,          // open -> half_open -> closed
  dead_lettered_at_deadline,
  duplicate_from_lost_response,
  crashed_lease_rescued,
  retry_after_honoured,
  duplicate_ingest_answered,
};
inline constexpr int kGateCount = 6;
const char* gate_name(Gate g);
std::array<std::uint64_t, kGateCount>& coverage();

}  // namespace relaysim::props
