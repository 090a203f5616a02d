// Marketing: the rules a marketing message passes just before every submit, and how a campaign is
// expanded into messages.
//
// Just before each submit of a marketing message (model/sms/node.h), in this order:
//  1. the recipient has opted out → suppressed (`opted_out`), however the campaign chose them;
//  2. the recipient's local time is in the quiet hours → deferred to their end, or suppressed
//     (`quiet_hours`) when that is past the message's validity;
//  3. the recipient had `cap.count` other marketing messages in the last `cap.per` (a rolling
//     window, as the strictest providers count it) → suppressed (`frequency_cap`). The store
//     keeps the count and takes a message's place in it atomically, once per message, so two pods
//     cannot both send the last allowed one and a retry of a message is not counted twice.
// Judging at the submit, not when the campaign is expanded, means an opt-out or a quiet hour that
// begins while a message waits is still honoured.
//
// Times of day: the run starts at 00:00 UTC, and a recipient's local time is UTC plus their offset.
#pragma once

#include <cstdint>

#include "model/core/bounds.h"
#include "model/core/time.h"

namespace relaysim::sms {

inline constexpr std::int32_t kMinutesPerDay = 24 * 60;

// No marketing from `from` to `to`, local time, in minutes after midnight; the window may wrap
// midnight (21:00–08:00). from == to: no quiet hours.
struct QuietHours {
  std::int32_t from = 21 * 60;
  std::int32_t to = 8 * 60;
  bool operator==(const QuietHours&) const = default;
};

// At most `count` marketing messages to one recipient in any `per`. count 0: no cap.
struct FrequencyCap {
  std::uint32_t count = 0;
  Duration per = std::chrono::hours(24);
  bool operator==(const FrequencyCap&) const = default;
};

struct MarketingConfig {
  QuietHours quiet_hours{};
  FrequencyCap cap{};
  // A campaign is expanded `chunk` directory users at a time, a chunk every `every`, by whichever
  // pod claims it; each chunk's messages are accepted in one transaction.
  static constexpr Bounds<std::uint32_t> kChunk{1, 100'000};
  std::uint32_t chunk = 1000;
  Duration every = std::chrono::milliseconds(100);
  bool operator==(const MarketingConfig&) const = default;
};

// The earliest moment at or after `now` outside the quiet hours for a recipient `utc_offset`
// minutes east of UTC: `now` itself when it is outside them.
Time quiet_until(Time now, std::int32_t utc_offset, const QuietHours& quiet);

}  // namespace relaysim::sms
