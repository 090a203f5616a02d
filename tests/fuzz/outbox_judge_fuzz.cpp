// libFuzzer target: the outbox relay's judge (live/outbox/judge.h) past its files' names: the
// world's receipts and the serve processes' event logs read as `relaysim judge` reads them, and
// replayed into the simulator's outbox oracle over shards that are memory stores, with the rows
// the input gives as the shards' rows at the end of the run (the PostgreSQL half of judge() is not
// fuzzed: its rows come from the store's own schema). The input is the receipts, then each
// process's event log, a form feed before each log; a part that starts with a line `rows` holds
// rows instead, one a line: shard id status type attempt key created_at (integers; what the judge
// must refuse of a database's row among them).
//
// Whatever the bytes, the judge gives a verdict or refuses them with a reason
// (std::invalid_argument, as `relaysim judge` exits 2 with it); it never crashes, trips an
// assertion of the oracle's, or throws anything else.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "live/outbox/judge.h"
#include "model/outbox/memory_store.h"
#include "sim/loader.h"
#include "sim/outbox/spec.h"

namespace {

namespace outbox = relaysim::live::outbox;

// At most this many logs are judged from one input (more only repeats the same code).
constexpr std::size_t kLogsAtMost = 4;

struct Setup {
  std::string dir;
  outbox::OutboxServeConfig config;
  std::unique_ptr<relaysim::sim::Scenario> scenario;
};

// The run the seeds are of (tests/live/outbox_e2e.py): the outbox quickstart's world, served by
// pods of config/serve-outbox.yaml's relay (its `platform`, read through the scenario's schema as
// serve reads it; the log's partitions, session and poll interval are the scenario's).
Setup& setup() {
  static Setup s = [] {
    Setup made;
    char dir[] = "/tmp/relaysim-fuzz-judge-XXXXXX";
    if (mkdtemp(dir) == nullptr) std::abort();
    made.dir = dir;
    const YAML::Node serve = YAML::LoadFile(RELAYSIM_SOURCE_DIR "/config/serve-outbox.yaml");
    const relaysim::sim::Scenario base =
        relaysim::sim::load_scenario(RELAYSIM_SOURCE_DIR "/scenarios/outbox-quickstart.yaml",
                                     {{"outbox.platform", YAML::Dump(serve["platform"])}});
    const auto& spec = relaysim::sim::outbox::spec_of(base);
    made.config.platform = spec.platform;
    made.config.partitions = spec.log.partitions;
    made.config.session_timeout = spec.log.session_timeout;
    made.config.max_poll_interval = spec.log.max_poll_interval;
    made.config.shards.assign(made.config.platform.shards, "");
    made.scenario = std::make_unique<relaysim::sim::Scenario>(outbox::scenario_as_run(
        RELAYSIM_SOURCE_DIR "/scenarios/outbox-quickstart.yaml", made.config));
    return made;
  }();
  return s;
}

// A `rows` part's rows, per shard in id order (one per id), as a shard's database would give them.
std::vector<std::vector<relaysim::outbox::Message>> read_rows(std::string_view part, std::uint32_t shards) {
  std::vector<std::vector<relaysim::outbox::Message>> rows(shards);
  std::istringstream in{std::string(part)};
  std::string line;
  std::getline(in, line);  // "rows"
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::uint64_t shard = 0, id = 0, status = 0, type = 0, attempt = 0, key = 0;
    std::int64_t created = 0;
    if (!(fields >> shard >> id >> status >> type >> attempt >> key >> created)) continue;
    if (shard >= shards || id > 1'000'000 || status > 255 || attempt > 65535) continue;
    relaysim::outbox::Message m;
    m.id = id;
    m.status = static_cast<relaysim::outbox::Status>(status);
    m.type = static_cast<std::uint32_t>(type);
    m.attempt = static_cast<std::uint16_t>(attempt);
    m.key = key;
    m.created_at = relaysim::Time{relaysim::Duration{created}};
    m.next_attempt = m.created_at;
    rows[shard].push_back(m);
  }
  for (auto& shard : rows) {
    std::sort(shard.begin(), shard.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    shard.erase(std::unique(shard.begin(), shard.end(), [](const auto& a, const auto& b) { return a.id == b.id; }),
                shard.end());
  }
  return rows;
}

void write(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Setup& s = setup();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  for (std::string_view rest = input;;) {
    const std::size_t end = rest.find('\f');
    parts.push_back(rest.substr(0, end));
    if (end == std::string_view::npos || parts.size() > kLogsAtMost) break;
    rest = rest.substr(end + 1);
  }
  const std::string receipts = s.dir + "/receipts.jsonl";
  write(receipts, parts[0]);
  std::vector<std::string> events;
  std::vector<std::vector<relaysim::outbox::Message>> rows(s.config.platform.shards);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].starts_with("rows\n")) {
      rows = read_rows(parts[i], s.config.platform.shards);
      continue;
    }
    events.push_back(s.dir + "/events-" + std::to_string(i) + ".jsonl");
    write(events.back(), parts[i]);
  }
  std::vector<std::unique_ptr<relaysim::outbox::MemoryStore>> stores;
  const auto shards_at_end = [&] {
    outbox::ShardsAtEnd shards;
    for (std::uint32_t i = 0; i < s.config.platform.shards; ++i) {
      stores.push_back(std::make_unique<relaysim::outbox::MemoryStore>());
      shards.stores.push_back(stores.back().get());
    }
    shards.rows = std::move(rows);
    return shards;
  };
  try {
    (void)outbox::judge(*s.scenario, s.config, events, receipts, shards_at_end);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).empty()) std::abort();  // a refusal always says why
  }
  return 0;
}
