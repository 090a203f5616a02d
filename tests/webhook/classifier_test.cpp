#include <gtest/gtest.h>

#include "model/webhook/classifier.h"

namespace relaysim::webhook {
namespace {

Classification status(int s, const ClassificationTable& t = {}) { return classify(t, HttpResult{NetError::none, s, Duration{-1}, {}}); }
Classification error(NetError e, const ClassificationTable& t = {}) { return classify(t, HttpResult{e, 0, Duration{-1}, {}}); }

TEST(Classifier, DefaultTableFollowsTheDesign) {
  EXPECT_EQ(status(200).verdict, Verdict::delivered);
  EXPECT_EQ(status(204).verdict, Verdict::delivered);
  EXPECT_EQ(status(200).reason, Reason::ok);
  for (int s : {408, 425, 429, 500, 502, 503, 504}) EXPECT_EQ(status(s).verdict, Verdict::retry) << s;
  EXPECT_EQ(status(410).verdict, Verdict::terminal);
  EXPECT_EQ(status(410).reason, Reason::gone);
  for (int s : {400, 401, 403, 404, 422}) {
    EXPECT_EQ(status(s).verdict, Verdict::terminal) << s;
    EXPECT_EQ(status(s).reason, Reason::client_error) << s;
  }
  EXPECT_EQ(status(301).verdict, Verdict::retry);  // a redirect is a failure, not followed
  EXPECT_EQ(status(100).verdict, Verdict::retry);
  for (NetError e : {NetError::timeout, NetError::connect_error, NetError::dns_error}) {
    EXPECT_EQ(error(e).verdict, Verdict::retry);
  }
  // Nothing was sent, and another attempt would meet the same URL: terminal at once, each with
  // its own reason (a bad URL was once a connect_error, retried until the deadline).
  EXPECT_EQ(error(NetError::forbidden_address).verdict, Verdict::terminal);
  EXPECT_EQ(error(NetError::forbidden_address).reason, Reason::forbidden_address);
  EXPECT_EQ(error(NetError::bad_url).verdict, Verdict::terminal);
  EXPECT_EQ(error(NetError::bad_url).reason, Reason::bad_url);
  // Nothing was sent because the claim's lease ended first: the URL is not at fault, so it is
  // retried whatever the table says of errors (the store ignores it if another claim holds the
  // request by then).
  ClassificationTable strict;
  strict.timeout = strict.connect_error = strict.dns_error = Verdict::terminal;
  EXPECT_EQ(error(NetError::too_late, strict).verdict, Verdict::retry);
  EXPECT_EQ(error(NetError::too_late, strict).reason, Reason::none);
}

TEST(Classifier, OverridesByStatusBeatOverridesByClass) {
  ClassificationTable t;
  t.by_class[4] = Verdict::retry;
  t.by_status[404] = Verdict::terminal;
  EXPECT_EQ(status(400, t).verdict, Verdict::retry);
  EXPECT_EQ(status(404, t).verdict, Verdict::terminal);
  t.by_class[5] = Verdict::terminal;
  EXPECT_EQ(status(503, t).verdict, Verdict::terminal);
  EXPECT_EQ(status(503, t).reason, Reason::rejected);
}

}  // namespace
}  // namespace relaysim::webhook
