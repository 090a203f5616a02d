// libFuzzer target: the SMS gateway's API (live/sms/api.h) behind the live request parser
// (live/http_server.h). The input is the raw bytes of one HTTP request as a client would send
// them; it is read as a connection reads it and answered by the API over a node on an in-memory
// store, whose providers accept every submit. Whatever the bytes, the answer is a status the API
// promises (never a 500), every 4xx says why in JSON, and nothing crashes. So that the fuzzer
// reaches past the credentials, `@ADMIN@` stands for an admin key, `@TOKEN@` for a token of the
// approved business 1 and `@RECEIPT@` for provider alpha's receipt secret (the seeds in
// tests/fuzz/sms-requests use them).
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "live/api_keys.h"
#include "live/http_server.h"
#include "tests/fuzz/api_answer.h"
#include "live/sms/api.h"
#include "live/sms/ports.h"
#include "model/sms/jwt_codec.h"
#include "model/sms/memory_store.h"
#include "model/store/sqlite_db.h"
#include "tests/live/sms_fakes.h"

namespace {

using namespace relaysim;

class FixedClock final : public Clock {
 public:
  Time now() const override { return time_from_ns(1'795'659'718'000'000'000); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static FixedClock clock;
  static live::sms::testing::StillTimers timers;
  static Rng rng(7);
  static live::sms::testing::HeldProviders providers;
  static live::sms::testing::NoLimits kv;
  static live::sms::EmptyDirectory directory;
  static sms::LibjwtCodec codec("fuzzing-secret-of-at-least-32-bytes!");
  static sms::MemoryStore store;
  static sms::Events events;
  static sms::PlatformConfig config;
  static Db db(":memory:", Durability::normal);
  static live::ApiKeys keys(db);
  static const std::vector<live::sms::ProviderEndpoint> endpoints = {
      {"alpha", "http://127.0.0.1:1/a", "alpha-receipt-secret"}, {"beta", "http://127.0.0.1:1/b", "beta-receipt-secret"}};
  static sms::BackOffice office(store, codec, clock, config.token_lifetime, config.quota_period);
  static sms::Node node(1, config, {}, sms::NodePorts{clock, timers, rng, providers, kv, directory, codec, store, events});
  static live::sms::Api api(node, office, store, keys, codec, clock, endpoints);
  static const std::string admin = keys.create(std::nullopt, clock.now()).key;
  static const std::string token = [] {
    const sms::BusinessId shop = office.apply({"shop", {"SHOP"}, {3}, 1'000'000});
    office.approve(shop);
    return *office.issue_token(shop);
  }();
  live::ServerLimits limits;
  limits.max_body = 16 * 1024;
  limits.max_header = 4096;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  for (const auto& [mark, value] : {std::pair<std::string_view, const std::string*>{"@ADMIN@", &admin},
                                    {"@TOKEN@", &token},
                                    {"@RECEIPT@", &endpoints[0].receipt_secret}}) {
    for (std::size_t at = bytes.find(mark); at != std::string::npos; at = bytes.find(mark, at + value->size())) {
      bytes.replace(at, mark.size(), *value);
    }
  }
  // A synchronous send is answered when its provider answers, after the request.
  const live::Response r = live::answer_bytes(bytes, limits, [](const live::Incoming& in) {
    std::optional<live::Response> got;
    api.handle(in, [&got](live::Response&& answer) {
      if (got) std::abort();  // answered twice
      got = std::move(answer);
    });
    if (!got) providers.answer_all();
    if (!got) std::abort();  // never answered
    return std::move(*got);
  });
  fuzzing::check_answer(r);
  providers.answer_all();
  return 0;
}
