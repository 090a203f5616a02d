// libFuzzer target: the scenario reader, and `--set` overrides over it. Any text either reads as a
// scenario or is refused with a ScenarioError; anything else — another exception, a crash, a
// sanitizer report, a hang — is a finding. A first line with '=' in it is also tried as an
// override (key.path=value) over the rest. Run with `./relaysim fuzz` (and for a bounded time by `./relaysim test`).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    relaysim::sim::parse_scenario(text, "fuzz.yaml");
  } catch (const relaysim::sim::ScenarioError&) {
  }
  const std::size_t eol = text.find('\n');
  if (eol == std::string_view::npos || text.substr(0, eol).find('=') == std::string_view::npos) return 0;
  try {
    const relaysim::sim::Override o = relaysim::sim::parse_override(text.substr(0, eol));
    relaysim::sim::parse_scenario(text.substr(eol + 1), "fuzz.yaml", {o});
  } catch (const relaysim::sim::ScenarioError&) {
  }
  return 0;
}
