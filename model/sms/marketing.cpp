#include "model/sms/marketing.h"

#include "model/core/assert.h"

namespace relaysim::sms {

Time quiet_until(Time now, std::int32_t utc_offset, const QuietHours& quiet) {
  RELAYSIM_ASSERT(quiet.from >= 0 && quiet.from < kMinutesPerDay && quiet.to >= 0 && quiet.to < kMinutesPerDay,
                  "quiet hours are times of day");
  if (quiet.from == quiet.to) return now;
  using std::chrono::minutes;
  const Duration day = minutes(kMinutesPerDay);
  const Duration from = minutes(quiet.from);
  const Duration to = minutes(quiet.to);
  Duration tod = (now.time_since_epoch() + minutes(utc_offset)) % day;
  if (tod < Duration::zero()) tod += day;
  const bool quiet_now = from < to ? (tod >= from && tod < to) : (tod >= from || tod < to);
  if (!quiet_now) return now;
  return now + (tod < to ? to - tod : day - tod + to);
}

}  // namespace relaysim::sms
