// The SMS gateway's ports on the live shell: providers over HTTP, an empty recipient directory,
// and the key-value store when there is no Redis. (Time and timers are live/clock.h's; Redis is
// live/redis_kv.h.) No policy here: what an answer means is model/sms/submit.h's classify_submit.
#pragma once

#include <boost/asio/io_context.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "live/http_call.h"
#include "live/sms/config.h"
#include "model/resilience/kv.h"
#include "model/sms/directory.h"
#include "model/sms/ports.h"

namespace relaysim::live::sms {

namespace model = relaysim::sms;

// "+4915112345678" (E.164: a plus and 8 to 15 digits, the first not 0) as a Recipient; nullopt
// otherwise.
std::optional<model::Recipient> parse_recipient(std::string_view text);
std::string format_recipient(model::Recipient r);

// A submit's body, as a provider receives it (docs/live.md):
// {"reference", "to", "template", "content", "segments", "attempt"}. The reference is the
// gateway's message id, which the provider's receipt gives back.
std::string submit_body(const model::Submit& s);

// Submits by POSTing to each provider's URL through one HttpCaller (the operator's own
// addresses: not behind the address guard).
class HttpProviders final : public model::Providers {
 public:
  HttpProviders(HttpCaller& caller, const std::vector<ProviderEndpoint>& providers)
      : caller_(caller), providers_(providers) {}
  std::size_t count() const override { return providers_.size(); }
  void submit(model::ProviderId provider, const model::Submit& submit, Duration timeout,
              model::SubmitCallback done) override;

 private:
  HttpCaller& caller_;
  const std::vector<ProviderEndpoint>& providers_;
};

// A directory with no users, for a gateway whose file names none (serve.directory; the one the
// world writes is live/sms/directory.h's): campaigns are accepted and expand to no one.
class EmptyDirectory final : public model::Directory {
 public:
  const model::Vocabulary& vocabulary() const override { return vocabulary_; }
  std::uint64_t size() const override { return 0; }
  std::size_t read(std::uint64_t, std::span<model::UserRecord>) override { return 0; }
  bool opted_out(model::Recipient) override { return false; }
  std::int32_t utc_offset(model::Recipient) override { return 0; }

 private:
  model::Vocabulary vocabulary_;
};

// The key-value store of a gateway without Redis: every call is refused (after the loop's turn,
// never inline). The configuration allows no shared limit then, so nothing calls it.
class NoKeyValue final : public KeyValue {
 public:
  explicit NoKeyValue(boost::asio::io_context& io) : io_(io) {}
  void limit(std::string_view key, const LimiterSpec& spec, LimitOp op, std::uint32_t cost, std::uint64_t member,
             Duration timeout, LimitCallback done) override;

 private:
  boost::asio::io_context& io_;
};

}  // namespace relaysim::live::sms
