// libFuzzer target: a line of the live service's event log (live/webhook/event_log.h), as
// `relaysim judge` reads it. Whatever the bytes, reading either gives a record or says why not,
// and a record read writes back to a line that reads as the same record.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "live/webhook/event_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace relaysim::live::webhook;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  std::string problem;
  const std::optional<LogRecord> r = read_record(line, problem);
  if (!r) {
    if (problem.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  const std::string written = write_record(*r);
  const std::optional<LogRecord> again = read_record(written, problem);
  if (!again || write_record(*again) != written) std::abort();  // what is written reads back the same
  return 0;
}
