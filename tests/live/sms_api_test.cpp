// The SMS gateway's API (live/sms/api.h) in one process: every answer docs/live.md promises, over a
// node on an in-memory store with providers that answer when the test says, and time moved by
// hand.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "live/api_keys.h"
#include "live/http_server.h"
#include "live/sms/api.h"
#include "live/sms/ports.h"
#include "model/sms/jwt_codec.h"
#include "model/sms/memory_store.h"
#include "model/store/sqlite_db.h"
#include "sim/kernel/kernel.h"
#include "tests/live/sms_fakes.h"

namespace relaysim::live::sms {
namespace {

using nlohmann::json;
namespace model = relaysim::sms;

class SmsApiTest : public ::testing::Test {
 protected:
  sim::Kernel clock;
  testing::StillTimers timers;
  Rng rng{7};
  testing::HeldProviders providers;
  testing::NoLimits kv;
  EmptyDirectory directory;
  model::LibjwtCodec codec{"a-test-secret-of-at-least-32-bytes!!"};
  model::MemoryStore store;
  model::Events events;
  model::PlatformConfig config;
  Db db{":memory:", Durability::normal};
  ApiKeys keys{db};
  std::vector<ProviderEndpoint> endpoints{{"alpha", "http://127.0.0.1:1/a", "alpha-receipt-secret"},
                                          {"beta", "http://127.0.0.1:1/b", "beta-receipt-secret"}};
  model::BackOffice office{store, codec, clock, config.token_lifetime, config.quota_period};
  model::Node node{1, config, {}, model::NodePorts{clock, timers, rng, providers, kv, directory, codec, store, events}};
  Api api{node, office, store, keys, codec, clock, endpoints};
  std::string admin = keys.create(std::nullopt, clock.now()).key;

