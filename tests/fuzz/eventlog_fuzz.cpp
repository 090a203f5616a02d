// libFuzzer target: the live service's event log (live/webhook/event_log.h), as `relaysim judge`
// reads it. Whatever the bytes, reading a line either gives a record or says why not, and a
// record read writes back to a line that reads as the same record. The input's lines are also
// one run's logs (a form feed starts the next process's log) for the checker the judge holds
// every log to: each record fits, or the checker says why no real process could have written it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "live/webhook/event_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace relaysim::live::webhook;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  LogChecker checker;
  checker.next_log();
  std::size_t n = 0;
  for (std::string_view rest = input; !rest.empty();) {
    const std::size_t end = rest.find_first_of("\n\f");
    const std::string_view line = rest.substr(0, end);
    const bool next_log = end != std::string_view::npos && rest[end] == '\f';
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    ++n;
    std::string problem;
    const std::optional<LogRecord> r = read_record(line, problem);
    if (!r) {
      if (problem.empty()) std::abort();  // a refusal always says why
    } else {
      const std::string written = write_record(*r);
      const std::optional<LogRecord> again = read_record(written, problem);
      if (!again || write_record(*again) != written) std::abort();  // what is written reads back the same
      // The checker's answer is a reason or nothing, whatever came before; it never throws or
      // crashes. (The judge stops at the first refusal; going on checks what follows one.)
      (void)checker.check(*r, "fuzz:" + std::to_string(n));
    }
    if (next_log) checker.next_log();
  }
  return 0;
}
