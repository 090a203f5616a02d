#include "sim/sms/marketing_rules.h"

#include <algorithm>
#include <optional>
#include <string>

#include "model/core/assert.h"
#include "sim/report/text.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

Duration MarketingRules::quiet_left(Recipient r, Time at) const {
  const model::QuietHours& q = spec_.platform.marketing.quiet_hours;
  if (q.from == q.to) return Duration::zero();
  RELAYSIM_ASSERT(q.from < model::kMinutesPerDay && q.to < model::kMinutesPerDay, "quiet hours are times of day");
  const std::optional<std::uint64_t> i = directory_.index_of(r);
  const std::int64_t offset = i ? directory_.user(*i).utc_offset : 0;
  constexpr std::int64_t kMinute = 60'000'000'000;
  const std::int64_t day = std::int64_t{model::kMinutesPerDay} * kMinute;
  std::int64_t tod = (to_ns(at) + offset * kMinute) % day;
  if (tod < 0) tod += day;
  const std::int64_t from = std::int64_t{q.from} * kMinute;
  const std::int64_t to = std::int64_t{q.to} * kMinute;
  if (!(from < to ? (tod >= from && tod < to) : (tod >= from || tod < to))) return Duration::zero();
  return Duration{tod < to ? to - tod : day - tod + to};
}

MarketingRules::Places& MarketingRules::cap_places(Recipient r, Time at) {
  // Places are kept in time order, so the ones that left the window (at - per, at] are in front.
  Places& places = cap_places_[r];
  const Duration per = spec_.platform.marketing.cap.per;
  const auto left = std::find_if(places.begin(), places.end(), [&](const auto& p) { return p.first > at - per; });
  places.erase(places.begin(), left);
  return places;
}

bool MarketingRules::holds_place(const Places& places, MessageId id) {
  return std::any_of(places.begin(), places.end(), [&](const auto& p) { return p.second == id; });
}

void MarketingRules::check_cap(const CapTaken& e) {
  const model::FrequencyCap& cap = spec_.platform.marketing.cap;
  if (cap.count == 0) {
    violate_(Invariant::marketing, e.at, e.message, "took a place in a frequency cap, but there is none");
    return;
  }
  Places& places = cap_places(e.recipient, e.at);
  if (holds_place(places, e.message)) return;
  if (places.size() >= cap.count) {
    violate_(Invariant::marketing, e.at, e.message,
             "took place " + std::to_string(places.size() + 1) + " in the frequency cap of " + std::to_string(e.recipient) +
                 " (" + std::to_string(cap.count) + " within " + format_duration(cap.per) + ")");
  }
  // In time order: processes sharing a store may log their places a little out of it.
  const auto after = std::upper_bound(places.begin(), places.end(), e.at, [](Time t, const auto& p) { return t < p.first; });
  places.emplace(after, e.at, e.message);
}

void MarketingRules::check_submit(const SubmitStarted& e) {
  RELAYSIM_ASSERT(e.row.kind == Kind::marketing, "the marketing rules judge marketing messages");
  const Recipient r = e.row.recipient;
  if (directory_.opted_out(r)) {
    violate_(Invariant::marketing, e.at, e.row.id, "submitted to " + std::to_string(r) + ", who opted out of marketing");
  }
  // Quiet hours, worked out here from the recipient's zone on the directory's truth.
  if (quiet_left(r, e.at) > Duration::zero()) {
    const std::optional<std::uint64_t> i = directory_.index_of(r);
    const std::int64_t offset = i ? directory_.user(*i).utc_offset : 0;
    violate_(Invariant::marketing, e.at, e.row.id,
             "submitted in the quiet hours of " + std::to_string(r) + " (UTC" + (offset < 0 ? "" : "+") +
                 std::to_string(offset) + " minutes)");
  }
  const model::FrequencyCap& cap = spec_.platform.marketing.cap;
  if (cap.count != 0 && !holds_place(cap_places(r, e.at), e.row.id)) {
    violate_(Invariant::marketing, e.at, e.row.id,
             "submitted to " + std::to_string(r) + " without a place in the frequency cap's window (" +
                 std::to_string(cap.count) + " within " + format_duration(cap.per) + ")");
  }
}

void MarketingRules::check_suppression(MessageId id, Time send_at, const MessageRow& row, const Completion& c) {
  RELAYSIM_ASSERT(c.status == Status::suppressed, "a suppression's reason is judged");
  const Recipient r = row.recipient;
  switch (c.reason) {
    case Reason::opted_out:
      if (!directory_.opted_out(r)) {
        violate_(Invariant::marketing, c.at, id, "suppressed as opted out, but " + std::to_string(r) + " had not opted out");
      }
      return;
    case Reason::quiet_hours: {
      const Duration left = quiet_left(r, c.at);
      if (left == Duration::zero()) {
        violate_(Invariant::marketing, c.at, id,
                 "suppressed for quiet hours at " + format_time(c.at) + ", outside the quiet hours of " + std::to_string(r));
      } else if (c.at + left <= send_at + spec_.platform.validity) {
        violate_(Invariant::marketing, c.at, id,
                 "suppressed for quiet hours that end at " + format_time(c.at + left) + ", within its validity (until " +
                     format_time(send_at + spec_.platform.validity) + "): it should have waited");
      }
      return;
    }
    case Reason::frequency_cap: {
      const model::FrequencyCap& cap = spec_.platform.marketing.cap;
      Places& places = cap_places(r, c.at);
      if (cap.count == 0) {
        violate_(Invariant::marketing, c.at, id, "suppressed by a frequency cap, but there is none");
      } else if (holds_place(places, id)) {
        violate_(Invariant::marketing, c.at, id, "suppressed by the frequency cap, though it holds a place in it");
      } else if (places.size() < cap.count) {
        violate_(Invariant::marketing, c.at, id,
                 "suppressed by the frequency cap with " + std::to_string(places.size()) + " other marketing messages to " +
                     std::to_string(r) + " within " + format_duration(cap.per) + ", under its " + std::to_string(cap.count));
      }
      return;
    }
    default: return;
  }
}

}  // namespace relaysim::sim::sms
