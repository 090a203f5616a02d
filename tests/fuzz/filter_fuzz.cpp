// libFuzzer target: a marketing campaign's filter as a client or a scenario writes it
// (model/sms/filter.h). Whatever the bytes, parsing answers with a filter or with an error whose
// position is inside the text, never crashes; a filter that parses decides every user, and the
// same way twice.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "model/core/random.h"
#include "model/sms/filter.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace relaysim::sms;
  static const Vocabulary vocabulary{{"north", "south", "east", "west"}, {"vip", "new", "churned"}};
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = Filter::parse(text, vocabulary);
  if (const auto* e = std::get_if<FilterError>(&parsed)) {
    if (e->offset > text.size() || e->message.empty()) {
      std::fprintf(stderr, "filter: an error at %zu of %zu bytes, or without a message\n", e->offset, text.size());
      std::abort();
    }
    return 0;
  }
  const Filter& f = std::get<Filter>(parsed);
  for (std::uint64_t i = 0; i < 16; ++i) {
    const std::uint64_t h = relaysim::mix64(i);
    UserRecord u;
    u.recipient = i;
    u.region = static_cast<std::uint16_t>(h % 4);
    u.tags = h >> 8 & 7;
    u.opt_in = (h >> 12 & 1) != 0;
    u.last_active = relaysim::Time{} - std::chrono::hours(static_cast<std::int64_t>(h >> 20 & 4095));
    if (f.matches(u, relaysim::Time{}) != f.matches(u, relaysim::Time{})) std::abort();
  }
  return 0;
}
