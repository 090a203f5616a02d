// SimDirectory: the simulated user directory marketing campaigns choose from. Every user's
// attributes are a pure function of the seed and their number, so a directory of millions costs
// no memory and the oracle can rebuild any user's truth on its own; only opt-outs made during the
// run are kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/core/events.h"
#include "model/sms/directory.h"
#include "sim/world/arrivals.h"

namespace relaysim::sim::sms {

using relaysim::sms::Recipient;
using relaysim::sms::UserRecord;

struct DirectorySpec {
  std::uint64_t users = 0;  // 0: no directory (campaigns choose nobody)
  std::vector<std::string> regions{"north", "south", "east", "west"};
  std::vector<std::string> tags{"vip", "new", "churned"};
  std::vector<std::int32_t> utc_offsets{0};  // minutes east of UTC; each user has one of them
  double tag_share = 0.2;       // each tag's share of users
  double opt_in = 0.8;          // share who consented to marketing at sign-up
  double opted_out = 0.02;      // share who had opted out before the run
  Duration active_within = std::chrono::hours(24 * 90);  // last_active is spread over this before the run
  ArrivalSpec opt_outs{};       // users opting out during the run
  bool operator==(const DirectorySpec&) const = default;
};

// A user opted out of marketing (ground truth).
struct OptedOut {
  Recipient recipient;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(43);
    fp.mix(recipient);
  }
};

class SimDirectory final : public relaysim::sms::Directory {
 public:
  // The directory's phone numbers: kFirstNumber + the user's number.
  static constexpr Recipient kFirstNumber = 4'470'000'000'000;

  SimDirectory(const DirectorySpec& spec, std::uint64_t seed);

  // User `index` as the directory held them at the start of the run.
  UserRecord user(std::uint64_t index) const;
  std::optional<std::uint64_t> index_of(Recipient r) const;
  // Opts `r` out from now on.
  void opt_out(Recipient r);

  const relaysim::sms::Vocabulary& vocabulary() const override { return vocabulary_; }
  std::uint64_t size() const override { return spec_.users; }
  std::size_t read(std::uint64_t from, std::span<UserRecord> out) override;
  bool opted_out(Recipient r) override;
  std::int32_t utc_offset(Recipient r) override;

 private:
  const DirectorySpec& spec_;
  std::uint64_t seed_;
  relaysim::sms::Vocabulary vocabulary_;
  // A bit per user who opted out during the run, allocated at the first opt-out.
  std::vector<std::uint64_t> opted_out_later_;
  bool later(std::uint64_t index) const {
    return !opted_out_later_.empty() && (opted_out_later_[index / 64] >> (index % 64) & 1U) != 0;
  }
};

}  // namespace relaysim::sim::sms
