// The live shell's pure parts: URLs and the address guard, the API's answers to every endpoint
// (good and bad requests), the request reader's refusals, the configuration's errors, the event
// log's lines, and the judge's reading of what a killed process left unlogged.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "live/clock.h"
#include "live/json_api.h"
#include "live/outbox/event_log.h"
#include "live/sms/event_log.h"
#include "live/sms/ports.h"
#include "live/webhook/api.h"
#include "live/api_keys.h"
#include "live/webhook/config.h"
#include "live/webhook/event_log.h"
#include "live/webhook/judge.h"
#include "live/http_call.h"
#include "live/http_server.h"
#include "live/webhook/ports.h"
#include "live/webhook/world.h"
#include "model/webhook/ingest.h"
#include "model/webhook/memory_store.h"
#include "model/store/sqlite_db.h"
#include "model/webhook/sqlite_store.h"
#include "sim/scenario/yaml_reader.h"

namespace relaysim::live {
namespace {

using nlohmann::json;
namespace model = relaysim::webhook;
using webhook::Api;
using webhook::parse_retry_after;
using webhook::parse_serve_config;
using webhook::ServeConfig;

TEST(Url, ReadsTheAuthorityAndTheTarget) {
  std::string problem;
  const auto u = parse_url("http://127.0.0.1:8081/serviceb/v1/urls/cx1?x=1#frag", problem);
  ASSERT_TRUE(u) << problem;
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, "8081");
  EXPECT_EQ(u->target, "/serviceb/v1/urls/cx1?x=1");
  const auto v6 = parse_url("https://[::1]/hook", problem);
  ASSERT_TRUE(v6) << problem;
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, "443");
  EXPECT_EQ(parse_url("http://example.com", problem)->target, "/");
  for (const char* bad : {"example.com/x", "ftp://example.com/", "http://user:pw@example.com/", "http://:80/",
                          "http://example.com:0/", "http://example.com:99999/", "http://[::1/", "http://exa mple.com/",
                          "http://example.com/a b"}) {
    EXPECT_FALSE(parse_url(bad, problem)) << bad;
    EXPECT_FALSE(problem.empty()) << bad;
  }
}

TEST(Url, TheWorldServesTheSimulatorsUrlsOnItsOwnAddress) {
  const std::string base = "http://127.0.0.1:8081";
  EXPECT_EQ(webhook::live_url("http://ep3.sim/hooks/cx7/v2", base), "http://127.0.0.1:8081/ep3/hooks/cx7/v2");
  EXPECT_EQ(webhook::sim_url("http://127.0.0.1:8081/ep3/hooks/cx7/v2", base), "http://ep3.sim/hooks/cx7/v2");
  // Not on the world's address: left as it is, no URL ServiceB gave.
  EXPECT_EQ(webhook::sim_url("http://127.0.0.1:9/ep3/hooks/cx7/v2", base), "http://127.0.0.1:9/ep3/hooks/cx7/v2");
  EXPECT_EQ(webhook::sim_url("https://127.0.0.1:8081/ep3/hooks/cx7/v2", base), "https://127.0.0.1:8081/ep3/hooks/cx7/v2");
  EXPECT_EQ(webhook::sim_url("http://127.0.0.1:8081/other", base), "http://127.0.0.1:8081/other");
}

