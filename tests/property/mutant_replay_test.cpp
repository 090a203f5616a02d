// Every shrunk counterexample in reports/mutants/ replays as reports/mutants.md says: with its
// planted bug it breaks the invariant the table names, and without it the same file passes on
// both stores. A file that fails without its bug is a false verdict of the oracle (or a real bug
// of the model) that the mutant run took for a catch; a file the table does not list, or a row
// whose file is gone, is a report that no longer tells the truth.
//
// One test per row of the table, registered from the table itself when the binary starts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "model/core/mutants.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "sim/system.h"

namespace {

namespace fs = std::filesystem;
using relaysim::Mutant;
using relaysim::sim::RunResult;
using relaysim::sim::StoreKind;

const fs::path kSource = RELAYSIM_SOURCE_DIR;

struct Row {
  std::string mutant;     // as the command line spells it
  std::string property;   // which property caught it: W_url_memory, Liveness_memory, ...
  std::string invariant;  // what that property checks: W-url, "W-nodup (fencing)", liveness
  fs::path file;          // the shrunk scenario, relative to the repository
};

// The rows of reports/mutants.md that name a shrunk scenario.
std::vector<Row> table_rows() {
  std::ifstream in(kSource / "reports/mutants.md");
  // | `name` | what | property | invariant | cases | [path](link) | lines | replays |
  static const std::regex row(R"(^\| `([a-z0-9_]+)` \| .* \| ([A-Za-z0-9_]+) \| ([^|]+) \| [0-9]+ \| \[([^\]]+)\]\([^)]*\) \|)");
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::string invariant = m[3].str();
    while (!invariant.empty() && invariant.back() == ' ') invariant.pop_back();
    rows.push_back({m[1].str(), m[2].str(), invariant, fs::path(m[4].str())});
  }
  return rows;
}

const Mutant* find_mutant(const std::string& name) {
  for (const relaysim::sim::System* s : relaysim::sim::systems()) {
    for (const Mutant* m : s->mutants()) {
      if (m->name == name) return m;
    }
  }
  return nullptr;
}

RunResult replay(const fs::path& file, StoreKind store, const Mutant* mutant) {
  relaysim::mutants::active() = mutant;
  relaysim::sim::RunOptions o;
  o.store = store;
  RunResult r = relaysim::sim::run_scenario(relaysim::sim::load_scenario((kSource / file).string()), std::move(o));
  relaysim::mutants::active() = nullptr;
  return r;
}

// What the run broke, in the words of the table's invariant column.
bool breaks(const RunResult& r, const std::string& invariant) {
  if (invariant == "liveness") return r.open_work() > 0 || r.hit_event_limit();
  // "W-nodup (fencing)": the invariant's id is the first word.
  const std::string id = invariant.substr(0, invariant.find(' '));
  for (std::size_t i = 0; i < r.ledger.invariants().size(); ++i) {
    if (r.ledger.invariants()[i].id == id) return r.ledger.count(i) > 0;
  }
  ADD_FAILURE() << "no invariant " << id << " in " << r.system().name();
  return false;
}

std::string violations(const RunResult& r) {
  std::string out;
  for (const auto& v : r.ledger.examples()) out += "\n  " + r.ledger.describe(v);
  if (r.stalled()) out += "\n  stalled with " + std::to_string(r.open_work()) + " open";
  if (r.hit_event_limit()) out += "\n  hit the event limit";
  return out;
}

class Replay : public ::testing::Test {
 public:
  explicit Replay(Row row) : row_(std::move(row)) {}
  void TestBody() override {
    const Mutant* mutant = find_mutant(row_.mutant);
    ASSERT_NE(mutant, nullptr) << "reports/mutants.md names a mutant no system plants: " << row_.mutant;
    ASSERT_TRUE(fs::exists(kSource / row_.file)) << row_.file << " is in reports/mutants.md but not in the tree";
    // The property's store is the file's: X_memory or X_sqlite (the others run on memory).
    const StoreKind own = row_.property.ends_with("_sqlite") ? StoreKind::sqlite : StoreKind::memory;
    const RunResult planted = replay(row_.file, own, mutant);
    EXPECT_TRUE(breaks(planted, row_.invariant))
        << row_.file << " with '" << row_.mutant << "' planted does not break " << row_.invariant << violations(planted);
    for (StoreKind store : {StoreKind::memory, StoreKind::sqlite}) {
      const RunResult clean = replay(row_.file, store, nullptr);
      EXPECT_TRUE(clean.pass()) << row_.file << " fails without its planted bug on the "
                                << (store == StoreKind::sqlite ? "sqlite" : "memory") << " store:" << violations(clean);
    }
  }

 private:
  Row row_;
};

// Every file under reports/mutants/ is a row of the table, and every row a file.
TEST(MutantReplays, TheTableAndTheFilesAgree) {
  const std::vector<Row> rows = table_rows();
  ASSERT_FALSE(rows.empty()) << "no rows read from reports/mutants.md";
  std::set<fs::path> listed;
  for (const Row& r : rows) {
    listed.insert(r.file);
    EXPECT_EQ(r.file.parent_path().filename().string(), r.mutant) << r.file << " is filed under another mutant";
    EXPECT_EQ(r.file.stem().string(), r.property) << r.file << " is named for another property";
  }
  for (const auto& e : fs::recursive_directory_iterator(kSource / "reports/mutants")) {
    if (e.path().extension() != ".yaml") continue;
    const fs::path relative = fs::relative(e.path(), kSource);
    EXPECT_TRUE(listed.contains(relative)) << relative << " is not in reports/mutants.md";
  }
}

const bool registered = [] {
  for (const Row& row : table_rows()) {
    ::testing::RegisterTest("MutantReplays", row.mutant.c_str(), nullptr, row.file.c_str(), __FILE__, __LINE__,
                            [row]() -> ::testing::Test* { return new Replay(row); });
  }
  return true;
}();

}  // namespace
