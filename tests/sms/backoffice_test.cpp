// The back office (model/sms/backoffice.h) with the real token codec and a store: what a grant,
// a rejection and a revocation do to the sends that follow.
#include <gtest/gtest.h>

#include "model/sms/auth.h"
#include "model/sms/backoffice.h"
#include "model/sms/jwt_codec.h"
#include "model/sms/memory_store.h"
#include "sim/kernel/kernel.h"

namespace relaysim::sms {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

class BackOfficeTest : public ::testing::Test {
 protected:
  sim::Kernel clock;
  MemoryStore store;
  LibjwtCodec codec{"0123456789abcdef0123456789abcdef"};
  BackOffice office{store, codec, clock, hours(1), hours(24 * 30)};
  Authorizer auth{codec, clock, 16};
  BusinessId shop = office.apply({"shop", {"SHOP"}, {3}, 2});

  // A send as the gateway makes it: the token is checked, then the store accepts in one
  // transaction (where the epoch is judged).
  AcceptOutcome send(const std::string& token, std::string_view biz_id, std::uint32_t template_id = 3) {
    const AuthResult a = auth.check(token, {"SHOP", template_id});
    if (a.fault != AuthFault::none) {
      last_fault = a.fault;
      return AcceptOutcome::revoked;
    }
    last_fault = AuthFault::none;
    NewMessage m;
    m.biz_type = "otp";
    m.biz_id = biz_id;
    m.template_id = template_id;
    AcceptRequest r;
    r.business = a.business;
    r.epoch = a.epoch;
    r.now = clock.now();
    r.period = office.period_now();
    r.messages = {&m, 1};
    return store.accept(r).outcome;
  }
  AuthFault last_fault = AuthFault::none;
};

TEST_F(BackOfficeTest, OnlyAnApprovedBusinessGetsATokenForWhatItApplied) {
  EXPECT_FALSE(office.issue_token(shop).has_value()) << "not approved yet";
  ASSERT_EQ(office.approve(shop), AdminOutcome::done);
  const std::optional<std::string> token = office.issue_token(shop);
  ASSERT_TRUE(token.has_value());
  TokenClaims claims;
  ASSERT_EQ(codec.verify(*token, claims), AuthFault::none);
  EXPECT_EQ(claims.business, shop);
  EXPECT_EQ(claims.senders, std::vector<std::string>{"SHOP"});
  EXPECT_EQ(claims.templates, std::vector<std::uint32_t>{3});
  EXPECT_EQ(claims.expires_at - claims.issued_at, 3600);
  EXPECT_EQ(send(*token, "a"), AcceptOutcome::accepted);
  EXPECT_EQ(send(*token, "b", 4), AcceptOutcome::revoked);
  EXPECT_EQ(last_fault, AuthFault::foreign_resource) << "a template it never applied for";
}

TEST_F(BackOfficeTest, ARevocationRefusesEveryEarlierTokenAtOnce) {
  ASSERT_EQ(office.approve(shop), AdminOutcome::done);
  const std::string old_token = *office.issue_token(shop);
  ASSERT_EQ(office.revoke(shop), AdminOutcome::done);
  EXPECT_FALSE(office.issue_token(shop).has_value());
  EXPECT_EQ(send(old_token, "a"), AcceptOutcome::revoked);
  EXPECT_EQ(last_fault, AuthFault::none) << "the token itself is sound: the store refuses its epoch";
  ASSERT_EQ(office.approve(shop), AdminOutcome::done) << "a new grant";
  const std::string new_token = *office.issue_token(shop);
  EXPECT_EQ(send(old_token, "a"), AcceptOutcome::revoked) << "still the old epoch";
  EXPECT_EQ(send(new_token, "a"), AcceptOutcome::accepted);
}

TEST_F(BackOfficeTest, StatesMoveOnlyAlongTheirEdges) {
  EXPECT_EQ(office.revoke(shop), AdminOutcome::wrong_state);
  EXPECT_EQ(office.reject(shop), AdminOutcome::done);
  EXPECT_EQ(office.approve(shop), AdminOutcome::wrong_state);
  EXPECT_EQ(office.approve(99), AdminOutcome::not_found);
  EXPECT_EQ(store.business(shop)->state, GrantState::rejected);
  EXPECT_FALSE(office.issue_token(shop).has_value());
}

TEST_F(BackOfficeTest, AnExpiredTokenIsRefusedAndAFreshOneWorks) {
  ASSERT_EQ(office.approve(shop), AdminOutcome::done);
  const std::string token = *office.issue_token(shop);
  clock.advance_to(Time{} + hours(1));
  EXPECT_EQ(send(token, "a"), AcceptOutcome::revoked);
  EXPECT_EQ(last_fault, AuthFault::expired);
  EXPECT_EQ(send(*office.issue_token(shop), "a"), AcceptOutcome::accepted);
}

TEST_F(BackOfficeTest, QuotaLeftAndStatusAreWhatTheStoreHolds) {
  ASSERT_EQ(office.approve(shop), AdminOutcome::done);
  const std::string token = *office.issue_token(shop);
  EXPECT_EQ(send(token, "a"), AcceptOutcome::accepted);
  EXPECT_EQ(send(token, "b"), AcceptOutcome::accepted);
  EXPECT_EQ(send(token, "c"), AcceptOutcome::quota_exhausted);
  const QuotaView q = *office.quota(shop);
  EXPECT_EQ(q.used, 2u);
  EXPECT_EQ(q.left, 0u);
  EXPECT_EQ(q.period_ends, Time{} + hours(24 * 30));
  clock.advance_to(q.period_ends);
  EXPECT_EQ(office.quota(shop)->left, 2u) << "a new period";
  EXPECT_EQ(send(*office.issue_token(shop), "c"), AcceptOutcome::accepted);

  const std::optional<MessageStatus> s = office.status(shop, "otp", "a");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->message.status, Status::pending);
  ASSERT_EQ(s->history.size(), 1u);
  EXPECT_FALSE(office.status(shop, "otp", "zzz").has_value());
  EXPECT_EQ(office.messages({shop, Status::pending, Time{}, kTimeNever, 10}).size(), 3u);
}

}  // namespace
}  // namespace relaysim::sms
