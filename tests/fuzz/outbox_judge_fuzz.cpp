// libFuzzer target: the outbox relay's judge (live/outbox/judge.h) past its files' names: the
// world's receipts and the serve processes' event logs read as `relaysim judge` reads them, and
// replayed into the simulator's outbox oracle, over shards that are empty memory stores (the
// PostgreSQL half of judge() is not fuzzed: its rows come from the store's own schema). The input
// is the receipts, then each process's event log, a form feed before each log.
//
// Whatever the bytes, the judge gives a verdict or refuses them with a reason
// (std::invalid_argument, as `relaysim judge` exits 2 with it); it never crashes, trips an
// assertion of the oracle's, or throws anything else.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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
// two pods of config/serve-outbox.yaml's relay (per-key ordering).
Setup& setup() {
  static Setup s = [] {
    Setup made;
    char dir[] = "/tmp/relaysim-fuzz-judge-XXXXXX";
    if (mkdtemp(dir) == nullptr) std::abort();
    made.dir = dir;
    relaysim::sim::Scenario base = relaysim::sim::load_scenario(RELAYSIM_SOURCE_DIR "/scenarios/outbox-quickstart.yaml");
    const auto& spec = relaysim::sim::outbox::spec_of(base);
    made.config.platform = spec.platform;
    made.config.platform.pods = 2;
    made.config.platform.ordering = relaysim::outbox::Ordering::per_key;
    made.config.partitions = spec.log.partitions;
    made.config.shards.assign(made.config.platform.shards, "");
    made.scenario = std::make_unique<relaysim::sim::Scenario>(outbox::scenario_as_run(
        RELAYSIM_SOURCE_DIR "/scenarios/outbox-quickstart.yaml", made.config));
    return made;
  }();
  return s;
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
  for (std::size_t i = 1; i < parts.size(); ++i) {
    events.push_back(s.dir + "/events-" + std::to_string(i) + ".jsonl");
    write(events.back(), parts[i]);
  }
  std::vector<std::unique_ptr<relaysim::outbox::MemoryStore>> stores;
  const auto empty_shards = [&] {
    outbox::ShardsAtEnd shards;
    for (std::uint32_t i = 0; i < s.config.platform.shards; ++i) {
      stores.push_back(std::make_unique<relaysim::outbox::MemoryStore>());
      shards.stores.push_back(stores.back().get());
      shards.rows.emplace_back();
    }
    return shards;
  };
  try {
    (void)outbox::judge(*s.scenario, s.config, events, receipts, empty_shards);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).empty()) std::abort();  // a refusal always says why
  }
  return 0;
}