// RFC 3339 UTC both ways, on days that exist only: leap years, the ends of months, a fraction.
TEST(UtcTime, ReadsWhatItWritesAndRefusesDaysThatDoNotExist) {
  const Time t = time_from_ns(1'795'659'718'123'000'000);
  EXPECT_EQ(format_utc(t), "2026-11-26T02:21:58.123Z");
  EXPECT_EQ(parse_utc(format_utc(t)), t);
  EXPECT_EQ(parse_utc("1970-01-01T00:00:00Z"), Time{});
  EXPECT_EQ(parse_utc("2000-02-29T12:00:00.5Z"), time_from_ns(951'825'600'500'000'000));
  EXPECT_EQ(parse_utc("2024-12-31T23:59:59.000000001Z"), time_from_ns(1'735'689'599'000'000'001));
  for (const char* bad : {"2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
                          "2026-01-01T24:00:00Z", "2026-01-01T00:00:00+01:00", "2026-01-01T00:00:00", "2026-01-01 00:00:00Z",
                          "1969-12-31T23:59:59Z", "2262-01-01T00:00:00Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00.1234567890Z",
                          ""}) {
    EXPECT_FALSE(parse_utc(bad)) << bad;
  }
}

TEST(PercentDecoded, DecodesEscapesAndRefusesBrokenOnes) {
  EXPECT_EQ(percent_decoded("n-1%230"), "n-1#0");
  EXPECT_EQ(percent_decoded("a+b%2Fc%2f"), "a+b/c/");
  EXPECT_EQ(percent_decoded(""), "");
  for (const char* bad : {"%", "%2", "%zz", "a%g1"}) EXPECT_FALSE(percent_decoded(bad)) << bad;
}

// E.164: a plus and 8 to 15 digits, the first not 0; written back as it was read.
TEST(Recipient, ReadsE164Only) {
  EXPECT_EQ(sms::parse_recipient("+4915112345678"), 4915112345678ULL);
  EXPECT_EQ(sms::format_recipient(4915112345678ULL), "+4915112345678");
  EXPECT_EQ(sms::parse_recipient("+12345678"), 12345678ULL);
  EXPECT_EQ(sms::parse_recipient("+999999999999999"), 999999999999999ULL);
  for (const char* bad : {"4915112345678", "+1234567", "+0123456789", "+1234567890123456", "+12345678a", "+", ""}) {
    EXPECT_FALSE(sms::parse_recipient(bad)) << bad;
  }
}

TEST(AddressGuard, TellsPublicAddressesFromTheRest) {
  EXPECT_EQ(address_kind("93.184.216.34"), AddressKind::global);
  EXPECT_EQ(address_kind("2606:2800:220:1::1"), AddressKind::global);
  EXPECT_EQ(address_kind("127.0.0.1"), AddressKind::loopback);
  EXPECT_EQ(address_kind("127.8.9.10"), AddressKind::loopback);
  EXPECT_EQ(address_kind("::1"), AddressKind::loopback);
  EXPECT_EQ(address_kind("::ffff:127.0.0.1"), AddressKind::loopback);  // IPv4-mapped
  EXPECT_EQ(address_kind("10.1.2.3"), AddressKind::private_network);
  EXPECT_EQ(address_kind("172.16.0.1"), AddressKind::private_network);
  EXPECT_EQ(address_kind("172.31.255.255"), AddressKind::private_network);
  EXPECT_EQ(address_kind("172.32.0.1"), AddressKind::global);
  EXPECT_EQ(address_kind("192.168.1.1"), AddressKind::private_network);
  EXPECT_EQ(address_kind("100.64.0.1"), AddressKind::private_network);
  EXPECT_EQ(address_kind("fd00:ec2::254"), AddressKind::private_network);  // a cloud's IPv6 metadata address
  EXPECT_EQ(address_kind("169.254.169.254"), AddressKind::link_local);     // and its IPv4 one
  EXPECT_EQ(address_kind("fe80::1"), AddressKind::link_local);
  EXPECT_EQ(address_kind("64:ff9b::a9fe:a9fe"), AddressKind::link_local);  // NAT64 of 169.254.169.254
  EXPECT_EQ(address_kind("0.0.0.0"), AddressKind::other_reserved);
  EXPECT_EQ(address_kind("::"), AddressKind::other_reserved);
  EXPECT_EQ(address_kind("224.0.0.1"), AddressKind::other_reserved);
  EXPECT_EQ(address_kind("255.255.255.255"), AddressKind::other_reserved);
  EXPECT_FALSE(address_kind("localhost"));
  AddressPolicy policy;
  EXPECT_TRUE(policy.allows(AddressKind::global));
  EXPECT_FALSE(policy.allows(AddressKind::loopback));
  policy.loopback = true;
  EXPECT_TRUE(policy.allows(AddressKind::loopback));
  EXPECT_FALSE(policy.allows(AddressKind::link_local));
  EXPECT_FALSE(policy.allows(AddressKind::other_reserved));
}

TEST(RetryAfter, ReadsDeltaSecondsAndHttpDates) {
  const Time now = time_from_ns(1'445'412'480'000'000'000);  // Wed, 21 Oct 2015 07:28:00 GMT
  EXPECT_EQ(parse_retry_after("120", now), std::chrono::seconds(120));
  EXPECT_EQ(parse_retry_after("0", now), std::chrono::seconds(0));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:30:00 GMT", now), std::chrono::seconds(120));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now), std::chrono::seconds(0));  // already past
  EXPECT_FALSE(parse_retry_after("", now));
  EXPECT_FALSE(parse_retry_after("-1", now));
  EXPECT_FALSE(parse_retry_after("soon", now));
  EXPECT_FALSE(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT trailing", now));
  EXPECT_FALSE(parse_retry_after("Wednesday, 21-Oct-15 07:28:00 GMT", now));  // the obsolete form
}

class FixedClock final : public Clock {
 public:
  Time now() const override { return time_from_ns(1'795'659'718'000'000'000); }
};

class ApiTest : public ::testing::Test {
 protected:
  FixedClock clock;
  model::Events events;
  model::PlatformConfig config = [] {
    model::PlatformConfig c;
    c.max_payload_bytes = 100;
    return c;
  }();
  model::MemoryStore store;
  model::Ingest ingest{1, config, store, clock, events};
  Db keys_db{":memory:", Durability::normal};
  ApiKeys keys{keys_db};
  std::string admin = "Bearer " + keys.create(std::nullopt, clock.now()).key;
  Api api{ingest, store, keys, clock, [] { return std::string("relaysim_up 1\n"); }};

  // `authorization`: the header as sent (empty: none); the admin's key by default.
  Response call(std::string_view method, std::string_view target, std::string_view body = {},
                std::string_view content_type = "application/json", std::optional<std::string_view> authorization = {}) {
    Incoming in;
    in.method = method;
    in.target = target;
    in.body = body;
    if (!content_type.empty()) in.headers.emplace_back("Content-Type", content_type);
    const std::string_view auth = authorization.value_or(admin);
    if (!auth.empty()) in.headers.emplace_back("Authorization", auth);
    return api.handle(in);
  }
  Response call_as(std::string_view authorization, std::string_view method, std::string_view target, std::string_view body = {}) {
    return call(method, target, body, "application/json", authorization);
  }
  static std::string error_of(const Response& r) { return json::parse(r.body).at("error").get<std::string>(); }
};

TEST_F(ApiTest, CreatesOnceAndAnswersARepeatWithTheOriginal) {
  const Response created = call("POST", "/v1/webhooks", R"({"cxid":"cx1","request_id":"r1","payload":{"a":1,"b":2}})");
  ASSERT_EQ(created.status, 202) << created.body;
  EXPECT_EQ(json::parse(created.body), json::parse(R"({"id":1,"webhook_id":"msg_1","duplicate":false})"));
  // The same JSON written another way is the same payload.
  const Response again = call("POST", "/v1/webhooks", R"({ "payload": {"b":2, "a":1}, "request_id":"r1", "cxid":"cx1" })",
                              "application/json; charset=utf-8");
  ASSERT_EQ(again.status, 202) << again.body;
  EXPECT_TRUE(json::parse(again.body)["duplicate"].get<bool>());
  const Response conflict = call("POST", "/v1/webhooks", R"({"cxid":"cx1","request_id":"r1","payload":{"a":2}})");
  EXPECT_EQ(conflict.status, 409);
  EXPECT_NE(error_of(conflict).find("another payload"), std::string::npos);
  const Response shown = call("GET", "/v1/webhooks/1");
  ASSERT_EQ(shown.status, 200);
  const json row = json::parse(shown.body);
  EXPECT_EQ(row["status"], "pending");
  EXPECT_EQ(row["payload"], json::parse(R"({"a":1,"b":2})"));
  EXPECT_EQ(row["created_at"], "2026-11-26T02:21:58.000Z");
  EXPECT_TRUE(row["attempts"].empty());
}

TEST_F(ApiTest, RefusesBadCreatesWithAReason) {
  const struct {
    const char* body;
    const char* content_type;
    int status;
    const char* says;
  } cases[] = {
      {R"({"cxid":"cx1","request_id":"r1","payload":1})", "text/plain", 415, "Content-Type: application/json"},
      {R"({"cxid":"cx1","request_id":"r1","payload":1})", "", 415, "Content-Type"},
      {"{bad", "application/json", 400, "not JSON"},
      {"[1,2]", "application/json", 400, "JSON object"},
      {R"({"cxid":"cx1","payload":1})", "application/json", 400, "missing field 'request_id'"},
      {R"({"cxid":"cx1","request_id":"r1"})", "application/json", 400, "missing field 'payload'"},
      {R"({"cxid":7,"request_id":"r1","payload":1})", "application/json", 400, "'cxid' must be a string"},
      {R"({"cxid":"cx1","request_id":"r1","payload":1,"extra":1})", "application/json", 400, "unknown field 'extra'"},
      {R"({"cxid":"","request_id":"r1","payload":1})", "application/json", 400, "cxid is empty"},
      {R"({"cxid":"cx1","request_id":"r1","payload":"this payload is longer than the hundred bytes this test's platform takes: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})",
       "application/json", 400, "payload is too large"},
  };
  for (const auto& c : cases) {
    const Response r = call("POST", "/v1/webhooks", c.body, c.content_type);
    EXPECT_EQ(r.status, c.status) << c.body;
    EXPECT_NE(error_of(r).find(c.says), std::string::npos) << error_of(r);
  }
  // What the parser would read without complaint but change: a name twice (the last would win),
  // an integer beyond 64 bits (it would lose digits, and two different ones would be equal).
  for (const auto& [body, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"cxid":"a","cxid":"b","request_id":"r1","payload":1})", "\"cxid\" is given twice"},
           {R"({"cxid":"cx1","request_id":"r1","payload":{"a":1,"a":2}})", "\"a\" is given twice"},
           {R"({"cxid":"cx1","request_id":"r1","payload":123456789012345678901234567890})", "does not fit in 64 bits"},
           {R"({"cxid":"cx1","request_id":"r1","payload":[-99999999999999999999]})", "does not fit in 64 bits"}}) {
    const Response r = call("POST", "/v1/webhooks", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_NE(error_of(r).find(says), std::string::npos) << error_of(r);
  }
  // Names may repeat in different objects, and numbers that fit are kept as sent.
  EXPECT_EQ(call("POST", "/v1/webhooks", R"({"cxid":"cx1","request_id":"n1","payload":{"a":{"a":18446744073709551615},"b":-9223372036854775808,"c":1.5e300}})").status, 202);
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  const Response r = call("POST", "/v1/webhooks", R"({"cxid":"cx1","request_id":"r1","payload":)" + deep + "}");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(error_of(r).find("deeper"), std::string::npos);
  EXPECT_EQ(store.counts().by_status[0], 1u);  // only the last good one was stored
}

TEST_F(ApiTest, EveryOtherEndpointRefusesWhatItCannotDo) {
  ASSERT_EQ(call("POST", "/v1/webhooks", R"({"cxid":"cx1","request_id":"r1","payload":{}})").status, 202);
  EXPECT_EQ(call("GET", "/v1/webhooks/2").status, 404);
  EXPECT_EQ(call("GET", "/v1/webhooks/abc").status, 404);
  EXPECT_EQ(call("GET", "/v1/webhooks/0").status, 404);
  EXPECT_EQ(call("GET", "/v1/webhooks/99999999999999999999999").status, 404);
  const Response wrong = call("DELETE", "/v1/webhooks/1");
  EXPECT_EQ(wrong.status, 405);
  ASSERT_EQ(wrong.headers.size(), 1u);
  EXPECT_EQ(wrong.headers[0], (std::pair<std::string, std::string>{"Allow", "GET"}));
  EXPECT_EQ(call("GET", "/v1/webhooks").status, 405);
  EXPECT_EQ(call("POST", "/v1/webhooks?x=1", "{}").status, 400);
  EXPECT_EQ(call("GET", "/v1/webhooks/1/replay").status, 405);
  EXPECT_EQ(call("POST", "/v1/webhooks/9/replay").status, 404);
  const Response open = call("POST", "/v1/webhooks/1/replay");
  EXPECT_EQ(open.status, 409);
  EXPECT_NE(error_of(open).find("not finished"), std::string::npos);
  EXPECT_EQ(call("GET", "/v1/dead-letters").status, 200);
  EXPECT_EQ(call("GET", "/v1/dead-letters?after=0&limit=1000").status, 200);
  for (const char* q : {"?limit=0", "?limit=1001", "?after=x", "?sort=id", "?after"}) {
    EXPECT_EQ(call("GET", std::string("/v1/dead-letters") + q).status, 400) << q;
  }
  EXPECT_EQ(call("POST", "/v1/dead-letters").status, 405);
  EXPECT_EQ(call("GET", "/nowhere").status, 404);
  EXPECT_EQ(call("POST", "/healthz").status, 405);
  EXPECT_EQ(call("POST", "/metrics").status, 405);
  EXPECT_EQ(call("GET", "/healthz").status, 200);
  const Response metrics = call("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.body, "relaysim_up 1\n");
  EXPECT_EQ(metrics.content_type.substr(0, 10), "text/plain");
  api.set_draining(true);
  EXPECT_EQ(call("GET", "/healthz").status, 503);
  EXPECT_EQ(call("POST", "/v1/webhooks", R"({"cxid":"cx1","request_id":"r2","payload":{}})").status, 503);
}

TEST_F(ApiTest, ListsDeadLettersAPageAtATimeAndReplaysThem) {
  EXPECT_EQ(json::parse(call("GET", "/v1/dead-letters").body), json::parse(R"({"dead_letters":[]})"));
  for (int i = 0; i < 3; ++i) {
    const std::string body = R"({"cxid":"cx1","request_id":"r)" + std::to_string(i) + R"(","payload":{}})";
    ASSERT_EQ(call("POST", "/v1/webhooks", body).status, 202);
    model::RequestRow row;
    ASSERT_TRUE(store.claim_due(clock.now(), 1, std::chrono::minutes(2), row));
    const model::Completion dead{nullptr, model::Status::dead_lettered, model::Reason::deadline, clock.now(), {}, {}, {}};
    ASSERT_TRUE(store.complete(row.id, row.claim_token, dead));
  }
  const json first = json::parse(call("GET", "/v1/dead-letters?limit=2").body);
  ASSERT_EQ(first["dead_letters"].size(), 2u);
  EXPECT_EQ(first["dead_letters"][0]["id"], 1);
  EXPECT_EQ(first["next"], "/v1/dead-letters?after=2&limit=2");
  const json rest = json::parse(call("GET", first["next"].get<std::string>()).body);
  ASSERT_EQ(rest["dead_letters"].size(), 1u);
  EXPECT_EQ(rest["dead_letters"][0]["id"], 3);
  EXPECT_FALSE(rest.contains("next"));
  EXPECT_EQ(call("POST", "/v1/webhooks/2/replay").status, 202);
  EXPECT_EQ(json::parse(call("GET", "/v1/webhooks/2").body)["status"], "pending");
  EXPECT_EQ(json::parse(call("GET", "/v1/webhooks/2").body)["replays"], 1);
  EXPECT_EQ(json::parse(call("GET", "/v1/dead-letters").body)["dead_letters"].size(), 2u);
}

// Every call but /healthz takes a key; a tenant's key acts on its own tenant's requests only, and
// an admin's on everything, keys included; a revoked key is no key. No answer repeats the key.
TEST_F(ApiTest, EveryCallButHealthzTakesAKeyAndATenantsKeyActsForItsOwnTenantOnly) {
  ASSERT_EQ(call("POST", "/v1/webhooks", R"({"cxid":"cx2","request_id":"r1","payload":{}})").status, 202);  // id 1
  const json made = json::parse(call("POST", "/v1/keys", R"({"tenant":"cx1"})").body);
  const std::string cx1 = "Bearer " + made["key"].get<std::string>();
  EXPECT_EQ(made["tenant"], "cx1");
  std::vector<Response> answers;
  const auto refused = [&](std::string_view auth, std::string_view method, std::string_view target, int status,
                           std::string_view body = {}) {
    const Response r = call_as(auth, method, target, body);
    answers.push_back(r);
    EXPECT_EQ(r.status, status) << method << " " << target << " with '" << auth << "': " << r.body;
  };
  // No key, a key that is not one, another scheme, a key with a wrong secret: 401, with the scheme to use.
  const std::string wrong_secret = cx1.substr(0, cx1.size() - 1) + (cx1.back() == '0' ? "1" : "0");
  for (const std::string& auth : {std::string(), std::string("Bearer nope"), std::string("Basic YTpi"), wrong_secret}) {
    refused(auth, "GET", "/v1/webhooks/1", 401);
    ASSERT_EQ(answers.back().headers.size(), 1u);
    EXPECT_EQ(answers.back().headers[0].first, "WWW-Authenticate");
  }
  refused("", "POST", "/v1/webhooks", 401, R"({"cxid":"cx1","request_id":"r2","payload":{}})");
  refused("", "GET", "/metrics", 401);
  EXPECT_EQ(call_as("", "GET", "/healthz").status, 200);
  // The tenant's key: its own requests, nothing of another's, no keys, no metrics.
  EXPECT_EQ(call_as(cx1, "POST", "/v1/webhooks", R"({"cxid":"cx1","request_id":"r2","payload":{}})").status, 202);  // id 2
  refused(cx1, "POST", "/v1/webhooks", 403, R"({"cxid":"cx2","request_id":"r3","payload":{}})");
  EXPECT_EQ(call_as(cx1, "GET", "/v1/webhooks/2").status, 200);
  refused(cx1, "GET", "/v1/webhooks/1", 403);
  refused(cx1, "POST", "/v1/webhooks/1/replay", 403);
  refused(cx1, "GET", "/v1/webhooks/9", 404);
  refused(cx1, "GET", "/metrics", 403);
  refused(cx1, "GET", "/v1/keys", 403);
  refused(cx1, "POST", "/v1/keys", 403, R"({"admin":true})");
  // Dead letters: a tenant lists its own.
  for (const model::RequestId id : {1, 2}) {
    model::RequestRow row;
    ASSERT_TRUE(store.claim_due(clock.now(), 1, std::chrono::minutes(2), row));
    const model::Completion dead{nullptr, model::Status::dead_lettered, model::Reason::deadline, clock.now(), {}, {}, {}};
    ASSERT_TRUE(store.complete(row.id, row.claim_token, dead)) << id;
  }
  const json own = json::parse(call_as(cx1, "GET", "/v1/dead-letters?limit=1").body);
  ASSERT_EQ(own["dead_letters"].size(), 1u);
  EXPECT_EQ(own["dead_letters"][0]["id"], 2);
  EXPECT_EQ(json::parse(call("GET", "/v1/dead-letters").body)["dead_letters"].size(), 2u);
  EXPECT_EQ(call_as(cx1, "POST", "/v1/webhooks/2/replay").status, 202);
  // The admin revokes the tenant's key: it is no key any more.
  const json listed = json::parse(call("GET", "/v1/keys").body);
  ASSERT_EQ(listed["keys"].size(), 2u);
  EXPECT_EQ(listed.dump().find(cx1.substr(cx1.rfind('_') + 1)), std::string::npos) << "a listing never shows a key";
  EXPECT_EQ(call("DELETE", "/v1/keys/" + std::to_string(made["id"].get<int>())).status, 200);
  EXPECT_EQ(call("DELETE", "/v1/keys/" + std::to_string(made["id"].get<int>())).status, 404);
  refused(cx1, "GET", "/v1/webhooks/2", 401);
  EXPECT_TRUE(json::parse(call("GET", "/v1/keys").body)["keys"][1].contains("revoked_at"));
  refused(admin, "POST", "/v1/keys", 400, R"({"tenant":""})");
  refused(admin, "POST", "/v1/keys", 400, R"({"tenant":" cx1"})");
  refused(admin, "POST", "/v1/keys", 400, R"({"tenant":"cx\n1"})");
  refused(admin, "POST", "/v1/keys", 400, R"({"tenant":"a","tenant":"b"})");
  refused(admin, "PUT", "/v1/keys", 405);
  // One spelling per key: a leading zero in its id is not the key.
  const std::string zero = admin.substr(0, 11) + "0" + admin.substr(11);
  ASSERT_EQ(zero.rfind("Bearer rsk_0", 0), 0u) << zero;
  refused(zero, "GET", "/v1/keys", 401);
  // The header twice: which counts would depend on who reads it.
  Incoming twice;
  twice.method = "GET";
  twice.target = "/v1/keys";
  twice.headers = {{"Authorization", admin}, {"authorization", "Bearer nope"}};
  EXPECT_EQ(api.handle(twice).status, 400);
  // A new key is not cached; the last admin key cannot be revoked through the API.
  const Response fresh = call("POST", "/v1/keys", R"({"admin":true})");
  ASSERT_EQ(fresh.status, 201);
  EXPECT_NE(std::find(fresh.headers.begin(), fresh.headers.end(), std::pair<std::string, std::string>{"Cache-Control", "no-store"}),
            fresh.headers.end());
  const int second = json::parse(fresh.body)["id"].get<int>();
  EXPECT_EQ(call("DELETE", "/v1/keys/1").status, 200);
  EXPECT_EQ(call_as("Bearer " + json::parse(fresh.body)["key"].get<std::string>(), "DELETE", "/v1/keys/" + std::to_string(second)).status, 409);
  const std::string secret = cx1.substr(cx1.rfind('_') + 1);
  for (const Response& r : answers) {
    EXPECT_EQ(r.body.find(secret.substr(0, 16)), std::string::npos) << r.body;
  }
}

// An attempt that sent nothing says why, in the API's record and in serve's log; the tenant's URL
// reaches the log as data (escaped), never as lines of its own.
TEST_F(ApiTest, AnAttemptThatSentNothingSaysWhy) {
  ASSERT_EQ(call("POST", "/v1/webhooks", R"({"cxid":"cx1","request_id":"r1","payload":{}})").status, 202);
  model::RequestRow row;
  ASSERT_TRUE(store.claim_due(clock.now(), 1, std::chrono::minutes(2), row));
  model::AttemptRow attempt{1, 1, 1, row.claim_token, clock.now(), clock.now(), "http://10.0.0.7/\nforged line", 1,
                            NetError::forbidden_address, 0, "10.0.0.7 is a private-network address, which allow_addresses does not admit"};
  ASSERT_TRUE(store.complete(1, row.claim_token, {&attempt, model::Status::failed, model::Reason::forbidden_address, clock.now(), {}, {}, {}}));
  const json shown = json::parse(call("GET", "/v1/webhooks/1").body);
  EXPECT_EQ(shown["reason"], "forbidden_address");
  EXPECT_EQ(shown["attempts"][0]["error"], "forbidden_address");
  EXPECT_EQ(shown["attempts"][0]["detail"], attempt.detail);
  const HttpResult result{NetError::forbidden_address, 0, Duration{-1}, attempt.detail};
  const std::string line = webhook::not_sent_line(model::AttemptFinished{1, attempt, result, model::Verdict::terminal});
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.rfind("relaysim serve: not sent: ", 0), 0u) << line;
  const json logged = json::parse(line.substr(line.find('{')));
  EXPECT_EQ(logged["url"], attempt.resolved_url);
  EXPECT_EQ(logged["error"], "forbidden_address");
  EXPECT_EQ(logged["detail"], attempt.detail);
  EXPECT_EQ(logged["request"], 1);
  // An attempt that was sent says nothing more.
  EXPECT_EQ(webhook::not_sent_line(model::AttemptFinished{1, attempt, HttpResult{NetError::timeout, 0, Duration{-1}, {}}, model::Verdict::retry}), "");
}

// A delivery held for its claim's group commit goes out only if the commit comes before the
// claim's lease ends (send_by). One whose commit comes later (a stalled disk) is answered
// too_late and never reaches the network: another pod may hold the request by then.
TEST(DeliveryClient, AHeldDeliveryWhoseLeaseEndedBeforeItsCommitIsNotSent) {
  class MovingClock final : public Clock {
   public:
    Time now() const override { return t; }
    Time t = time_from_ns(1'795'659'718'000'000'000);
  } clock;
  boost::asio::io_context io;
  AddressPolicy loopback;
  loopback.loopback = true;
  HttpCaller caller(io, loopback);
  webhook::DeliveryClient client(caller, clock, std::nullopt);
  const std::string path = testing::TempDir() + "held-delivery.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  Db db(path, Durability::full);
  db.exec("CREATE TABLE t (v INTEGER)");
  db.group_commits([] {});
  client.send_after_commit(db);
  const auto write = [&db] {
    Db::Statement insert(db, "INSERT INTO t (v) VALUES (1)");
    insert.run();
    db.wrote();
  };
  std::vector<NetError> answers;
  const auto send = [&] {
    // Port 1 on loopback: nothing listens, so a delivery that goes out is refused there.
    client.send(HttpRequest{"http://127.0.0.1:1/hook", {}, "{}", "cx1", clock.now() + std::chrono::seconds(30)},
                std::chrono::seconds(5), [&answers](const HttpResult& r) { answers.push_back(r.error); });
  };

  write();
  ASSERT_TRUE(db.group_open());
  send();
  EXPECT_TRUE(answers.empty()) << "held until its group commits";
  db.commit_group();
  io.run();
  io.restart();
  EXPECT_EQ(answers, std::vector<NetError>{NetError::connect_error}) << "committed in time: sent";

  answers.clear();
  write();
  send();
  clock.t += std::chrono::seconds(30);  // the disk stalls past the lease's end
  db.commit_group();
  EXPECT_EQ(answers, std::vector<NetError>{NetError::too_late}) << "answered when its group commits";
  EXPECT_EQ(io.run(), 0u) << "nothing went out";
  EXPECT_EQ(answers.size(), 1u);
}

// Both stores keep why an attempt sent nothing; a database from before the column gains it.
TEST(AttemptDetail, BothStoresKeepIt) {
  const std::string path = testing::TempDir() + "attempt-detail.db";
  std::filesystem::remove(path);
  {
    // The attempts table as it was before `detail`.
    Db db(path, Durability::full);
    db.exec("CREATE TABLE attempts (id INTEGER PRIMARY KEY, request INTEGER NOT NULL, number INTEGER NOT NULL,"
            " pod INTEGER NOT NULL, claim_token INTEGER NOT NULL, started_at INTEGER NOT NULL, finished_at INTEGER NOT NULL,"
            " resolved_url TEXT NOT NULL, serviceb_version INTEGER NOT NULL, net_error INTEGER NOT NULL,"
            " http_status INTEGER NOT NULL, UNIQUE (request, number))");
  }
  model::SqliteStore sqlite(path);
  model::MemoryStore memory;
  for (model::Store* store : {static_cast<model::Store*>(&sqlite), static_cast<model::Store*>(&memory)}) {
    const Time t = time_from_ns(1'795'000'000'000'000'000);
    ASSERT_EQ(store->create({"cx1", "r1", "{}", t, t + std::chrono::hours(1)}).id, 1u);
    model::RequestRow row;
    ASSERT_TRUE(store->claim_due(t, 1, std::chrono::minutes(1), row));
    model::AttemptRow a{1, 1, 1, row.claim_token, t, t, "ftp://x/", 0, NetError::bad_url, 0, "the scheme 'ftp' is not http or https"};
    ASSERT_TRUE(store->complete(1, row.claim_token, {&a, model::Status::failed, model::Reason::bad_url, t, {}, {}, {}}));
    const std::vector<model::AttemptRow> back = store->attempts(1);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].error, NetError::bad_url);
    EXPECT_EQ(back[0].detail, a.detail);
  }
}

