// MarketingRules: the recipient's side of S-marketing, judged on ground truth the gateway cannot
// see whole: the directory's users as drawn (their time zones) and the run's opt-outs, and per
// recipient the places its marketing messages hold in the frequency cap's window.
//
// It promises that a marketing submit is checked against all three (no opted-out recipient, no
// quiet hours, no submit without a place in the cap's window), that no place is taken past the
// cap, and that a suppression is checked to be true when it was made. It is not a sink of its own but a part of the MessageChecker, which calls it: its checks
// apply only to the messages that checker follows, read the send_at each was accepted with, and
// fall between the message's other checks of the same event (a suppression's after S-schedule's
// expiry check, before S-lifecycle's move).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/sms/events.h"
#include "model/sms/store.h"
#include "model/sms/types.h"
#include "sim/sms/directory.h"
#include "sim/sms/spec.h"
#include "sim/sms/violations.h"

namespace relaysim::sim::sms {

class MarketingRules {
 public:
  // `seed`: the run's, from which the directory's users are drawn.
  MarketingRules(const SmsSpec& spec, std::uint64_t seed, Violations violate)
      : spec_(spec), violate_(violate), directory_(spec.directory, seed) {}

  void opt_out(relaysim::sms::Recipient r) { directory_.opt_out(r); }

  // A marketing message (of a message accepted, followed by the MessageChecker) took a place in
  // the frequency cap, or holds one still in the window: a new place only below the cap's count.
  void check_cap(const relaysim::sms::CapTaken& e);
  // A marketing message's submit: not to a recipient who opted out, not in the recipient's quiet
  // hours, and only while the message holds a place in the cap's window (when there is a cap).
  void check_submit(const relaysim::sms::SubmitStarted& e);
  // Message `id`, accepted to be sent at `send_at`, was suppressed by completion `c`: its reason
  // was true at `c.at`.
  void check_suppression(relaysim::sms::MessageId id, Time send_at, const relaysim::sms::MessageRow& row,
                         const relaysim::sms::Completion& c);

 private:
  using Places = std::vector<std::pair<Time, relaysim::sms::MessageId>>;
  // How long `r`'s quiet hours still last at `at` (zero outside them), from the directory's truth.
  Duration quiet_left(relaysim::sms::Recipient r, Time at) const;
  // `r`'s places in the frequency cap's window at `at`, as the store keeps them (model/sms/store.h).
  Places& cap_places(relaysim::sms::Recipient r, Time at);
  static bool holds_place(const Places& places, relaysim::sms::MessageId id);

  const SmsSpec& spec_;
  Violations violate_;
  SimDirectory directory_;
  // Per recipient, the places its marketing messages hold in the cap's window, oldest first: a
  // message takes one when the gateway says so (CapTaken) unless it holds one still in the window
  // (as many as were taken, not `cap.count` of them: a cap of a million costs nothing more).
  std::unordered_map<relaysim::sms::Recipient, Places> cap_places_;
};

}  // namespace relaysim::sim::sms
