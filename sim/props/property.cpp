#include "sim/props/property.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <rapidcheck.h>

#include "model/core/mutants.h"
#include "sim/loader.h"
#include "sim/writer.h"

namespace relaysim::props {

namespace {
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
}  // namespace

void reset_shrink_budget(int runs_after_first_failure) { budget() = ShrinkBudget{runs_after_first_failure, false, 0, 0}; }

bool within_budget() {
  ShrinkBudget& b = budget();
  return !b.failed || (++b.runs_since <= b.allowed && b.events_since <= kShrinkEvents);
}

void spent(std::uint64_t events) {
  if (budget().failed) budget().events_since += events;
}

std::string failed_with(std::string message) {
  budget().failed = true;
  return message;
}

std::string failure_dir() {
  const char* dir = std::getenv("RELAYSIM_FAILURE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "property-failures";
}

std::string write_failure(const std::string& property, const sim::Scenario& s, const sim::RunResult& r,
                          const std::string& what) {
  std::filesystem::create_directories(failure_dir());
  const std::string path = failure_dir() + "/" + property + ".yaml";
  sim::Scenario named = s;
  named.name = property + "-shrunk";
  std::ofstream out(path);
  out << "# A failing case of the property " << property << ", shrunk by RapidCheck.\n";
  out << "# " << what << "\n";
  if (const Mutant* m = active_mutant()) {
    out << "# Found with the planted bug '" << m->name << "'; replay it with:\n";
    out << "#   ./relaysim run --mutant " << m->name << " " << path << "\n";
  } else {
    out << "# Replay it with: ./relaysim run " << path << "\n";
  }
  out << "# fingerprint " << std::hex << r.fingerprint << std::dec << "\n";
  out << sim::write_scenario(named);
  return path;
}

std::string first_violation(const sim::RunResult& r, std::string_view id) {
  for (const auto& v : r.ledger.examples()) {
    if (r.ledger.invariants()[v.invariant].id == id) return r.ledger.describe(v);
  }
  return std::string(id);
}

Property invariant_property(const Cases& c, std::string_view id, std::size_t index, sim::StoreKind store) {
  const std::string name =
      std::string(id).replace(1, 1, "_") + (store == sim::StoreKind::sqlite ? "_sqlite" : "_memory");
  return {name, std::string(id), store == sim::StoreKind::sqlite, [c, id, index, store, name] {
            const sim::Scenario s = c.generate();
            if (!within_budget()) return;
            const sim::RunResult r = c.run(s, store);
            if (r.ledger.count(index) > 0) {
              const std::string what = first_violation(r, id);
              RC_FAIL(failed_with(what + "\n  shrunk scenario: " + write_failure(name, s, r, what)));
            }
          }};
}

Property liveness_property(const Cases& c) {
  return {"Liveness_memory", "liveness", false, [c] {
            const sim::Scenario s = c.generate();
            if (!within_budget()) return;
            const sim::RunResult r = c.run(s, sim::StoreKind::memory);
            const std::string open = std::to_string(r.open_work()) + " " + std::string(c.open_work);
            std::string what;
            if (r.hit_event_limit()) what = "livelock: still busy after " + std::to_string(c.max_events) + " events";
            else if (r.stalled()) what = "stall: nothing left to do with " + open + " open";
            else if (r.open_work() > 0) what = open + " still open after the heal phase";
            if (!what.empty()) {
              RC_FAIL(failed_with(what + "\n  shrunk scenario: " + write_failure("Liveness_memory", s, r, what)));
            }
          }};
}

Property stores_agree_property(const Cases& c, std::function<void(sim::Scenario&)> prepare) {
  return {"Stores_agree", "same fingerprint on both stores", true, [c, prepare] {
            sim::Scenario s = c.generate();
            if (prepare) prepare(s);
            RC_ASSERT(c.run(s, sim::StoreKind::memory).fingerprint == c.run(s, sim::StoreKind::sqlite).fingerprint);
          }};
}

Property round_trip_property(const Cases& c, std::function<bool(const sim::Scenario&, const sim::Scenario&)> same_spec) {
  return {"Scenario_files_round_trip", "a case written as a file reads back the same", false, [c, same_spec] {
            // Every failing case is written as a scenario file to replay: it must read back to
            // the same scenario, and be written the same way again.
            const sim::Scenario s = c.generate();
            const std::string text = sim::write_scenario(s);
            const sim::Scenario again = sim::parse_scenario(text, "round-trip.yaml");
            RC_LOG() << text << "\nread back and written again:\n" << sim::write_scenario(again);
            RC_ASSERT(same_spec(again, s));
            RC_ASSERT(again.crashes == s.crashes);
            RC_ASSERT(again.pauses == s.pauses);
            RC_ASSERT(again.duration == s.duration);
            RC_ASSERT(sim::write_scenario(again) == text);
          }};
}

Property same_seed_property(const Cases& c) {
  return {"Same_seed_same_run", "determinism", false, [c] {
            const sim::Scenario s = c.generate();
            const sim::RunResult a = c.run(s, sim::StoreKind::memory);
            const sim::RunResult b = c.run(s, sim::StoreKind::memory);
            RC_ASSERT(a.fingerprint == b.fingerprint);
            RC_ASSERT(a.events == b.events);
            for (std::size_t i = 0; i < a.values.size(); ++i) {
              RC_ASSERT(a.values[i] == b.values[i] || (a.values[i] != a.values[i] && b.values[i] != b.values[i]));
            }
          }};
}

sim::RunResult run_counted(const sim::Scenario& s, sim::StoreKind store, std::uint64_t max_events) {
  sim::RunOptions o;
  o.store = store;
  o.max_events = max_events;
  sim::RunResult r = sim::run_scenario(s, std::move(o));
  spent(r.events);
  return r;
}

std::vector<Property> standard_properties(const Cases& c, std::span<const sim::InvariantInfo> invariants,
                                          std::function<bool(const sim::Scenario&, const sim::Scenario&)> same_spec,
                                          std::function<void(sim::Scenario&)> prepare) {
  std::vector<Property> v;
  for (sim::StoreKind store : {sim::StoreKind::memory, sim::StoreKind::sqlite}) {
    for (std::size_t i = 0; i < invariants.size(); ++i) v.push_back(invariant_property(c, invariants[i].id, i, store));
  }
  v.push_back(liveness_property(c));
  v.push_back(stores_agree_property(c, std::move(prepare)));
  v.push_back(round_trip_property(c, std::move(same_spec)));
  v.push_back(same_seed_property(c));
  return v;
}

}  // namespace relaysim::props