TEST(RequestReader, RefusesWhatIsNotAReadableRequest) {
  ServerLimits limits;
  limits.max_body = 10;
  limits.max_header = 200;
  const auto echo = [](const Incoming& in) {
    Response r;
    r.body = std::string(in.method) + " " + std::string(in.target) + " " + std::string(in.header("x-a")) + " " + std::string(in.body);
    return r;
  };
  EXPECT_EQ(answer_bytes("POST /x HTTP/1.1\r\nHost: h\r\nX-A: v\r\nContent-Length: 2\r\n\r\nhi", limits, echo).body, "POST /x v hi");
  EXPECT_EQ(answer_bytes("POST /x HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world", limits, echo).status, 413);
  EXPECT_EQ(answer_bytes("GET /x HTTP/1.1\r\nX-Long: " + std::string(300, 'a') + "\r\n\r\n", limits, echo).status, 431);
  EXPECT_EQ(answer_bytes("GARBAGE\r\n\r\n", limits, echo).status, 400);
  EXPECT_EQ(answer_bytes("GET /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", limits, echo).status, 400);
  EXPECT_EQ(answer_bytes("", limits, echo).status, 400);
  EXPECT_EQ(answer_bytes("HEAD /x HTTP/1.1\r\n\r\n", limits, echo).body, "HEAD /x  ");
}

