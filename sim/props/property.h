// Property suites, as data: the gtest binary (tests/property/) and the mutants runner
// (`relaysim mutants`) run the same lists. Each system has one suite (sim/props/suites.cpp lists
// them): properties that generate scenarios, run them through the real model in the simulator and
// check one family of invariants each, plus coverage gates — things some case of a whole run must
// reach, or the suite checks less than it claims.
//
// When a case fails, it is written as a scenario file (the last one written is the shrunk,
// minimal case) and its path is part of the failure message, so `relaysim run FILE` replays it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/oracle/ledger.h"
#include "sim/run.h"
#include "sim/scenario/scenario.h"

namespace relaysim::props {

struct Property {
  std::string name;       // e.g. "W_deadline_memory"
  std::string invariant;  // what it checks: an invariant id ("W-deadline"), or a word ("liveness")
  bool sqlite = false;    // runs on the SQLite store (slower: fewer cases by default)
  std::function<void()> body;
};

// Something a whole property run must reach at least once.
struct Gate {
  std::string_view name;
  std::uint64_t (*reached)();  // how many cases of this process's run reached it
};

// A suite's coverage counts, one per gate, kept for the whole process: `Tag` keeps each suite's
// apart. A case's run bumps `counts()[gate]`; `reached<gate>` is what the suite's Gate reads.
template <class Tag, std::size_t N>
struct GateCounts {
  static std::array<std::uint64_t, N>& counts() {
    static std::array<std::uint64_t, N> c{};
    return c;
  }
  template <std::size_t I>
  static std::uint64_t reached() {
    return counts()[I];
  }
};

struct Suite {
  std::string_view system;  // the System::name() it tests
  const std::vector<Property>& (*properties)();
  std::span<const Gate> (*gates)();
};

// How a system's suite draws and runs a case: the properties every system has are built from it.
struct Cases {
  std::function<sim::Scenario()> generate;  // draws a case (called inside a property)
  // Runs a case on a store, counting what it reached for the coverage gates and spending the
  // shrink budget.
  std::function<sim::RunResult(const sim::Scenario&, sim::StoreKind)> run;
  std::uint64_t max_events = 0;  // the event limit `run` sets: past it a case is a livelock
  std::string_view open_work;    // what the system's open work is called ("requests", "messages")
};

// One invariant family on one store: named after the invariant id ("S-dedup" → S_dedup_memory).
Property invariant_property(const Cases& c, std::string_view id, std::size_t index, sim::StoreKind store);
// After the heal phase nothing is left open, and the run neither stalled nor livelocked.
Property liveness_property(const Cases& c);
// Both stores give the same run; `prepare` may first take out what differs by design.
Property stores_agree_property(const Cases& c, std::function<void(sim::Scenario&)> prepare = {});
// A case written as a scenario file reads back the same, and is written the same way again;
// `same_spec` compares the system's sections.
Property round_trip_property(const Cases& c, std::function<bool(const sim::Scenario&, const sim::Scenario&)> same_spec);
// The same scenario gives the same run twice: fingerprint, events and every metric.
Property same_seed_property(const Cases& c);

// Runs a case on a store with an event limit, counting its events against the shrink budget:
// the start of every system's `Cases::run`.
sim::RunResult run_counted(const sim::Scenario& s, sim::StoreKind store, std::uint64_t max_events);

// A system's usual list: one property per invariant family (in `invariants`' order) on each store,
// then liveness, both stores agreeing (after `prepare`), the round trip and the same seed.
std::vector<Property> standard_properties(const Cases& c, std::span<const sim::InvariantInfo> invariants,
                                          std::function<bool(const sim::Scenario&, const sim::Scenario&)> same_spec,
                                          std::function<void(sim::Scenario&)> prepare = {});

// Every system's suite (sim/props/suites.cpp).
std::span<const Suite> suites();

// Shrinking re-runs a failing property hundreds of times; past a budget of runs (or of simulated
// events) after the first failure, later candidates are let pass, so shrinking stops with the
// smallest failing case so far (already written to its file). Call before each property check.
void reset_shrink_budget(int runs_after_first_failure = 400);
// True while a generated case may still count: before the first failure, or within the budget.
bool within_budget();
// Counts a case's events against the shrink budget.
void spent(std::uint64_t events);
// Marks the first failure (starting the shrink budget) and returns `message`.
std::string failed_with(std::string message);

// Where shrunk failures are written (RELAYSIM_FAILURE_DIR, default "property-failures").
std::string failure_dir();
// Writes a failing case where an engineer can replay it, and returns the path.
std::string write_failure(const std::string& property, const sim::Scenario& s, const sim::RunResult& r,
                          const std::string& what);
// The first violation of the invariant `id` in the run's ledger, as a line; or the id alone.
std::string first_violation(const sim::RunResult& r, std::string_view id);

}  // namespace relaysim::props