  struct Answer {
    int status = 0;
    json body;
    Response response;
  };
  // Calls the API; a synchronous send's provider answers `outcome`.
  Answer call(std::string_view method, std::string_view target, const std::optional<json>& body, std::string_view key,
              model::SubmitClass outcome = model::SubmitClass::accepted) {
    const std::string text = body ? body->dump() : std::string();
    const std::string authorization = "Bearer " + std::string(key);
    Incoming in;
    in.method = method;
    in.target = target;
    in.body = text;
    if (!key.empty()) in.headers.emplace_back("Authorization", authorization);
    if (body) in.headers.emplace_back("Content-Type", "application/json");
    std::optional<Response> got;
    api.handle(in, [&got](Response&& r) {
      EXPECT_FALSE(got) << "answered twice";
      got = std::move(r);
    });
    if (!got) providers.answer_all(outcome);
    EXPECT_TRUE(got) << "never answered";
    Answer a;
    a.status = got->status;
    a.body = json::parse(got->body, nullptr, false);
    a.response = std::move(*got);
    return a;
  }
  // A business applied for, approved, and its token.
  std::string business(std::uint64_t quota = 10) {
    const Answer applied =
        call("POST", "/v1/businesses", json{{"name", "shop"}, {"senders", {"SHOP"}}, {"templates", {3}}, {"quota", quota}}, admin);
    EXPECT_EQ(applied.status, 201) << applied.body;
    const std::string id = std::to_string(applied.body["id"].get<int>());
    EXPECT_EQ(call("POST", "/v1/businesses/" + id + "/approve", std::nullopt, admin).status, 200);
    const Answer token = call("POST", "/v1/businesses/" + id + "/tokens", std::nullopt, admin);
    EXPECT_EQ(token.status, 201) << token.body;
    return token.body["token"].get<std::string>();
  }
  static json single(std::string_view biz_id, std::string_view to = "+4915112345678") {
    return json{{"sender", "SHOP"}, {"template", 3}, {"params", {{"code", "1"}}}, {"biz_type", "otp"}, {"biz_id", biz_id}, {"to", to}};
  }
};

TEST_F(SmsApiTest, TheBackOfficeMovesABusinessOnlyAsAllowedAndSaysWhich) {
  const Answer applied =
      call("POST", "/v1/businesses", json{{"name", "shop"}, {"senders", {"SHOP"}}, {"templates", {3}}, {"quota", 5}}, admin);
  ASSERT_EQ(applied.status, 201);
  EXPECT_EQ(applied.body["state"], "applied");
  EXPECT_EQ(call("POST", "/v1/businesses/1/tokens", std::nullopt, admin).status, 409);  // not approved yet
  EXPECT_EQ(call("POST", "/v1/businesses/1/approve", std::nullopt, admin).body["state"], "approved");
  const Answer twice = call("POST", "/v1/businesses/1/reject", std::nullopt, admin);
  EXPECT_EQ(twice.status, 409);
  EXPECT_NE(twice.body["error"].get<std::string>().find("is approved: it cannot be rejected"), std::string::npos);
  const Answer shown = call("GET", "/v1/businesses/1", std::nullopt, admin);
  EXPECT_EQ(shown.body["senders"], json({"SHOP"}));
  EXPECT_EQ(shown.body["quota_left"], 5);
  EXPECT_EQ(call("POST", "/v1/businesses/9/approve", std::nullopt, admin).status, 404);
  EXPECT_EQ(call("POST", "/v1/businesses/1/promote", std::nullopt, admin).status, 404);
  EXPECT_EQ(call("GET", "/v1/businesses/1/approve", std::nullopt, admin).status, 405);
  // Too large for a token: refused when applied, not when the token is made.
  EXPECT_EQ(call("POST", "/v1/businesses",
                 json{{"name", "big"}, {"senders", std::vector<std::string>(17, "S")}, {"templates", {3}}, {"quota", 1}}, admin)
                .status,
            400);
}

TEST_F(SmsApiTest, ASendIsAnsweredAfterItsProviderThenRepeatsAreDuplicatesOrConflicts) {
  const std::string token = business();
  const Answer sent = call("POST", "/v1/sms", single("o-1"), token);
  EXPECT_EQ(sent.status, 200) << sent.body;
  EXPECT_EQ(sent.body["answer"], "success");
  EXPECT_EQ(sent.body["path"], "sync");
  EXPECT_EQ(sent.body["ids"], json({1}));
  const Answer again = call("POST", "/v1/sms", single("o-1"), token);
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body["outcome"], "duplicate");
  EXPECT_EQ(again.body["id"], 1);
  EXPECT_EQ(call("GET", "/v1/quota", std::nullopt, token).body["used"], 1);  // a duplicate charges nothing
  json other = single("o-1");
  other["params"]["code"] = "2";
  EXPECT_EQ(call("POST", "/v1/sms", other, token).status, 409);
  // A provider that certainly refuses: answered, the message failed.
  const Answer refused = call("POST", "/v1/sms", single("o-2"), token, model::SubmitClass::refused);
  EXPECT_EQ(refused.status, 200);
  EXPECT_EQ(refused.body["answer"], "failure");
  // No answer in time: the outcome is not known, so it is pending.
  const Answer unknown = call("POST", "/v1/sms", single("o-3"), token, model::SubmitClass::timeout);
  EXPECT_EQ(unknown.status, 202);
  EXPECT_EQ(unknown.body["answer"], "pending");
}

TEST_F(SmsApiTest, BulkAndScheduledSendsAreStoredAndFoundByTheirKeys) {
  const std::string token = business();
  json bulk = single("n-1");
  bulk["to"] = {"+4915100000001", "+4915100000002", "+4915100000003"};
  const Answer stored = call("POST", "/v1/sms", bulk, token);
  EXPECT_EQ(stored.status, 202) << stored.body;
  EXPECT_EQ(stored.body["ids"], json({1, 2, 3}));
  const Answer found = call("GET", "/v1/sms?biz_type=otp&biz_id=n-1%232", std::nullopt, token);
  EXPECT_EQ(found.status, 200) << found.body;
  EXPECT_EQ(found.body["id"], 3);
  EXPECT_EQ(found.body["kind"], "bulk");
  json later = single("s-1");
  later["send_at"] = "1970-01-02T00:00:00Z";
  const Answer scheduled = call("POST", "/v1/sms", later, token);
  EXPECT_EQ(scheduled.status, 202);
  EXPECT_EQ(call("GET", "/v1/sms/4", std::nullopt, token).body["kind"], "scheduled");
  later["send_at"] = "1971-01-03T00:00:00Z";  // beyond 366 days
  later["biz_id"] = "s-2";
  EXPECT_EQ(call("POST", "/v1/sms", later, token).status, 400);
}

TEST_F(SmsApiTest, EachBadSendIsRefusedWithItsReason) {
  const std::string token = business(3);
  const auto error = [&](const json& body, std::string_view key) {
    const Answer a = call("POST", "/v1/sms", body, key);
    return std::make_pair(a.status, a.body.value("error", std::string()));
  };
  json bad = single("n-9");
  bad["to"] = {"+4915100000001", "12345"};
  EXPECT_EQ(error(bad, token), std::make_pair(400, std::string("\"to\"[1] is not a number in E.164 (a + and 8 to 15 digits, the first not 0)")));
  EXPECT_EQ(error(single("a#1"), token).first, 400);
  EXPECT_EQ(error(single("a@1"), token).first, 400);
  json unknown = single("u-1");
  unknown["colour"] = "red";
  EXPECT_EQ(error(unknown, token).first, 400);
  EXPECT_NE(error(single("k-1"), admin).second.find("this is an admin API key"), std::string::npos);
  json foreign = single("f-1");
  foreign["sender"] = "BANK";
  const auto [status, why] = error(foreign, token);
  EXPECT_EQ(status, 403);
  EXPECT_NE(why.find("does not grant sender 'BANK' with template 3"), std::string::npos);
  // Three units of quota: a bulk of four is refused whole, saying how many are left.
  json four = single("q-1");
  four["to"] = {"+4915100000001", "+4915100000002", "+4915100000003", "+4915100000004"};
  const Answer over = call("POST", "/v1/sms", four, token);
  EXPECT_EQ(over.status, 429);
  EXPECT_NE(over.body["error"].get<std::string>().find("4 messages asked, 3 left"), std::string::npos);
  // Expired: a token's lifetime is judged by the gateway's clock.
  clock.advance_to(clock.now() + config.token_lifetime);
  const Answer expired = call("POST", "/v1/sms", single("e-1"), token);
  EXPECT_EQ(expired.status, 401);
  EXPECT_EQ(expired.body["fault"], "expired");
}

TEST_F(SmsApiTest, ARevocationRefusesTheOldTokenForSendsAndQueries) {
  const std::string token = business();
  ASSERT_EQ(call("POST", "/v1/sms", single("o-1"), token).status, 200);
  ASSERT_EQ(call("POST", "/v1/businesses/1/revoke", std::nullopt, admin).status, 200);
  EXPECT_EQ(call("POST", "/v1/sms", single("o-2"), token).status, 403);
  EXPECT_EQ(call("GET", "/v1/sms/1", std::nullopt, token).status, 403);
  EXPECT_EQ(call("GET", "/v1/quota", std::nullopt, token).status, 403);
  ASSERT_EQ(call("POST", "/v1/businesses/1/approve", std::nullopt, admin).status, 200);
  EXPECT_EQ(call("GET", "/v1/sms/1", std::nullopt, token).status, 403);  // its epoch is gone for good
}

TEST_F(SmsApiTest, AReceiptNeedsItsProvidersSecretAndFinalisesTheMessage) {
  const std::string token = business();
  ASSERT_EQ(call("POST", "/v1/sms", single("o-1"), token).status, 200);
  const json receipt{{"reference", "1"}, {"status", "delivered"}};
  EXPECT_EQ(call("POST", "/v1/receipts/alpha", receipt, "beta-receipt-secret").status, 401);
  EXPECT_EQ(call("POST", "/v1/receipts/gamma", receipt, "alpha-receipt-secret").status, 404);
  EXPECT_EQ(call("POST", "/v1/receipts/alpha", json{{"reference", "1"}, {"status", "read"}}, "alpha-receipt-secret").status, 400);
  EXPECT_EQ(call("POST", "/v1/receipts/alpha", receipt, "alpha-receipt-secret").status, 202);
  EXPECT_EQ(call("GET", "/v1/sms/1", std::nullopt, token).body["status"], "delivered");
}

TEST_F(SmsApiTest, AnotherBusinesssMessageIsNotShownNorSaidToExist) {
  const std::string shop = business();
  ASSERT_EQ(call("POST", "/v1/sms", single("o-1"), shop).status, 200);
  const std::string other = business();
  EXPECT_EQ(call("GET", "/v1/sms/1", std::nullopt, other).status, 404);
  EXPECT_EQ(call("GET", "/v1/sms?biz_type=otp&biz_id=o-1", std::nullopt, other).status, 404);
  EXPECT_EQ(call("GET", "/v1/sms?biz_type=otp&biz_id=o%2", std::nullopt, shop).status, 400);  // a broken escape
}

}  // namespace
}  // namespace relaysim::live::sms
