// Directory: the port to the user directory marketing campaigns choose their recipients from —
// who the users are, their attributes a filter may test (model/sms/filter.h), their time zones
// (quiet hours are the recipient's) and who has opted out of marketing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/core/time.h"
#include "model/sms/types.h"

namespace relaysim::sms {

inline constexpr std::size_t kMaxDirectoryNames = 64;  // regions, and tags: each fits a 64-bit mask

// The names a filter may use: the directory's regions and tags, each at most kMaxDirectoryNames.
struct Vocabulary {
  std::vector<std::string> regions;
  std::vector<std::string> tags;
  bool operator==(const Vocabulary&) const = default;
};

// One user as the directory holds them.
struct UserRecord {
  Recipient recipient = 0;
  Time last_active{};            // may be before the run started (negative)
  std::uint64_t tags = 0;        // bit i: vocabulary.tags[i]
  std::int32_t utc_offset = 0;   // minutes east of UTC
  std::uint16_t region = 0;      // index into vocabulary.regions
  bool opt_in = false;           // consented to marketing when they signed up
  bool opted_out = false;        // asked to receive no marketing (STOP), as of the read
};

class Directory {
 public:
  virtual ~Directory() = default;
  virtual const Vocabulary& vocabulary() const = 0;
  // Users are numbered 0 .. size() - 1 in a stable order (a campaign's cursor walks it).
  virtual std::uint64_t size() const = 0;
  // Fills `out` with users from `from` on; returns how many it filled (fewer at the end).
  virtual std::size_t read(std::uint64_t from, std::span<UserRecord> out) = 0;
  // As of now: whether `recipient` asked for no marketing, and its time zone (0 when unknown).
  virtual bool opted_out(Recipient recipient) = 0;
  virtual std::int32_t utc_offset(Recipient recipient) = 0;
};

}  // namespace relaysim::sms
