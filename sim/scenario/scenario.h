// Scenario: everything one simulated run needs. The top level is the same for every system —
// name, seed, duration, which system, which store, the faults every system can suffer, what the
// run is expected to show, the oracle's options — and one section belongs to the system under
// test (`webhook:`), read and written by that system (sim/system.h). Loaded from YAML by
// load_scenario(); docs/scenario-format.md has every key.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/core/assert.h"
#include "model/core/names.h"
#include "model/core/time.h"
#include "model/store/store_error.h"

namespace relaysim::sim {

inline constexpr Duration kForever{INT64_MAX / 4};

// A window of virtual time: [at, at + length). length == kForever: never ends.
struct Window {
  Time at{};
  Duration length = kForever;
  bool contains(Time t) const { return t >= at && t - at < length; }
  Time end() const { return length >= kForever ? kTimeNever : at + length; }
  bool operator==(const Window&) const = default;
};

enum class StoreKind : std::uint8_t { memory, sqlite };
inline constexpr auto kStoreKindNames = names<StoreKind>({
    {StoreKind::memory, "memory"}, {StoreKind::sqlite, "sqlite"}});
constexpr std::string_view to_string(StoreKind k) { return kStoreKindNames[k]; }

// A pod crash: at `at`, process `pod` (0-based) loses everything in memory; it starts again after
// `restart_after` (kForever: never). With `during_write`, it dies instead in the middle of its
// first store write at or after `at`: the write's transaction must roll back.
struct CrashFault {
  Time at{};
  std::uint32_t pod = 0;
  Duration restart_after = kForever;
  bool during_write = false;
  bool operator==(const CrashFault&) const = default;
};

// A pod stopping without dying — a long garbage-collection pause, a frozen VM: from `at`, for
// `length`, nothing it scheduled runs and no answer reaches it; then it resumes where it was,
// with whatever it believed before (a lease it no longer holds, say).
struct PauseFault {
  Time at{};
  std::uint32_t pod = 0;
  Duration length{};
  bool operator==(const PauseFault&) const = default;
};

// The store failing for a while: every call fails as busy or with an I/O error, or (full) every
// write fails for lack of space while reads work.
struct StoreFault {
  Window window;
  StoreFailure failure = StoreFailure::busy;
  bool operator==(const StoreFault&) const = default;
};

enum class CompareOp : std::uint8_t { lt, le, gt, ge, eq, ne };
inline constexpr auto kCompareOpNames = names<CompareOp>({
    {CompareOp::lt, "<"}, {CompareOp::le, "<="}, {CompareOp::gt, ">"}, {CompareOp::ge, ">="}, {CompareOp::eq, "=="},
    {CompareOp::ne, "!="}});
constexpr std::string_view to_string(CompareOp op) { return kCompareOpNames[op]; }

// One line of `expect:`: a comparison on one of the system's metrics (sim/report/metric.h).
struct Expectation {
  std::size_t metric = 0;  // index into the system's metric table
  double parameter = 0;    // for a metric family (latency_p99.9_s: 99.9), else 0
  // For a group's figure (latency_p99_s[slow]): the group's index among the system's groups,
  // and `metric` indexes the group metrics (sim/report/groups.h); else none.
  std::size_t group = static_cast<std::size_t>(-1);
  std::string name;        // the metric's name as written
  CompareOp op = CompareOp::eq;
  double value = 0.0;      // in the metric's unit (a ratio as 0..1, seconds as seconds)
  std::string text;        // the comparison as written, after the name: "< 0.1%"
  bool operator==(const Expectation&) const = default;
};

// Options of the oracle (the invariant checkers) every system's checkers share.
struct OracleOptions {
  Duration terminal_slack{-1};  // extra time allowed past a deadline before "not finished" is a violation; <0: the system's own
  bool operator==(const OracleOptions&) const = default;
};

class System;

// A system's section of a scenario, read and validated by the system.
class SystemSpec {
 public:
  virtual ~SystemSpec() = default;
  virtual std::unique_ptr<SystemSpec> clone() const = 0;
  // How many processes (pods) the system runs: crash faults name pod-0 .. pod-(n-1).
  virtual std::uint32_t processes() const = 0;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  Duration duration = std::chrono::hours(1);
  // The start of the run that measurements leave out (the ramp from an empty system): metrics,
  // groups and `expect:` count from here; invariants are checked over the whole run.
  Duration warmup{};
  const System* system = nullptr;
  StoreKind store = StoreKind::memory;
  std::vector<CrashFault> crashes;
  std::vector<PauseFault> pauses;
  std::vector<StoreFault> store_faults;
  std::vector<Expectation> expect;
  OracleOptions oracle;

  Scenario() = default;
  Scenario(const Scenario& o) { *this = o; }
  Scenario& operator=(const Scenario& o);
  Scenario(Scenario&&) noexcept = default;
  Scenario& operator=(Scenario&&) noexcept = default;

  // The system's section. A Scenario without one is not runnable.
  const SystemSpec& spec() const {
    RELAYSIM_ASSERT(spec_ != nullptr, "a scenario needs its system's section");
    return *spec_;
  }
  SystemSpec& spec() {
    RELAYSIM_ASSERT(spec_ != nullptr, "a scenario needs its system's section");
    return *spec_;
  }
  void set_spec(std::unique_ptr<SystemSpec> s) { spec_ = std::move(s); }
  bool has_spec() const { return spec_ != nullptr; }

 private:
  std::unique_ptr<SystemSpec> spec_;
};

}  // namespace relaysim::sim
