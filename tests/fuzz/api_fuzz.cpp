// libFuzzer target: the live service's request parser and API (live/http_server.h, live/webhook/api.h).
// The input is the raw bytes of one HTTP request as a client would send them; it is read as a
// connection reads it and answered by the API over an in-memory store. Whatever the bytes, the
// answer is a status the API promises (never a 500), every 4xx says why in JSON, and nothing
// crashes. So that the fuzzer reaches past the key check, `@ADMIN@` and `@TENANT@` in the input
// stand for an admin key and tenant cx1's key (the seeds in tests/fuzz/requests use them).
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "live/webhook/api.h"
#include "live/api_keys.h"
#include "model/store/sqlite_db.h"
#include "live/http_server.h"
#include "model/webhook/ingest.h"
#include "model/webhook/memory_store.h"

namespace {

class FixedClock final : public relaysim::Clock {
 public:
  relaysim::Time now() const override { return relaysim::time_from_ns(1'795'659'718'000'000'000); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace relaysim;
  static FixedClock clock;
  static webhook::Events events;
  static webhook::PlatformConfig config = [] {
    webhook::PlatformConfig c;
    c.max_payload_bytes = 4096;
    return c;
  }();
  // One store for the whole run: requests from earlier inputs are there to be read and replayed.
  static webhook::MemoryStore store;
  static webhook::Ingest ingest(1, config, store, clock, events);
  static Db db(":memory:", Durability::normal);
  static live::ApiKeys keys(db);
  static const std::string admin = keys.create(std::nullopt, clock.now()).key;
  static const std::string tenant = keys.create(std::string("cx1"), clock.now()).key;
  static live::webhook::Api api(ingest, store, keys, clock, [] { return std::string("# metrics\n"); });
  live::ServerLimits limits;
  limits.max_body = 16 * 1024;
  limits.max_header = 4096;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  for (const auto& [mark, key] : {std::pair<std::string_view, const std::string*>{"@ADMIN@", &admin}, {"@TENANT@", &tenant}}) {
    for (std::size_t at = bytes.find(mark); at != std::string::npos; at = bytes.find(mark, at + key->size())) {
      bytes.replace(at, mark.size(), *key);
    }
  }
  const live::Response r = live::answer_bytes(bytes, limits, [](const live::Incoming& in) { return api.handle(in); });
  if (r.status < 200 || r.status >= 600 || r.status == 500) std::abort();
  if (r.content_type == "application/json") {
    const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
    if (body.is_discarded()) std::abort();
    if (r.status >= 400 && !(body.is_object() && body.contains("error") && body["error"].is_string())) std::abort();
  }
  return 0;
}
