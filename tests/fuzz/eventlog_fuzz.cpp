// libFuzzer target: the live services' event logs (live/webhook/event_log.h, live/sms/event_log.h,
// live/outbox/event_log.h), as `relaysim judge` reads them. Whatever the bytes, reading a line
// either gives a record or says why not, and a record read writes back to a line that reads as the
// same record. The input's lines are also one run's logs (a form feed starts the next process's
// log) for the checker the judge holds every log to: each record fits, or the checker says why no
// real process could have written it. Each input is read as every system's logs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "live/outbox/event_log.h"
#include "live/sms/event_log.h"
#include "live/webhook/event_log.h"

namespace {

template <class Checker, class Read, class Write>
void fuzz_log(std::string_view input, Read read, Write write) {
  Checker checker;
  checker.next_log();
  std::size_t n = 0;
  for (std::string_view rest = input; !rest.empty();) {
    const std::size_t end = rest.find_first_of("\n\f");
    const std::string_view line = rest.substr(0, end);
    const bool next_log = end != std::string_view::npos && rest[end] == '\f';
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    ++n;
    std::string problem;
    const auto r = read(line, problem);
    if (!r) {
      if (problem.empty()) std::abort();  // a refusal always says why
    } else {
      const std::string written = write(*r);
      const auto again = read(written, problem);
      if (!again || write(*again) != written) std::abort();  // what is written reads back the same
      // The checker's answer is a reason or nothing, whatever came before; it never throws or
      // crashes. (The judge stops at the first refusal; going on checks what follows one.)
      (void)checker.check(*r, "fuzz:" + std::to_string(n));
    }
    if (next_log) checker.next_log();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace live = relaysim::live;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  fuzz_log<live::webhook::LogChecker>(input, live::webhook::read_record, live::webhook::write_record);
  fuzz_log<live::sms::LogChecker>(input, live::sms::read_record, live::sms::write_record);
  fuzz_log<live::outbox::LogChecker>(input, live::outbox::read_record, live::outbox::write_record);
  return 0;
}
