#include "live/sms/ports.h"

#include <boost/asio/post.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>

#include "live/json_api.h"
#include "model/core/assert.h"
#include "model/sms/submit.h"

namespace relaysim::live::sms {

std::optional<model::Recipient> parse_recipient(std::string_view text) {
  if (text.size() < 9 || text.size() > 16 || text[0] != '+' || text[1] == '0') return std::nullopt;
  model::Recipient r = 0;
  for (const char c : text.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    r = r * 10 + static_cast<model::Recipient>(c - '0');
  }
  return r;
}

std::string format_recipient(model::Recipient r) { return "+" + std::to_string(r); }

std::string submit_body(const model::Submit& s) {
  char content[17];
  std::snprintf(content, sizeof content, "%016llx", static_cast<unsigned long long>(s.content));
  return dump_json(nlohmann::json{{"reference", std::to_string(s.id)},
                                  {"to", format_recipient(s.recipient)},
                                  {"template", s.template_id},
                                  {"content", content},
                                  {"segments", s.segments},
                                  {"attempt", s.attempt}});
}

void HttpProviders::submit(model::ProviderId provider, const model::Submit& submit, Duration timeout,
                           model::SubmitCallback done) {
  RELAYSIM_ASSERT(provider < providers_.size(), "a provider the platform routes among");
  static constexpr OutgoingHeader kHeaders[] = {{"Content-Type", "application/json"}};
  caller_.call("POST", providers_[provider].url, kHeaders, submit_body(submit), timeout,
               [done = std::move(done)](HttpReply&& reply) mutable {
                 done(model::classify_submit(reply.error, reply.status));
               });
}

void NoKeyValue::limit(std::string_view, const LimiterSpec&, LimitOp, std::uint32_t, std::uint64_t, Duration,
                       LimitCallback done) {
  boost::asio::post(io_, [done = std::move(done)]() mutable { done(KvLimitAnswer{KvStatus::unavailable, {}}); });
}

}  // namespace relaysim::live::sms
