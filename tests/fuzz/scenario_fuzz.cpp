// libFuzzer target: the scenario reader, and `--set` overrides over it, then what `validate`
// makes of a scenario it read (its cost, its capacity check). Any text either reads as a
// scenario or is refused with a ScenarioError; anything else — another exception, a crash, a
// sanitizer report, a hang — is a finding. A first line with '=' in it is also tried as an
// override (key.path=value) over the rest. Run with `./relaysim fuzz` (and for a bounded time by `./relaysim test`).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/capacity.h"
#include "sim/loader.h"
#include "sim/system.h"

namespace {
// What `validate` does with a scenario it has read: its cost, and its capacity check.
void weigh(const relaysim::sim::Scenario& s) {
  (void)s.system->footprint(s, true);
  for (const relaysim::sim::queueing::StationLoad& st : relaysim::sim::capacity_check(s)) {
    (void)relaysim::sim::describe(st);
    if (!st.station.stable()) (void)relaysim::sim::overload_warning(st);
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    weigh(relaysim::sim::parse_scenario(text, "fuzz.yaml"));
  } catch (const relaysim::sim::ScenarioError&) {
  }
  const std::size_t eol = text.find('\n');
  if (eol == std::string_view::npos || text.substr(0, eol).find('=') == std::string_view::npos) return 0;
  try {
    const relaysim::sim::Override o = relaysim::sim::parse_override(text.substr(0, eol));
    weigh(relaysim::sim::parse_scenario(text.substr(eol + 1), "fuzz.yaml", {o}));
  } catch (const relaysim::sim::ScenarioError&) {
  }
  return 0;
}