// Beast bounds the headers and the body, but neither a chunked body's chunk extensions nor its
// trailers: a trailer section of tens of megabytes was once read whole. Both are held to the
// header limit, with a reason.
TEST(RequestReader, BoundsChunkExtensionsAndTrailers) {
  ServerLimits limits;
  limits.max_body = 100;
  limits.max_header = 200;
  const auto echo = [](const Incoming& in) {
    Response r;
    r.body = std::string(in.header("x-t")) + " " + std::string(in.body);
    return r;
  };
  const std::string head = "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  const auto error_of = [](const Response& r) { return json::parse(r.body).at("error").get<std::string>(); };
  // Within the limits: a chunk extension and a trailer are read (a trailer is a header field).
  EXPECT_EQ(answer_bytes(head + "2;a=b\r\nhi\r\n3\r\n yo\r\n0\r\nX-T: t\r\n\r\n", limits, echo).body, "t hi yo");
  // A trailer section longer than the header limit, in one field or in many.
  for (const std::string& trailers : {"X-T: " + std::string(300, 'a') + "\r\n", [] {
         std::string many;
         for (int i = 0; i < 40; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
         return many;
       }()}) {
    const Response r = answer_bytes(head + "2\r\nhi\r\n0\r\n" + trailers + "\r\n", limits, echo);
    EXPECT_EQ(r.status, 431) << r.body;
    EXPECT_NE(error_of(r).find("trailers are longer than 200 bytes"), std::string::npos) << r.body;
  }
  // The trailers never end: refused once the limit is passed, not read on.
  EXPECT_EQ(answer_bytes(head + "0\r\n" + std::string(1 << 20, 'a'), limits, echo).status, 431);
  // One chunk's size line longer than the limit.
  const Response line = answer_bytes(head + "1;" + std::string(300, 'e') + "\r\nx\r\n0\r\n\r\n", limits, echo);
  EXPECT_EQ(line.status, 431);
  EXPECT_NE(error_of(line).find("a chunk's size line"), std::string::npos) << line.body;
  // Short extensions on many small chunks: within the body limit, over the limit in all.
  std::string chunks;
  for (int i = 0; i < 30; ++i) chunks += "1;e=" + std::string(10, 'e') + "\r\nx\r\n";
  const Response many = answer_bytes(head + chunks + "0\r\n\r\n", limits, echo);
  EXPECT_EQ(many.status, 431);
  EXPECT_NE(error_of(many).find("chunk extensions are longer than 200 bytes in all"), std::string::npos) << many.body;
  // The body limit holds for chunks as before.
  EXPECT_EQ(answer_bytes(head + "65\r\n" + std::string(101, 'x') + "\r\n0\r\n\r\n", limits, echo).status, 413);
}

TEST(ServeConfig, ReadsTheFileAndTheSamePlatformKeysAsAScenario) {
  const ServeConfig c = parse_serve_config(R"(serve:
  listen: 127.0.0.1:0
  database: x.db
  durability: normal
  allow_addresses: [loopback, private]
platform:
  concurrency_per_pod: 8
  lease: 40s
)",
                                           "serve.yaml");
  EXPECT_EQ(c.listen, "127.0.0.1:0");
  EXPECT_EQ(c.durability, Durability::normal);
  EXPECT_EQ(c.platform.concurrency_per_pod, 8u);
  EXPECT_EQ(c.platform.lease, std::chrono::seconds(40));
  EXPECT_TRUE(c.address_policy().loopback);
  EXPECT_TRUE(c.address_policy().private_network);
  EXPECT_FALSE(c.address_policy().link_local);
}

