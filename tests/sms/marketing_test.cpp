// The marketing rules' parts that stand alone: the campaign filter language (model/sms/filter.h)
// and quiet hours in the recipient's time zone (model/sms/marketing.h).
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "model/sms/filter.h"
#include "model/sms/marketing.h"

namespace relaysim::sms {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

const Vocabulary kWords{{"north", "south", "east", "west"}, {"vip", "new", "churned"}};
constexpr Time kNoon = Time{} + hours(12);

Filter parsed(std::string_view text) {
  auto r = Filter::parse(text, kWords);
  if (const auto* e = std::get_if<FilterError>(&r)) {
    ADD_FAILURE() << "'" << text << "' did not parse: " << e->message << " at " << e->column();
    return std::get<Filter>(Filter::parse("all", kWords));
  }
  return std::get<Filter>(std::move(r));
}

FilterError error_of(std::string_view text) {
  auto r = Filter::parse(text, kWords);
  if (const auto* e = std::get_if<FilterError>(&r)) return *e;
  ADD_FAILURE() << "'" << text << "' parsed";
  return {};
}

UserRecord user(std::uint16_t region, std::uint64_t tags, bool opt_in, Duration idle) {
  UserRecord u;
  u.region = region;
  u.tags = tags;
  u.opt_in = opt_in;
  u.last_active = kNoon - idle;
  return u;
}

TEST(Filter, EachTestChoosesWhatItSays) {
  const UserRecord vip_north = user(0, 1, true, hours(24));
  const UserRecord churned_west = user(3, 4, false, hours(24 * 200));
  EXPECT_TRUE(parsed("all").matches(churned_west, kNoon));
  EXPECT_TRUE(parsed("opt_in").matches(vip_north, kNoon));
  EXPECT_FALSE(parsed("opt_in").matches(churned_west, kNoon));
  EXPECT_TRUE(parsed("region = north").matches(vip_north, kNoon));
  EXPECT_FALSE(parsed("region != north").matches(vip_north, kNoon));
  EXPECT_TRUE(parsed("region in [south, \"west\"]").matches(churned_west, kNoon));
  EXPECT_FALSE(parsed("region in [south, east]").matches(churned_west, kNoon));
  EXPECT_TRUE(parsed("tags has vip").matches(vip_north, kNoon));
  EXPECT_FALSE(parsed("tags has churned").matches(vip_north, kNoon));
  EXPECT_TRUE(parsed("last_active < 2d").matches(vip_north, kNoon));
  EXPECT_FALSE(parsed("last_active < 1d").matches(vip_north, kNoon)) << "exactly a day ago is not within a day";
  EXPECT_TRUE(parsed("last_active > 180d").matches(churned_west, kNoon));
  EXPECT_FALSE(parsed("last_active > 180d").matches(vip_north, kNoon));
}

TEST(Filter, AndBindsTighterThanOrAndNotTighterThanBoth) {
  const UserRecord u = user(0, 0, false, hours(1));  // north, no tags, not opted in
  EXPECT_TRUE(parsed("opt_in and tags has vip or region = north").matches(u, kNoon));
  EXPECT_FALSE(parsed("opt_in and (tags has vip or region = north)").matches(u, kNoon));
  EXPECT_TRUE(parsed("not opt_in and region = north").matches(u, kNoon));
  EXPECT_FALSE(parsed("not (opt_in or region = north)").matches(u, kNoon));
  EXPECT_TRUE(parsed("not not region = north").matches(u, kNoon));
}

TEST(Filter, ErrorsSayWhatAndWhere) {
  FilterError e = error_of("opt_in and region = nowhere");
  EXPECT_EQ(e.column(), 21u);
  EXPECT_NE(e.message.find("no region is named 'nowhere'"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("north, south, east, west"), std::string::npos) << e.message;
  e = error_of("tags has vip and");
  EXPECT_EQ(e.column(), 17u);
  EXPECT_NE(e.message.find("the end"), std::string::npos) << e.message;
  e = error_of("last_active < 30 days");
  EXPECT_EQ(e.column(), 15u);
  EXPECT_EQ(error_of("region in [north east]").column(), 18u);
  EXPECT_EQ(error_of("(opt_in").column(), 8u);
  EXPECT_EQ(error_of("opt_in)").column(), 7u);
  EXPECT_EQ(error_of("opt_in & vip").column(), 8u);
  EXPECT_EQ(error_of("region = \"north").column(), 10u);
  EXPECT_EQ(error_of("").column(), 1u);
  EXPECT_EQ(error_of("tags hs vip").column(), 6u);
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "not ";
  deep += "all";
  EXPECT_NE(error_of(deep).message.find("nested"), std::string::npos);
  std::string long_text(5000, ' ');
  long_text += "all";
  EXPECT_NE(error_of(long_text).message.find("at most"), std::string::npos);
}

// Two answers pending per level of `a or b and (...)`: the deepest such filter the parser takes
// is evaluated (63 pending, within the evaluator's 64), and one level more is refused where it
// starts, never handed to the evaluator.
TEST(Filter, TheDeepestNestingTheParserTakesFitsTheEvaluatorsStack) {
  const auto nested = [](int levels) {
    std::string text;
    for (int i = 0; i < levels; ++i) text += "opt_in or region = north and (";
    text += "all";
    for (int i = 0; i < levels; ++i) text += ")";
    return text;
  };
  const UserRecord u = user(0, 0, false, hours(1));
  EXPECT_TRUE(parsed(nested(Filter::kMaxDepth - 1)).matches(u, kNoon));
  const std::string too_deep = nested(Filter::kMaxDepth);
  const FilterError e = error_of(too_deep);
  EXPECT_NE(e.message.find("nested more than"), std::string::npos) << e.message;
  EXPECT_LT(e.offset, too_deep.size());
}

TEST(QuietHours, AreTheRecipientsAndMayWrapMidnight) {
  const QuietHours night{21 * 60, 8 * 60};
  const Time day = Time{} + hours(24 * 3);
  EXPECT_EQ(quiet_until(day + hours(12), 0, night), day + hours(12)) << "noon is not quiet";
  EXPECT_EQ(quiet_until(day + hours(22), 0, night), day + hours(32)) << "22:00 waits for 08:00 tomorrow";
  EXPECT_EQ(quiet_until(day + hours(3), 0, night), day + hours(8));
  EXPECT_EQ(quiet_until(day + hours(8), 0, night), day + hours(8)) << "quiet until 08:00, not through it";
  EXPECT_EQ(quiet_until(day + hours(21), 0, night), day + hours(32)) << "quiet from 21:00 on";
  // 14:00 UTC is 22:00 in UTC+08:00: quiet until 08:00 there, which is 00:00 UTC.
  EXPECT_EQ(quiet_until(day + hours(14), 8 * 60, night), day + hours(24));
  // 02:00 UTC is 21:00 the day before in UTC-05:00.
  EXPECT_EQ(quiet_until(day + hours(2), -5 * 60, night), day + hours(13));
  const QuietHours lunch{12 * 60, 13 * 60 + 30};
  EXPECT_EQ(quiet_until(day + hours(12) + minutes(10), 0, lunch), day + hours(13) + minutes(30));
  EXPECT_EQ(quiet_until(day + hours(14), 0, lunch), day + hours(14));
  EXPECT_EQ(quiet_until(day + hours(22), 0, QuietHours{0, 0}), day + hours(22)) << "from == to: never quiet";
}

}  // namespace
}  // namespace relaysim::sms
