#include "cli/mutants.h"

#include <rapidcheck.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "model/core/assert.h"
#include "model/core/mutants.h"
#include "sim/props/property.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "sim/system.h"

namespace relaysim::cli {

namespace {

struct Outcome {
  const Mutant* mutant = nullptr;
  bool caught = false;
  std::string property;   // which property caught it
  std::string invariant;  // what that property checks
  int cases = 0;          // cases run until the first failure
  std::string scenario;   // the shrunk scenario file
  int scenario_lines = 0;
  bool replays = false;   // `relaysim run --mutant` on the file shows the same invariant
  std::string detail;
};

int count_lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') ++n;
  }
  return n;
}

// Runs in a child process: the mutant is planted for the whole process.
Outcome hunt(const Mutant* m, const props::Suite& suite, const MutantsOptions& o) {
  RELAYSIM_ASSERT(m != nullptr, "a mutant to plant");
  mutants::active() = m;
  Outcome out;
  out.mutant = m;
  const std::string dir = o.scenarios_dir + "/" + std::string(m->name);
  std::filesystem::remove_all(dir);
  ::setenv("RELAYSIM_FAILURE_DIR", dir.c_str(), 1);
  for (const props::Property& p : suite.properties()) {
    rc::detail::TestParams params;
    params.seed = o.seed;
    params.maxSuccess = p.sqlite ? std::max(1, o.cases / 4) : o.cases;
    rc::detail::TestMetadata meta;
    meta.id = p.name;
    meta.description = p.name;
    props::reset_shrink_budget();
    const rc::detail::TestResult r = rc::detail::checkTestable(p.body, meta, params);
    rc::detail::FailureResult failure;
    if (!r.match(failure)) continue;
    out.caught = true;
    out.property = p.name;
    out.invariant = p.invariant;
    out.cases = failure.numSuccess + 1;
    out.detail = failure.description.substr(0, failure.description.find('\n'));
    const std::string path = dir + "/" + p.name + ".yaml";
    if (std::filesystem::exists(path)) {
      out.scenario = path;
      out.scenario_lines = count_lines(path);
      // Replay the file exactly as an engineer would, and look for the same invariant.
      const sim::RunResult replay = sim::run_scenario(sim::load_scenario(path));
      for (const auto& v : replay.ledger.examples()) {
        if (p.invariant.rfind(std::string(replay.ledger.invariants()[v.invariant].id), 0) == 0) out.replays = true;
      }
      if (p.invariant == "liveness") out.replays = replay.open_work() > 0 || replay.hit_event_limit();
    }
    return out;
  }
  return out;
}

std::string encode(const Outcome& o) {
  std::ostringstream s;
  s << o.caught << '\t' << o.property << '\t' << o.invariant << '\t' << o.cases << '\t' << o.scenario << '\t'
    << o.scenario_lines << '\t' << o.replays << '\t' << o.detail;
  return s.str();
}

Outcome decode(const Mutant* m, const std::string& line) {
  RELAYSIM_ASSERT(m != nullptr, "the outcome of a mutant");
  Outcome o;
  o.mutant = m;
  std::istringstream s(line);
  std::string field;
  std::vector<std::string> f;
  while (std::getline(s, field, '\t')) f.push_back(field);
  if (f.size() < 7) return o;
  o.caught = f[0] == "1";
  o.property = f[1];
  o.invariant = f[2];
  o.cases = std::atoi(f[3].c_str());
  o.scenario = f[4];
  o.scenario_lines = std::atoi(f[5].c_str());
  o.replays = f[6] == "1";
  if (f.size() > 7) o.detail = f[7];
  return o;
}

