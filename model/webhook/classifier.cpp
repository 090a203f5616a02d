#include "model/webhook/classifier.h"

namespace relaysim::webhook {

static Classification with_reason(Verdict v, const HttpResult& r) {
  switch (v) {
    case Verdict::delivered: return {v, Reason::ok};
    case Verdict::retry: return {v, Reason::none};
    case Verdict::terminal:
      if (r.error == NetError::none && r.status == 410) return {v, Reason::gone};
      if (r.error == NetError::none && r.status >= 400 && r.status < 500) return {v, Reason::client_error};
      return {v, Reason::rejected};
  }
  return {v, Reason::none};
}

Classification classify(const ClassificationTable& table, const HttpResult& r) {
  switch (r.error) {
    case NetError::timeout: return with_reason(table.timeout, r);
    case NetError::connect_error: return with_reason(table.connect_error, r);
    case NetError::dns_error: return with_reason(table.dns_error, r);
    // Asking again would reach the same address: the tenant must change the URL (and may then
    // replay the request).
    case NetError::forbidden_address: return {Verdict::terminal, Reason::forbidden_address};
    // Nor is a URL that cannot be called at all: asking again would read the same URL.
    case NetError::bad_url: return {Verdict::terminal, Reason::bad_url};
    // Nothing was sent, and the claim's lease has ended: another pod may hold the request now.
    // A retry, as for any attempt that got no answer; the store takes it only under the claim's
    // own token, so if another claim has the request, this attempt's end changes nothing.
    case NetError::too_late: return {Verdict::retry, Reason::none};
    case NetError::none: break;
  }
  // The overrides are few and clustered (408, 425, 429 by default): most statuses fall outside
  // their range, and skip the tree walk.
  const auto& overrides = table.by_status;
  if (!overrides.empty() && r.status >= overrides.begin()->first && r.status <= overrides.rbegin()->first) {
    if (auto it = overrides.find(r.status); it != overrides.end()) return with_reason(it->second, r);
  }
  if (r.status == 410) return with_reason(Verdict::terminal, r);
  const int cls = r.status / 100;
  if (cls < 0 || cls >= static_cast<int>(table.by_class.size())) return with_reason(Verdict::retry, r);
  return with_reason(table.by_class[static_cast<std::size_t>(cls)], r);
}

}  // namespace relaysim::webhook