TEST(ServeConfig, ATypoIsNamedWithItsPlace) {
  const auto error_of = [](const char* text) {
    try {
      parse_serve_config(text, "serve.yaml");
    } catch (const sim::ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("platform:\n  retyr: {}\n").find("serve.yaml:2:3: platform.retyr: unknown key; did you mean 'retry'?"), 0u);
  EXPECT_NE(error_of("serve:\n  lisen: 1\n").find("serve.yaml:2:3: serve.lisen: unknown key; did you mean 'listen'?"),
            std::string::npos);
  EXPECT_NE(error_of("serve:\n  listen: nowhere\n").find("serve.listen"), std::string::npos);
  EXPECT_NE(error_of("serve:\n  serviceb: ftp://x\n").find("serve.serviceb"), std::string::npos);
  EXPECT_NE(error_of("serve:\n  signing_secret: whsec_short\n").find("not a signing key"), std::string::npos);
  EXPECT_NE(error_of("serve:\n  allow_addresses: [everything]\n").find("expected one of loopback, private, link_local"),
            std::string::npos);
  EXPECT_NE(error_of("platform:\n  lease: 1s\n").find("platform.lease"), std::string::npos);
}

// The event log: every kind writes a line that reads back as the same record; a line that is
// not a record is refused with the field at fault named.
TEST(EventLog, EveryKindReadsBackAsWritten) {
  using webhook::LogKind;
  using webhook::LogRecord;
  for (int k = 0; k < webhook::kLogKindCount; ++k) {
    LogRecord r;
    r.kind = static_cast<LogKind>(k);
    r.pod = 2;
    r.at = time_from_ns(1'795'659'718'123'456'789);
    r.id = 41;
    r.cxid = "cx7";
    r.request_id = "order-1";
    r.url = "http://127.0.0.1:8081/ep7/hooks/cx7/v2";
    r.outcome = model::CreateOutcome::conflict;
    r.deadline_at = r.at + std::chrono::hours(24);
    r.created_at = r.at;
    r.due_at = r.at + std::chrono::seconds(3);
    r.sent_at = r.at - std::chrono::milliseconds(2);
    r.token = 9;
    r.number = 3;
    r.version = 2;
    r.error = NetError::timeout;
    r.http_status = 429;
    r.retry_after = std::chrono::seconds(5);
    r.status = model::Status::dead_lettered;
    r.reason = model::Reason::deadline;
    r.applied = true;
    r.failed = true;
    r.replay = model::ReplayOutcome::not_terminal;
    r.lookup = model::LookupStatus::not_found;
    r.from = BreakerState::half_open;
    r.to = BreakerState::open;
    const std::string line = webhook::write_record(r);
    std::string problem;
    const std::optional<LogRecord> back = webhook::read_record(line, problem);
    ASSERT_TRUE(back.has_value()) << line << ": " << problem;
    EXPECT_EQ(back->kind, r.kind);
    EXPECT_EQ(back->at, r.at);
    EXPECT_EQ(webhook::write_record(*back), line);
  }
}

TEST(EventLog, RefusesWhatIsNotARecordNamingTheField) {
  auto problem_of = [](std::string_view line) {
    std::string problem;
    EXPECT_FALSE(webhook::read_record(line, problem).has_value()) << line;
    return problem;
  };
  EXPECT_EQ(problem_of("not json"), "not a JSON object");
  EXPECT_NE(problem_of(R"({"event":"teleported","pod":1,"at":5})").find("no known 'event'"), std::string::npos);
  EXPECT_EQ(problem_of(R"({"event":"claimed","pod":1,"at":5,"id":3,"token":1})"), "claimed: no field 'deadline_at'");
  EXPECT_EQ(problem_of(R"({"event":"breaker","pod":1,"at":5,"from":"closed","to":"ajar"})"),
            "breaker: field 'to' is not a valid value: \"ajar\"");
  EXPECT_EQ(problem_of(R"({"event":"started","pod":-1,"at":5})"), "started: field 'pod' is not a valid value: -1");
  EXPECT_EQ(problem_of(R"({"event":"started","pod":4294967296,"at":5})"),
            "started: field 'pod' is not a valid value: 4294967296");
  EXPECT_EQ(problem_of(R"({"event":"started","pod":1,"at":1.5})"), "started: field 'at' is not a valid value: 1.5");
}

// The SMS gateway's event log: every kind, with a bulk accept's messages, writes a line that reads
// back as the same record; a line that is not one is refused with the field at fault named.
TEST(SmsEventLog, EveryKindReadsBackAsWritten) {
  namespace ls = relaysim::live::sms;
  for (int k = 0; k < ls::kLogKindNames.count; ++k) {
    ls::LogRecord r;
    r.kind = static_cast<ls::LogKind>(k);
    r.pod = 2;
    r.at = time_from_ns(1'795'659'718'123'456'789);
    r.id = 41;
    r.business = 3;
    r.epoch = 2;
    r.period = 693;
    r.path = relaysim::sms::SendPath::probe;
    r.outcome = relaysim::sms::AcceptOutcome::quota_exhausted;
    r.messages = {{"otp", "login-1#0", r.at}, {"otp", "login-1#1", r.at + std::chrono::hours(1)}};
    r.token = 9;
    r.prior = relaysim::sms::Status::unknown;
    r.provider = 1;
    r.provider_accepted = true;
    r.message_kind = relaysim::sms::Kind::bulk;
    r.recipient = 4915112345678;
    r.member = 65537;
    r.via = LimitVia::local;
    r.admitted = true;
    r.attempt = 3;
    r.submit = relaysim::sms::SubmitClass::throttled;
    r.latency = std::chrono::milliseconds(7);
    r.step = relaysim::sms::Step::retry;
    r.due_at = r.at + std::chrono::seconds(2);
    r.status = relaysim::sms::Status::failed;
    r.reason = relaysim::sms::Reason::exhausted;
    r.attempts = 2;
    r.applied = true;
    r.rule = relaysim::sms::AsyncRule::error_rate;
    r.entered = true;
    r.delivered = true;
    r.receipt = relaysim::sms::ReceiptOutcome::already_final;
    const std::string line = ls::write_record(r);
    std::string problem;
    const std::optional<ls::LogRecord> back = ls::read_record(line, problem);
    ASSERT_TRUE(back.has_value()) << line << ": " << problem;
    EXPECT_EQ(back->kind, r.kind);
    EXPECT_EQ(back->at, r.at);
    EXPECT_EQ(ls::write_record(*back), line);
  }
  auto problem_of = [](std::string_view line) {
    std::string problem;
    EXPECT_FALSE(ls::read_record(line, problem).has_value()) << line;
    return problem;
  };
  EXPECT_NE(problem_of(R"({"event":"ingested","pod":1,"at":5})").find("no known 'event' (one of started, stopped, accepted"),
            std::string::npos);
  EXPECT_EQ(problem_of(R"({"event":"mode","pod":1,"at":5,"logged":5,"rule":"whim","entered":true})"),
            "mode: field 'rule' is not a valid value: \"whim\"");
  EXPECT_EQ(problem_of(R"({"event":"accepted","pod":1,"at":5,"logged":5,"id":1,"business":1,"epoch":1,"period":0,"path":"sync",)"
                       R"("outcome":"accepted","status":"pending","messages":[7]})"),
            "accepted: field 'messages' is not a valid value: [7]");
  EXPECT_EQ(problem_of(R"({"event":"accepted","pod":1,"at":5,"logged":5,"id":1,"business":1,"epoch":1,"period":0,"path":"sync",)"
                       R"("outcome":"accepted","status":"pending","messages":[{"biz_type":"otp","send_at":5}]})"),
            "accepted: field 'messages', item 0: no field 'biz_id'");
}

// The outbox relay's event log: every kind, with its rows and records, writes a line that reads
// back as the same record; a line that is not one is refused with the field at fault named.
TEST(OutboxEventLog, EveryKindReadsBackAsWritten) {
  namespace lo = relaysim::live::outbox;
  namespace mo = relaysim::outbox;
  mo::Message row;
  row.id = 12;
  row.type = 1;
  row.key = 40007;
  row.bucket = 3;
  row.version = 5;
  row.status = mo::Status::processing;
  row.reason = mo::Reason::exhausted;
  row.attempt = 2;
  row.created_at = time_from_ns(1'795'659'718'000'000'000);
  row.next_attempt = row.created_at + std::chrono::seconds(30);
  row.fence = 9;
  const mo::Record record{1, 12, 2, 1, 40007, 5, 9, row.created_at};
  for (int k = 0; k < lo::kLogKindNames.count; ++k) {
    lo::LogRecord r;
    r.kind = static_cast<lo::LogKind>(k);
    r.pod = 2;
    r.at = time_from_ns(1'795'659'718'123'456'789);
    r.logged = r.at + std::chrono::microseconds(40);
    r.shard = 1;
    r.key = 40007;
    r.version = 5;
    r.first = 12;
    r.types = {1, 0};
    r.committed = true;
    r.token = 9;
    r.leading = true;
    r.until = r.at + std::chrono::seconds(20);
    r.write = mo::LeaderWrite::rescue;
    r.applied = true;
    r.messages = {lo::LogMessage{row}};
    r.producer = 1'000'003;
    r.partition = 7;
    r.sequence = 44;
    r.records = {lo::LogEntry{record}};
    r.produced = mo::Produced::timeout;
    r.attempt = 1;
    r.offset = 1234;
    r.same = true;
    r.relock = mo::Relock::not_yet;
    r.handled = mo::Handled::rejected;
    r.started = r.at - std::chrono::milliseconds(11);
    r.status = mo::Status::pending;
    r.reason = mo::Reason::rejected;
    r.next_attempt = r.at + std::chrono::seconds(4);
    r.generation = 6;
    r.count = 500;
    r.evicted = true;
    r.failure = StoreFailure::io;
    r.lease = "outbox/shard/1";
    r.holder = 2;
    r.renewed = true;
    r.member = 17;
    const std::string line = lo::write_record(r);
    std::string problem;
    const std::optional<lo::LogRecord> back = lo::read_record(line, problem);
    ASSERT_TRUE(back.has_value()) << line << ": " << problem;
    EXPECT_EQ(back->kind, r.kind);
    EXPECT_EQ(back->logged, r.logged);
    EXPECT_EQ(lo::write_record(*back), line);
    if (r.kind == lo::LogKind::relocked) {
      EXPECT_EQ(back->messages.at(0).row, row);
      EXPECT_EQ(back->records.at(0).record, record);
    }
  }
  auto problem_of = [](std::string_view line) {
    std::string problem;
    EXPECT_FALSE(lo::read_record(line, problem).has_value()) << line;
    return problem;
  };
  EXPECT_NE(problem_of(R"({"event":"claimed","pod":1,"at":5})").find("no known 'event' (one of started, stopped, operation"),
            std::string::npos);
  EXPECT_EQ(problem_of(R"({"event":"operation","pod":1,"at":5,"logged":5,"shard":0,"key":1,"version":1,"first":1,)"
                       R"("types":["a"],"committed":true})"),
            "operation: field 'types' is not a valid value: [\"a\"]");
  EXPECT_EQ(problem_of(R"({"event":"operation","pod":1,"at":5,"logged":5,"shard":0,"key":1,"version":1,"first":1,)"
                       R"("types":[],"committed":true})"),
            "operation: an operation that wrote no message");
  EXPECT_EQ(problem_of(R"({"event":"handled","pod":1,"at":5,"logged":5,"records":[],"handled":"done","started":4})"),
            "handled: names 0 records, not one");
  EXPECT_EQ(problem_of(R"({"event":"store_failed","pod":1,"at":5,"logged":5,"shard":0,"failure":"gone"})"),
            "store_failed: field 'failure' is not a valid value: \"gone\"");
}

// The SMS log's checker: a cap's place, a submit or a completion under a claim the process does
// not hold, a claim token or a message id handed out twice, a record outside a life, a time
// before its start.
TEST(SmsEventLog, TheCheckerRefusesWhatNoRealProcessCouldHaveLogged) {
  namespace ls = relaysim::live::sms;
  using ls::LogKind;
  const Time t0 = time_from_ns(1'795'000'000'000'000'000);
  auto rec = [&](LogKind kind, int ms, relaysim::sms::MessageId id = 0, relaysim::sms::ClaimToken token = 0) {
    ls::LogRecord r;
    r.kind = kind;
    r.pod = 1;
    r.at = t0 + std::chrono::milliseconds(ms);
    r.id = id;
    r.token = token;
    if (kind == LogKind::accepted) r.messages = {{"otp", "a", r.at}};
    return r;
  };
  const auto first_problem = [](const std::vector<std::vector<ls::LogRecord>>& logs) {
    ls::LogChecker checker;
    for (std::size_t l = 0; l < logs.size(); ++l) {
      checker.next_log();
      for (std::size_t i = 0; i < logs[l].size(); ++i) {
        const std::string where = "log" + std::to_string(l + 1) + ":" + std::to_string(i + 1);
        if (std::string p = checker.check(logs[l][i], where); !p.empty()) return where + ": " + p;
      }
    }
    return std::string();
  };
  const std::vector<ls::LogRecord> real = {rec(LogKind::started, 0), rec(LogKind::accepted, 1, 1),
                                           rec(LogKind::claimed, 1, 1, 7), rec(LogKind::cap, 2, 1, 7),
                                           rec(LogKind::submit_started, 2, 1, 7),
                                           rec(LogKind::submit_finished, 5, 1, 7), rec(LogKind::completed, 6, 1, 7),
                                           rec(LogKind::stopped, 9)};
  EXPECT_EQ(first_problem({real}), "");
  // A killed process's claims are not the next life's.
  std::vector<ls::LogRecord> killed = {rec(LogKind::started, 0), rec(LogKind::claimed, 1, 1, 7), rec(LogKind::started, 3),
                                       rec(LogKind::completed, 4, 1, 7)};
  EXPECT_EQ(first_problem({killed}), "log1:4: message 1 under claim token 7, a claim this process does not hold");
  EXPECT_EQ(first_problem({{rec(LogKind::started, 0), rec(LogKind::submit_started, 1, 2, 7)}}),
            "log1:2: message 2 under claim token 7, a claim this process does not hold");
  EXPECT_EQ(first_problem({{rec(LogKind::started, 0), rec(LogKind::claimed, 1, 1, 7), rec(LogKind::cap, 2, 1, 8)}}),
            "log1:3: message 1 under claim token 8, a claim this process does not hold");
  EXPECT_EQ(first_problem({real, real}), "log2:2: message 1 was accepted already, at log1:2");
  EXPECT_EQ(first_problem({{rec(LogKind::started, 0), rec(LogKind::accepted, 1, 2), rec(LogKind::started, 2),
                            rec(LogKind::accepted, 3, 1)}}),
            "log1:4: message 1 accepted after message 2: the database hands ids out in order, and a process logs its "
            "accepts in the order it committed them");
  std::vector<ls::LogRecord> retoken = real;
  retoken[1].id = 2;
  EXPECT_EQ(first_problem({real, retoken}), "log2:3: claim token 7 was handed out already, at log1:3");
  EXPECT_EQ(first_problem({{rec(LogKind::claimed, 1, 1, 7)}}), "log1:1: a record before the process logged 'started'");
  EXPECT_EQ(first_problem({{rec(LogKind::started, 0), rec(LogKind::stopped, 1), rec(LogKind::mode, 2)}}),
            "log1:3: a record after the process logged 'stopped'");
  EXPECT_EQ(first_problem({{rec(LogKind::started, 5), rec(LogKind::mode, 2)}}), "log1:2: its time is before its process started");
}

// A killed process can commit and die before it logs: here one dies between a delivery's commit
// and its `completed` line, and the next between a create's commit and its `ingested` line. The
// judge takes both from the store and finds every invariant held; the deliveries the dead
// process left in flight are attributed to its crash. Without the store's word it could not.
// Then a process stops cleanly with its breaker open and starts again: a new pod, not the old one
// calling ServiceB through an open breaker.
// `first_receipt`: when request 1's delivery reached the world (its attempt ran from 13 ms to 21 ms).
// `unlogged_end`: a fourth life creates r3 (deadline 5 ms on), claims it past its deadline and
// dead-letters it in one group commit, and is killed before that group's lines are written.
void write_recovery_run(const std::string& dir, webhook::JudgeInputs& in,
                        Duration first_receipt = std::chrono::milliseconds(15), bool unlogged_end = false) {
  using namespace std::chrono;
  using webhook::LogKind;
  using webhook::LogRecord;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const Time t0 = time_from_ns(1'795'000'000'000'000'000);
  auto at = [&](int ms) { return t0 + milliseconds(ms); };
  const Time deadline = t0 + hours(24);
  const std::string p1 = R"({"seq":1,"v":1})";
  const std::string p2 = R"({"seq":2,"v":2})";
  // The store as the processes left it.
  {
    model::SqliteStore store(dir + "/live.db");
    ASSERT_EQ(store.create({"cx1", "r1", p1, at(10), deadline}).id, 1u);
    model::RequestRow row;
    ASSERT_TRUE(store.claim_due(at(11), 1, seconds(5), row));
    model::AttemptRow attempt{1, 1, 1, row.claim_token, at(12), at(20), "http://127.0.0.1:9/ep1/hooks/cx1/v1", 1, NetError::none, 200, {}};
    ASSERT_TRUE(store.complete(1, row.claim_token, {&attempt, model::Status::delivered, model::Reason::ok, at(21), at(21), {}, {}}));
    ASSERT_EQ(store.create({"cx2", "r2", p2, at(100), deadline}).id, 2u);
    ASSERT_TRUE(store.claim_due(at(200), 1, seconds(5), row));
    attempt = {2, 1, 1, row.claim_token, at(202), at(210), "http://127.0.0.1:9/ep2/hooks/cx2/v1", 1, NetError::none, 200, {}};
    ASSERT_TRUE(store.complete(2, row.claim_token, {&attempt, model::Status::delivered, model::Reason::ok, at(211), at(211), {}, {}}));
    if (unlogged_end) {
      ASSERT_EQ(store.create({"cx3", "r3", R"({"seq":3,"v":3})", at(610), at(615)}).id, 3u);
      ASSERT_TRUE(store.claim_due(at(630), 1, seconds(5), row));
      // As the dispatcher writes a dead letter: with its tenant's notice, in the same group.
      model::Completion dead{nullptr, model::Status::dead_lettered, model::Reason::deadline, at(630), at(630), at(630), {}};
      dead.notify = true;
      ASSERT_TRUE(store.complete(3, row.claim_token, dead));
    }
  }
  // The log: pod 1 three times, killed twice.
  std::ofstream events(dir + "/events.jsonl");
  auto log = [&](LogRecord r) { events << webhook::write_record(r) << '\n'; };
  auto record = [&](LogKind kind, int ms, model::RequestId id) {
    LogRecord r;
    r.kind = kind;
    r.pod = 1;
    r.at = at(ms);
    r.id = id;
    return r;
  };
  auto delivery = [&](model::RequestId id, int ms, model::ClaimToken token, bool completed) {
    const std::string cxid = "cx" + std::to_string(id);
    LogRecord lookup = record(LogKind::lookup, ms + 1, 0);
    lookup.cxid = cxid;
    lookup.lookup = model::LookupStatus::found;
    lookup.version = 1;
    lookup.sent_at = at(ms);
    log(lookup);
    LogRecord claim = record(LogKind::claimed, ms, id);
    claim.deadline_at = deadline;
    claim.token = token;
    log(claim);
    LogRecord start = record(LogKind::attempt_started, ms + 2, id);
    start.number = 1;
    start.url = "http://127.0.0.1:9/ep" + std::to_string(id) + "/hooks/" + cxid + "/v1";
    start.version = 1;
    log(start);
    LogRecord finish = record(LogKind::attempt_finished, ms + 10, id);
    finish.number = 1;
    finish.http_status = 200;
    log(finish);
    if (!completed) return;
    LogRecord done = record(LogKind::completed, ms + 11, id);
    done.token = token;
    done.number = 1;
    done.status = model::Status::delivered;
    done.reason = model::Reason::ok;
    done.due_at = at(ms + 11);
    done.applied = true;
    log(done);
  };
  log(record(LogKind::started, 0, 0));
  LogRecord create = record(LogKind::ingested, 10, 1);
  create.cxid = "cx1";
  create.request_id = "r1";
  create.created_at = at(10);
  create.deadline_at = deadline;
  log(create);
  delivery(1, 11, 1, false);  // killed after the delivery's commit, before its line
  log(record(LogKind::started, 50, 0));
  log(record(LogKind::started, 150, 0));  // killed after r2's create committed, before its line
  delivery(2, 200, 2, true);
  // A failed lookup opens the breaker (min_calls 1); the process stops cleanly with it open and
  // starts again: a new process, whose breaker is closed, looks up at once.
  auto lookup = [&](int sent, int answered, model::LookupStatus status) {
    LogRecord r = record(LogKind::lookup, answered, 0);
    r.cxid = "cx5";
    r.lookup = status;
    r.version = status == model::LookupStatus::found ? 1 : 0;
    r.sent_at = at(sent);
    log(r);
  };
  lookup(250, 260, model::LookupStatus::error);
  LogRecord opened = record(LogKind::breaker, 260, 0);
  opened.from = BreakerState::closed;
  opened.to = BreakerState::open;
  log(opened);
  log(record(LogKind::stopped, 300, 0));
  log(record(LogKind::started, 400, 0));
  lookup(410, 411, model::LookupStatus::found);
  log(record(LogKind::stopped, 500, 0));
  if (unlogged_end) {
    log(record(LogKind::started, 600, 0));
    LogRecord r3 = record(LogKind::ingested, 610, 3);
    r3.cxid = "cx3";
    r3.request_id = "r3";
    r3.created_at = at(610);
    r3.deadline_at = at(615);
    log(r3);
  }
  events.close();
  // What the endpoints saw, and what the client sent and heard.
  std::ofstream receipts(dir + "/receipts.jsonl");
  receipts << json{{"world", {{"scenario", "chaos-world"}, {"seed", 7}, {"base", "http://127.0.0.1:9"}, {"started_ns", to_ns(t0)}}}}.dump()
           << '\n';
  for (const auto& [id, when, payload] : {std::tuple{1, t0 + first_receipt, p1}, std::tuple{2, at(205), p2}}) {
    receipts << json{{"at_ns", to_ns(when)}, {"endpoint", id}, {"cxid", "cx" + std::to_string(id)}, {"version", 1},
                     {"target", "/ep" + std::to_string(id) + "/hooks/cx" + std::to_string(id) + "/v1"},
                     {"webhook_id", model::webhook_id_for(static_cast<model::RequestId>(id))}, {"status", 200}, {"answered", true},
                     {"key", id}, {"payload_digest", hash_bytes(payload)}}
                    .dump()
             << '\n';
  }
  receipts.close();
  std::ofstream calls(dir + "/calls.jsonl");
  auto call = [&](int key, int sent, int answered, int status, bool duplicate) {
    calls << json{{"cxid", "cx" + std::to_string(key)}, {"request_id", "r" + std::to_string(key)}, {"key", key},
                  {"payload", json{{"seq", key}, {"v", key}}}, {"sent_ns", to_ns(at(sent))}, {"answered_ns", to_ns(at(answered))},
                  {"status", status}, {"id", status == 0 ? json(nullptr) : json(key)}, {"duplicate", duplicate}}
                 .dump()
          << '\n';
  };
  call(1, 9, 10, 202, false);
  call(2, 99, 150, 0, false);     // no answer: the process died
  call(2, 160, 161, 202, true);   // the retry finds it stored
  if (unlogged_end) call(3, 609, 611, 202, false);
  calls.close();
  std::ofstream config(dir + "/serve.yaml");
  config << "serve: {allow_addresses: [loopback]}\nplatform: {lease: 40s, serviceb_breaker: {min_calls: 1}}\n";
  config.close();

  in = {std::string(RELAYSIM_SOURCE_DIR) + "/tests/live/chaos-world.yaml", dir + "/serve.yaml", {dir + "/events.jsonl"},
        dir + "/receipts.jsonl", dir + "/calls.jsonl", dir + "/live.db"};
}

TEST(Judge, TakesFromTheStoreWhatAKilledProcessCommittedButNeverLogged) {
  webhook::JudgeInputs in;
  write_recovery_run(testing::TempDir() + "judge-recovery", in);
  if (HasFatalFailure()) return;
  const webhook::Judgement j = webhook::judge(in);
  for (const sim::Violation& v : j.ledger.examples()) ADD_FAILURE() << j.ledger.describe(v);
  EXPECT_EQ(j.acknowledged, 2u);
  EXPECT_EQ(j.crashes, 2u);
  EXPECT_EQ(j.recovered, 2u);
}

// With group commit, a claim that ends without an attempt commits in one group with its end and
// its tenant's notice; a process killed before that group's lines are written leaves none of them
// in its log. The judge takes the claim and the end from the store, placed at the process's
// death, and finds the notice in the outbox: killed between the failure's commit and the notice's
// send, nothing is lost. Without the notice in the outbox, the loss is reported.
TEST(Judge, TakesAClaimAndItsEndThatOneGroupCommittedAndNoLogTells) {
  const std::string dir = testing::TempDir() + "judge-unlogged-end";
  webhook::JudgeInputs in;
  write_recovery_run(dir, in, std::chrono::milliseconds(15), true);
  if (HasFatalFailure()) return;
  const webhook::Judgement j = webhook::judge(in);
  for (const sim::Violation& v : j.ledger.examples()) ADD_FAILURE() << j.ledger.describe(v);
  EXPECT_EQ(j.acknowledged, 3u);
  EXPECT_EQ(j.crashes, 3u);
  EXPECT_EQ(j.recovered, 4u);  // r2's create, r1's completion, r3's claim and its end

  {
    model::SqliteStore store(in.database);
    const std::vector<model::Notice> outbox = store.notices();
    ASSERT_EQ(outbox.size(), 1u);
    store.notice_sent(outbox.front().id);  // as if the notice had been removed, never sent
  }
  const webhook::Judgement lost = webhook::judge(in);
  ASSERT_EQ(lost.ledger.total(), 1u);
  const std::string only = lost.ledger.describe(lost.ledger.examples().front());
  EXPECT_NE(only.find("ended dead_lettered and its tenant was never told"), std::string::npos) << only;
}

// The same run with a second process (pod 2) killed too, after the same moment, having logged
// nothing since: either could have made that claim, and the store does not say which. The judge
// does not guess: the dead letter stays unexplained, and the store's count is reported.
TEST(Judge, LeavesAnUnloggedEndThatTwoDeathsCouldExplainUnexplained) {
  const std::string dir = testing::TempDir() + "judge-unlogged-two";
  webhook::JudgeInputs in;
  write_recovery_run(dir, in, std::chrono::milliseconds(15), true);
  if (HasFatalFailure()) return;
  webhook::LogRecord started;
  started.kind = webhook::LogKind::started;
  started.pod = 2;
  started.at = time_from_ns(1'795'000'000'000'000'000) + std::chrono::milliseconds(590);
  std::ofstream(dir + "/events-2.jsonl") << webhook::write_record(started) << '\n';
  in.events.push_back(dir + "/events-2.jsonl");
  const webhook::Judgement j = webhook::judge(in);
  EXPECT_EQ(j.recovered, 2u);  // r2's create and r1's completion only
  bool reported = false;
  for (const sim::Violation& v : j.ledger.examples()) {
    reported |= j.ledger.describe(v).find("the store holds 1 dead_lettered requests; the platform reported 0") != std::string::npos;
  }
  EXPECT_TRUE(reported);
}

// The judge's one tolerance: a receipt is written on the world's clock, an attempt on its process's;
// the two agree within kClockReadError (live/clock.h). A receipt that far before the start of the
// attempt that carried it is that attempt's; one further off was sent by no attempt of the logs,
// and judged as such (it once took 20 ms, so a receipt no attempt carried could be taken for one).
TEST(Judge, MatchesAReceiptToItsAttemptWithinTheClocksDisagreementOnly) {
  using std::chrono::microseconds;
  const auto judged = [](Duration receipt, const std::string& name) {
    webhook::JudgeInputs in;
    write_recovery_run(testing::TempDir() + name, in, receipt);
    return webhook::judge(in).ledger.total();
  };
  const Duration start = std::chrono::milliseconds(13);
  EXPECT_EQ(judged(start - kClockReadError + microseconds(100), "judge-skew-within"), 0u);
  EXPECT_GT(judged(start - kClockReadError - microseconds(100), "judge-skew-beyond"), 0u);
}

// A delivery held for its group commit until after its claim's lease ended sends nothing
// (too_late), yet its logged span — dispatch to the slow commit — covers the next claim's attempt.
// The receipt of that attempt, a little before its logged start (the clocks' disagreement), is
// the next attempt's: pinned on the one that sent nothing, it would read as a send after its lease.
TEST(Judge, PinsNoReceiptOnAnAttemptThatSentNothing) {
  using namespace std::chrono;
  using webhook::LogKind;
  using webhook::LogRecord;
  const std::string dir = testing::TempDir() + "judge-too-late";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const Time t0 = time_from_ns(1'795'000'000'000'000'000);
  auto at = [&](int ms) { return t0 + milliseconds(ms); };
  const Time deadline = t0 + hours(24);
  const std::string payload = R"({"seq":1,"v":1})";
  const Duration lease = seconds(40);  // serve.yaml's, below
  model::ClaimToken first = 0, second = 0;
  {
    model::SqliteStore store(dir + "/live.db");
    ASSERT_EQ(store.create({"cx1", "r1", payload, at(10), deadline}).id, 1u);
    model::RequestRow row;
    ASSERT_TRUE(store.claim_due(at(11), 1, lease, row));
    first = row.claim_token;
    // Pod 1's group commit stalls past the lease: pod 2 takes the request and delivers it.
    ASSERT_TRUE(store.claim_due(at(40'100), 2, lease, row));
    second = row.claim_token;
    model::AttemptRow attempt{1, 1, 2, second, at(40'102), at(40'110), "http://127.0.0.1:9/ep1/hooks/cx1/v1", 1, NetError::none, 200, {}};
    ASSERT_TRUE(store.complete(1, second, {&attempt, model::Status::delivered, model::Reason::ok, at(40'111), at(40'111), {}, {}}));
    // Pod 1's end, too late: refused, the claim has moved on.
    model::AttemptRow late{1, 1, 1, first, at(12), at(40'300), "http://127.0.0.1:9/ep1/hooks/cx1/v1", 1, NetError::too_late, 0, "not sent"};
    ASSERT_FALSE(store.complete(1, first, {&late, model::Status::pending, model::Reason::none, at(40'300), at(41'300), {}, {}}));
  }
  auto record = [&](int pod, LogKind kind, int ms, model::RequestId id) {
    LogRecord r;
    r.kind = kind;
    r.pod = static_cast<std::uint32_t>(pod);
    r.at = at(ms);
    r.id = id;
    return r;
  };
  auto delivery = [&](std::ofstream& log, int pod, int ms, model::ClaimToken token, NetError error, int status, int end_ms,
                      bool applied) {
    const auto line = [&log](const LogRecord& r) { log << webhook::write_record(r) << '\n'; };
    LogRecord lookup = record(pod, LogKind::lookup, ms + 1, 0);
    lookup.cxid = "cx1";
    lookup.lookup = model::LookupStatus::found;
    lookup.version = 1;
    lookup.sent_at = at(ms);
    line(lookup);
    LogRecord claim = record(pod, LogKind::claimed, ms, 1);
    claim.deadline_at = deadline;
    claim.token = token;
    line(claim);
    LogRecord start = record(pod, LogKind::attempt_started, ms + 2, 1);
    start.number = 1;
    start.url = "http://127.0.0.1:9/ep1/hooks/cx1/v1";
    start.version = 1;
    line(start);
    LogRecord finish = record(pod, LogKind::attempt_finished, end_ms, 1);
    finish.number = 1;
    finish.error = error;
    finish.http_status = status;
    line(finish);
    LogRecord done = record(pod, LogKind::completed, end_ms + 1, 1);
    done.token = token;
    done.number = 1;
    done.status = status == 200 ? model::Status::delivered : model::Status::pending;
    done.reason = status == 200 ? model::Reason::ok : model::Reason::none;
    done.due_at = at(status == 200 ? end_ms + 1 : end_ms + 1000);
    done.applied = applied;
    line(done);
  };
  {
    std::ofstream log(dir + "/events-1.jsonl");
    log << webhook::write_record(record(1, LogKind::started, 0, 0)) << '\n';
    LogRecord create = record(1, LogKind::ingested, 10, 1);
    create.cxid = "cx1";
    create.request_id = "r1";
    create.created_at = at(10);
    create.deadline_at = deadline;
    log << webhook::write_record(create) << '\n';
    delivery(log, 1, 11, first, NetError::too_late, 0, 40'300, false);
    log << webhook::write_record(record(1, LogKind::stopped, 40'400, 0)) << '\n';
  }
  {
    std::ofstream log(dir + "/events-2.jsonl");
    log << webhook::write_record(record(2, LogKind::started, 5, 0)) << '\n';
    delivery(log, 2, 40'100, second, NetError::none, 200, 40'110, true);
    log << webhook::write_record(record(2, LogKind::stopped, 40'400, 0)) << '\n';
  }
  const auto receipts_at = [&](Time received) {
    std::ofstream receipts(dir + "/receipts.jsonl");
    receipts << json{{"world", {{"scenario", "chaos-world"}, {"seed", 7}, {"base", "http://127.0.0.1:9"}, {"started_ns", to_ns(t0)}}}}.dump()
             << '\n';
    receipts << json{{"at_ns", to_ns(received)}, {"endpoint", 1}, {"cxid", "cx1"}, {"version", 1}, {"target", "/ep1/hooks/cx1/v1"},
                     {"webhook_id", model::webhook_id_for(1)}, {"status", 200}, {"answered", true}, {"key", 1},
                     {"payload_digest", hash_bytes(payload)}}
                    .dump()
             << '\n';
  };
  std::ofstream(dir + "/calls.jsonl") << json{{"cxid", "cx1"}, {"request_id", "r1"}, {"key", 1}, {"payload", json{{"seq", 1}, {"v", 1}}},
                                              {"sent_ns", to_ns(at(9))}, {"answered_ns", to_ns(at(10))}, {"status", 202}, {"id", 1},
                                              {"duplicate", false}}
                                                 .dump()
                                      << '\n';
  std::ofstream(dir + "/serve.yaml") << "serve: {allow_addresses: [loopback]}\nplatform: {lease: 40s}\n";
  const webhook::JudgeInputs in{std::string(RELAYSIM_SOURCE_DIR) + "/tests/live/chaos-world.yaml", dir + "/serve.yaml",
                                {dir + "/events-1.jsonl", dir + "/events-2.jsonl"}, dir + "/receipts.jsonl", dir + "/calls.jsonl",
                                dir + "/live.db"};
  // Received just before pod 2's attempt was logged as started, inside both attempts' spans.
  receipts_at(at(40'102) - microseconds(200));
  const webhook::Judgement j = webhook::judge(in);
  for (const sim::Violation& v : j.ledger.examples()) ADD_FAILURE() << j.ledger.describe(v);
  EXPECT_EQ(j.attempts, 2u);
  EXPECT_EQ(j.receipts, 1u);
}

// The same log given twice — appended to itself, as `cat a a`, or named twice — is not a run: it
// is refused with the line at fault, not judged (it once gave 77 violations).
TEST(Judge, RefusesALogGivenTwice) {
  const std::string dir = testing::TempDir() + "judge-twice";
  webhook::JudgeInputs in;
  write_recovery_run(dir, in);
  if (HasFatalFailure()) return;
  const auto refusal = [&](const webhook::JudgeInputs& inputs) {
    try {
      webhook::judge(inputs);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("judged");
  };
  std::ifstream log(in.events[0]);
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/twice.jsonl") << text << text;
  webhook::JudgeInputs twice = in;
  twice.events = {dir + "/twice.jsonl"};
  const std::string doubled = refusal(twice);
  EXPECT_EQ(doubled.rfind(dir + "/twice.jsonl:", 0), 0u) << doubled;
  EXPECT_NE(doubled.find("a second time"), std::string::npos) << doubled;
  EXPECT_NE(doubled.find("no real run writes this log"), std::string::npos) << doubled;
  twice.events = {in.events[0], in.events[0]};
  EXPECT_NE(refusal(twice).find("also logged in"), std::string::npos);
  // A receipt or a client call given twice is refused the same way.
  std::ifstream receipts(in.receipts);
  std::string world, first;
  std::getline(receipts, world);
  std::getline(receipts, first);
  std::ofstream(dir + "/receipts-twice.jsonl") << world << '\n' << first << '\n' << first << '\n';
  webhook::JudgeInputs receipt_twice = in;
  receipt_twice.receipts = dir + "/receipts-twice.jsonl";
  EXPECT_NE(refusal(receipt_twice).find("receipts-twice.jsonl:3: the receipt of msg_1 at the same moment"), std::string::npos)
      << refusal(receipt_twice);
  std::ifstream calls(in.calls);
  std::getline(calls, first);
  std::ofstream(dir + "/calls-twice.jsonl") << first << '\n' << first << '\n';
  webhook::JudgeInputs call_twice = in;
  call_twice.calls = dir + "/calls-twice.jsonl";
  EXPECT_NE(refusal(call_twice).find("calls-twice.jsonl:2: a call of key 1 sent at the same moment"), std::string::npos)
      << refusal(call_twice);
}

// Logs no real process could have written are refused with the reason; what a real process
// writes (a kill, a clean restart with a fresh breaker) passes.
TEST(EventLog, TheCheckerRefusesWhatNoRealProcessCouldHaveLogged) {
  using webhook::LogKind;
  using webhook::LogRecord;
  const Time t0 = time_from_ns(1'795'000'000'000'000'000);
  auto rec = [&](LogKind kind, int ms, model::RequestId id = 0, model::ClaimToken token = 0) {
    LogRecord r;
    r.kind = kind;
    r.pod = 1;
    r.at = t0 + std::chrono::milliseconds(ms);
    r.id = id;
    r.token = token;
    r.created_at = r.at;
    r.deadline_at = r.at + std::chrono::hours(1);
    r.sent_at = r.at;
    r.number = kind == LogKind::attempt_started || kind == LogKind::attempt_finished ? 1 : 0;
    return r;
  };
  auto done = [&](int ms, model::RequestId id, model::ClaimToken token, std::uint32_t number, model::Status status) {
    LogRecord r = rec(LogKind::completed, ms, id, token);
    r.number = number;
    r.status = status;
    r.reason = status == model::Status::failed ? model::Reason::gone : model::Reason::ok;
    r.applied = true;
    return r;
  };
  auto breaker = [&](int ms, BreakerState from, BreakerState to) {
    LogRecord r = rec(LogKind::breaker, ms);
    r.from = from;
    r.to = to;
    return r;
  };
  LogRecord notice = rec(LogKind::notified, 9, 1);
  notice.status = model::Status::failed;
  notice.reason = model::Reason::gone;
  notice.notice = 1;
  notice.sends = 1;
  notice.ended_at = notice.at;
  // The first problem of each log, or "" when every record fits.
  const auto first_problem = [](const std::vector<std::vector<LogRecord>>& logs) {
    webhook::LogChecker checker;
    for (std::size_t l = 0; l < logs.size(); ++l) {
      checker.next_log();
      for (std::size_t i = 0; i < logs[l].size(); ++i) {
        const std::string where = "log" + std::to_string(l + 1) + ":" + std::to_string(i + 1);
        if (std::string p = checker.check(logs[l][i], where); !p.empty()) return where + ": " + p;
      }
    }
    return std::string();
  };
  LogRecord created = rec(LogKind::ingested, 1, 1);
  const std::vector<LogRecord> real = {rec(LogKind::started, 0), created, rec(LogKind::claimed, 2, 1, 7),
                                       rec(LogKind::attempt_started, 3, 1), rec(LogKind::attempt_finished, 8, 1),
                                       done(9, 1, 7, 1, model::Status::failed), notice, breaker(10, BreakerState::closed, BreakerState::open),
                                       rec(LogKind::claimed, 11, 1, 8), rec(LogKind::started, 12),  // killed with claim 8 open
                                       breaker(13, BreakerState::closed, BreakerState::open), rec(LogKind::stopped, 14),
                                       rec(LogKind::started, 15), breaker(16, BreakerState::closed, BreakerState::open)};
  EXPECT_EQ(first_problem({real}), "");
  const auto with = [&](std::size_t at, std::vector<LogRecord> put) {
    std::vector<LogRecord> log(real.begin(), real.begin() + static_cast<std::ptrdiff_t>(at));
    log.insert(log.end(), put.begin(), put.end());
    return first_problem({log});
  };
  const auto expect = [](const std::string& problem, const std::string& says) {
    EXPECT_NE(problem.find(says), std::string::npos) << "'" << problem << "' does not say '" << says << "'";
  };
  expect(with(3, {done(4, 1, 9, 0, model::Status::delivered)}), "log1:4: a completion of request 1 under claim token 9, which this process does not hold");
  expect(with(2, {rec(LogKind::attempt_started, 3, 1)}), "log1:3: an attempt of request 1 without a claim");
  expect(with(3, {rec(LogKind::attempt_finished, 3, 1)}), "log1:4: attempt 1 of request 1 finishes, but this process has no such attempt");
  expect(with(4, {done(9, 1, 7, 1, model::Status::delivered)}), "comes before its attempt finished");
  expect(with(5, {done(9, 1, 7, 0, model::Status::delivered)}), "names attempt 0; its claim made attempt 1");
  LogRecord unsent = notice;
  unsent.sends = 0;
  expect(with(6, {unsent}), "log1:7: a notice to request 1's tenant that is not of a failure that ended before it, sent at least once");
  LogRecord delivered = notice;
  delivered.status = model::Status::delivered;
  expect(with(6, {delivered}), "log1:7: a notice to request 1's tenant that is not of a failure");
  LogRecord early = notice;
  early.ended_at = notice.at + std::chrono::milliseconds(1);
  expect(with(6, {early}), "log1:7: a notice to request 1's tenant that is not of a failure that ended before it");
  expect(with(7, {breaker(10, BreakerState::open, BreakerState::closed)}), "the breaker moves from open to closed, but it was closed");
  LogRecord backwards = rec(LogKind::lookup, 5);
  backwards.sent_at = backwards.at + std::chrono::milliseconds(1);
  expect(with(2, {backwards}), "a lookup answered 0.001s before it was sent");
  expect(with(12, {rec(LogKind::claimed, 14, 2, 9)}), "log1:13: a 'claimed' while no process was running");
  expect(with(1, {rec(LogKind::ingested, -1, 1)}), "'ingested' is 0.001s before its process started");
  expect(with(10, {done(13, 1, 8, 0, model::Status::delivered)}), "log1:11: a completion of request 1 under claim token 8");  // 8 died with its process
  expect(with(2, {rec(LogKind::ingested, 2, 1)}), "log1:3: request 1 created a second time (also at log1:2)");
  // Across logs: one claim token, one created id.
  expect(first_problem({{rec(LogKind::started, 0), rec(LogKind::claimed, 1, 1, 7)}, {rec(LogKind::started, 0), rec(LogKind::claimed, 1, 2, 7)}}),
         "log2:2: claim token 7 handed out a second time (also at log1:2)");
  expect(first_problem({{rec(LogKind::claimed, 1, 1, 7)}}), "log1:1: a 'claimed' while no process was running");
}

}  // namespace
}  // namespace relaysim::live