Outcome hunt_in_child(const Mutant* m, const props::Suite& suite, const MutantsOptions& options) {
  int fds[2];
  if (::pipe(fds) != 0) {
    std::perror("relaysim: pipe");
    std::exit(2);
  }
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const std::string line = encode(hunt(m, suite, options)) + "\n";
    if (::write(fds[1], line.data(), line.size()) < 0) std::_Exit(3);
    std::_Exit(0);
  }
  ::close(fds[1]);
  std::string line;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) line.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status) || line.empty()) {
    Outcome o;
    o.mutant = m;
    o.caught = true;
    o.property = "(assertion)";
    o.invariant = "a model assertion";
    o.detail = "the process stopped on a failed assertion (signal " +
               std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0) + ")";
    return o;
  }
  if (!line.empty() && line.back() == '\n') line.pop_back();
  return decode(m, line);
}

}  // namespace

int run_mutants(const MutantsOptions& options) {
  // Every system's mutants, each hunted by its own system's property suite.
  std::vector<std::pair<const Mutant*, const props::Suite*>> targets;
  std::string names;
  for (const props::Suite& suite : props::suites()) {
    const sim::System* system = sim::find_system(suite.system);
    if (system == nullptr) continue;
    for (const Mutant* m : system->mutants()) {
      names += " " + std::string(m->name);
      if (!options.only || *options.only == m->name) targets.emplace_back(m, &suite);
    }
  }
  if (targets.empty()) {
    std::cerr << "relaysim: no mutant named '" << *options.only << "'; the mutants are:" << names << "\n";
    return 2;
  }
  std::vector<Outcome> outcomes;
  for (const auto& [m, suite] : targets) {
    std::cout << "  " << m->name << " ... " << std::flush;
    const Outcome o = hunt_in_child(m, *suite, options);
    std::cout << (o.caught ? "caught by " + o.property + " after " + std::to_string(o.cases) + " cases" : "SURVIVED")
              << (o.caught && !o.scenario.empty() ? (o.replays ? ", replays" : ", DOES NOT REPLAY") : "") << "\n";
    outcomes.push_back(o);
  }
  std::ostringstream table;
  table << "| mutant | what it breaks | caught by | invariant | cases needed | shrunk scenario | lines | replays |\n";
  table << "|---|---|---|---|---|---|---|---|\n";
  bool all = true;
  for (const Outcome& o : outcomes) {
    all = all && o.caught && (o.scenario.empty() || o.replays);
    table << "| `" << o.mutant->name << "` | " << o.mutant->description << " | "
          << (o.caught ? o.property : "**survived**") << " | " << o.invariant << " | " << (o.caught ? std::to_string(o.cases) : "-")
          << " | " << (o.scenario.empty() ? "-" : "[" + o.scenario + "](" + std::filesystem::relative(o.scenario, std::filesystem::path(options.report).parent_path()).string() + ")")
          << " | " << (o.scenario.empty() ? "-" : std::to_string(o.scenario_lines)) << " | "
          << (o.scenario.empty() ? "-" : (o.replays ? "yes" : "**no**")) << " |\n";
  }
  std::cout << "\n" << table.str();
  if (!options.only) {
    std::filesystem::create_directories(std::filesystem::path(options.report).parent_path());
    std::ofstream report(options.report);
    report << "# Mutants\n\n"
           << "Each row is a bug planted in the real model (model/core/mutants.h; each system lists its own) and\n"
           << "switched on for one run of that system's property suite (sim/SYSTEM/props/). A mutant is caught\n"
           << "when a property fails; RapidCheck then shrinks the failing case and it is written as a scenario\n"
           << "file, which `./relaysim run --mutant NAME FILE` replays (the last column checks that it shows the\n"
           << "same invariant). Cases needed counts generated cases up to and including the first failure. Lines\n"
           << "counts the scenario file's YAML lines.\n\n"
           << "Produced by `./relaysim mutants` (seed " << options.seed << ", " << options.cases
           << " cases per property, a quarter of that on SQLite).\n\n"
           << table.str();
    std::cout << "\nwritten to " << options.report << "\n";
  }
  std::cout << (all ? "every mutant was caught\n" : "SOME MUTANTS SURVIVED or did not replay\n");
  return all ? 0 : 1;
}

}  // namespace relaysim::cli
