// libFuzzer target: the scenario reader. Any text either reads as a scenario or is refused with a
// ScenarioError; anything else — another exception, a crash, a sanitizer report, a hang — is a
// finding. Run with `./relaysim fuzz` (and for a bounded time by `./relaysim test`).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/scenario/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    relaysim::sim::parse_scenario(text, "fuzz.yaml");
  } catch (const relaysim::sim::ScenarioError&) {
  }
  return 0;
}
