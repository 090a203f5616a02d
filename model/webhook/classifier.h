// Classifier: what an HTTP result means for a request — delivered, retry, or terminal.
//
// The default table: 2xx delivered; 408, 425, 429 and 5xx retry; 410 terminal
// (gone); other 4xx terminal (client_error); 1xx and 3xx retry (a redirect is a failure and is
// not followed); timeouts, refused connections and DNS errors retry. Every entry can be changed
// per status code or per class ("4xx"). A URL the shell may not call (NetError::forbidden_address)
// is always terminal, with its own reason: which addresses are forbidden is the shell's setting.
// So is a URL that cannot be called at all (NetError::bad_url: credentials in it, a scheme other
// than http or https, a control character), with reason bad_url: another attempt would read the
// same URL the same way. A delivery that could not start before its claim's lease ended
// (NetError::too_late: it waited for a group commit) sent nothing and always retries.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string_view>

#include "model/core/http.h"
#include "model/core/names.h"
#include "model/webhook/types.h"

namespace relaysim::webhook {

enum class Verdict : std::uint8_t { delivered, retry, terminal };
inline constexpr auto kVerdictNames = names<Verdict>({
    {Verdict::delivered, "delivered"}, {Verdict::retry, "retry"}, {Verdict::terminal, "terminal"}});
constexpr std::string_view to_string(Verdict v) { return kVerdictNames[v]; }

struct ClassificationTable {
  std::array<Verdict, 6> by_class{Verdict::retry, Verdict::retry, Verdict::delivered,
                                  Verdict::retry, Verdict::terminal, Verdict::retry};  // 0xx..5xx
  std::map<int, Verdict> by_status{{408, Verdict::retry}, {425, Verdict::retry}, {429, Verdict::retry}};
  Verdict timeout = Verdict::retry;
  Verdict connect_error = Verdict::retry;
  Verdict dns_error = Verdict::retry;
  bool operator==(const ClassificationTable&) const = default;
};

struct Classification {
  Verdict verdict;
  Reason reason;  // for terminal verdicts: why; ok for delivered; none for retry
};

Classification classify(const ClassificationTable& table, const HttpResult& result);

}  // namespace relaysim::webhook
