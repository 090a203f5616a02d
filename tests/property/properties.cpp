#include "tests/property/properties.h"

#include <rapidcheck.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "model/core/mutants.h"
#include "sim/run.h"
#include "sim/scenario/writer.h"
#include "tests/property/generators.h"

namespace relaysim::props {

using sim::Invariant;
using sim::RunResult;
using sim::Scenario;
using sim::StoreKind;

std::string failure_dir() {
  const char* dir = std::getenv("RELAYSIM_FAILURE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "property-failures";
}

const char* gate_name(Gate g) {
  switch (g) {
    case Gate::breaker_cycle: return "breaker open -> half-open -> closed";
    case Gate::dead_lettered_at_deadline: return "a request dead-lettered at its deadline";
    case Gate::duplicate_from_lost_response: return "an endpoint duplicate explained by a lost response";
    case Gate::crashed_lease_rescued: return "a crashed pod's leased request rescued";
    case Gate::retry_after_honoured: return "a Retry-After honoured";
    case Gate::duplicate_ingest_answered: return "a duplicate ingest answered with the original";
  }
  return "?";
}

std::array<std::uint64_t, kGateCount>& coverage() {
  static std::array<std::uint64_t, kGateCount> counts{};
  return counts;
}

namespace {

// A run must end: a case that is still busy after this many events is a livelock, and fails.
constexpr std::uint64_t kMaxEventsPerCase = 2'000'000;

struct ShrinkBudget {
  int allowed = 400;
  bool failed = false;
  int runs_since = 0;
  std::uint64_t events_since = 0;  // simulated events spent shrinking; heavy cases stop sooner
};
constexpr std::uint64_t kShrinkEvents = 40'000'000;
ShrinkBudget& budget() {
  static ShrinkBudget b;
  return b;
}
// True when this run may still count: before the first failure, or within the shrink budget.
bool within_budget() {
  ShrinkBudget& b = budget();
  return !b.failed || (++b.runs_since <= b.allowed && b.events_since <= kShrinkEvents);
}
std::string failed_with(std::string message) {
  budget().failed = true;
  return message;
}

// Runs one case and counts what it reached for the coverage gates.
RunResult run_case(const Scenario& s, StoreKind store) {
  sim::RunOptions o;
  o.store = store;
  o.max_events = kMaxEventsPerCase;
  RunResult r = sim::run_scenario(s, std::move(o));
  if (budget().failed) budget().events_since += r.events;
  auto& cov = coverage();
  const auto& v = r.values;
  if (r.metrics->breaker_closed > 0 && r.metrics->breaker_opened > 0) {
    ++cov[static_cast<int>(Gate::breaker_cycle)];
  }
  if (v.at("dead_lettered_deadline") > 0) ++cov[static_cast<int>(Gate::dead_lettered_at_deadline)];
  if (v.at("duplicates_lost_response") > 0) ++cov[static_cast<int>(Gate::duplicate_from_lost_response)];
  if (v.at("rescued") > 0 && v.at("crashes") > 0) ++cov[static_cast<int>(Gate::crashed_lease_rescued)];
  if (r.oracle->retry_after_honoured() > 0) ++cov[static_cast<int>(Gate::retry_after_honoured)];
  if (v.at("duplicate_ingests") > 0) ++cov[static_cast<int>(Gate::duplicate_ingest_answered)];
  return r;
}

// Writes the failing case where an engineer can replay it, and returns the path.
std::string write_failure(const std::string& property, const Scenario& s, const RunResult& r, const std::string& what) {
  std::filesystem::create_directories(failure_dir());
  const std::string path = failure_dir() + "/" + property + ".yaml";
  Scenario named = s;
  named.name = property + "-shrunk";
  std::ofstream out(path);
  out << "# A failing case of the property " << property << ", shrunk by RapidCheck.\n";
  out << "# " << what << "\n";
  const Mutant m = active_mutant();
  if (m != Mutant::none) {
    out << "# Found with the planted bug '" << to_string(m) << "'; replay it with:\n";
    out << "#   ./relaysim run --mutant " << to_string(m) << " " << path << "\n";
  } else {
    out << "# Replay it with: ./relaysim run " << path << "\n";
  }
  out << "# fingerprint " << std::hex << r.fingerprint << std::dec << "\n";
  out << sim::write_scenario(named);
  return path;
}

std::string first_violation(const RunResult& r, Invariant i) {
  for (const auto& v : r.oracle->examples()) {
    if (v.invariant == i) {
      return std::string(sim::invariant_id(i)) + " at " + format_time(v.at) +
             (v.request != 0 ? " request " + std::to_string(v.request) : "") + ": " + v.what;
    }
  }
  return std::string(sim::invariant_id(i));
}

// One invariant family on one store.
Property invariant_property(Invariant inv, StoreKind store) {
  const std::string name = std::string(sim::invariant_id(inv)).replace(1, 1, "_") +
                           (store == StoreKind::sqlite ? "_sqlite" : "_memory");
  return {name, std::string(sim::invariant_id(inv)), store == StoreKind::sqlite, [inv, store, name] {
            const Scenario s = *scenarios();
            if (!within_budget()) return;
            const RunResult r = run_case(s, store);
            if (r.oracle->violations(inv) > 0) {
              const std::string what = first_violation(r, inv);
              RC_FAIL(failed_with(what + "\n  shrunk scenario: " + write_failure(name, s, r, what)));
            }
          }};
}

}  // namespace

void reset_shrink_budget(int runs_after_first_failure) { budget() = ShrinkBudget{runs_after_first_failure, false, 0}; }

const std::vector<Property>& all_properties() {
  static const std::vector<Property> list = [] {
    std::vector<Property> v;
    const Invariant order[] = {Invariant::deadline, Invariant::nodup, Invariant::retry, Invariant::breaker,
                               Invariant::url,      Invariant::idem,  Invariant::noloss};
    for (StoreKind store : {StoreKind::memory, StoreKind::sqlite}) {
      for (Invariant inv : order) v.push_back(invariant_property(inv, store));
    }
    v.push_back({"Liveness_memory", "liveness", false, [] {
                   const Scenario s = *scenarios();
                   if (!within_budget()) return;
                   const RunResult r = run_case(s, StoreKind::memory);
                   std::string what;
                   if (r.hit_event_limit) what = "livelock: still busy after " + std::to_string(kMaxEventsPerCase) + " events";
                   else if (r.stalled()) what = "stall: nothing left to do with " + std::to_string(r.unresolved) + " requests open";
                   else if (r.unresolved > 0) what = std::to_string(r.unresolved) + " requests still open after the heal phase";
                   if (!what.empty()) {
                     RC_FAIL(failed_with(what + "\n  shrunk scenario: " + write_failure("Liveness_memory", s, r, what)));
                   }
                 }});
    v.push_back({"Fencing_with_forced_short_lease", "W-nodup (fencing)", false, [] {
                   // With a lease forced too short, duplicate in-flight deliveries are expected
                   // (that is the point of forcing it); a stale claimant's completion must still
                   // never be applied, and nothing may be lost.
                   GenOptions forced;
                   forced.force_short_lease = true;
                   const Scenario s = *scenarios(forced);
                   if (!within_budget()) return;
                   const RunResult r = run_case(s, StoreKind::memory);
                   if (r.oracle->stale_applied() > 0 || r.oracle->violations(Invariant::noloss) > 0) {
                     const std::string what = r.oracle->stale_applied() > 0 ? first_violation(r, Invariant::nodup)
                                                                            : first_violation(r, Invariant::noloss);
                     RC_FAIL(failed_with(what + "\n  shrunk scenario: " +
                                         write_failure("Fencing_with_forced_short_lease", s, r, what)));
                   }
                 }});
    v.push_back({"Stores_agree", "same fingerprint on both stores", true, [] {
                   const Scenario s = *scenarios();
                   RC_ASSERT(run_case(s, StoreKind::memory).fingerprint == run_case(s, StoreKind::sqlite).fingerprint);
                 }});
    v.push_back({"Same_seed_same_run", "determinism", false, [] {
                   const Scenario s = *scenarios();
                   const RunResult a = run_case(s, StoreKind::memory);
                   const RunResult b = run_case(s, StoreKind::memory);
                   RC_ASSERT(a.fingerprint == b.fingerprint);
                   RC_ASSERT(a.values == b.values);
                 }});
    return v;
  }();
  return list;
}

}  // namespace relaysim::props
