// libFuzzer target: load, write, load again. Whatever the reader accepts, the writer must write so
// that it reads back to the same scenario, and writing that again must give the same text — the
// path every shrunk property failure takes to become a replayable file.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sim/loader.h"
#include "sim/writer.h"
#include "sim/system.h"

namespace {
[[noreturn]] void finding(const char* what, const std::string& text) {
  std::fprintf(stderr, "round trip: %s\n--- written\n%s\n", what, text.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace relaysim::sim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Scenario first;
  try {
    first = parse_scenario(text, "fuzz.yaml");
  } catch (const ScenarioError&) {
    return 0;  // refused input is the other target's business
  }
  const std::string written = write_scenario(first);
  Scenario second;
  try {
    second = parse_scenario(written, "written.yaml");
  } catch (const ScenarioError& e) {
    finding(e.what(), written);
  }
  if (write_scenario(second) != written) finding("written twice, the texts differ", written);
  if (second.expect != first.expect || second.crashes != first.crashes || second.duration != first.duration ||
      second.seed != first.seed || second.name != first.name || second.store != first.store) {
    finding("the top level changed", written);
  }
  return 0;
}
