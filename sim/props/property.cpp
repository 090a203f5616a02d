#include "sim/props/property.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "model/core/mutants.h"
#include "sim/scenario/writer.h"

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

}  // namespace relaysim::props
