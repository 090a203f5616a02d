#include "sim/sms/directory.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/core/random.h"

namespace relaysim::sim::sms {

namespace {
// A fraction in [0, 1) from a hash.
double fraction(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }
}  // namespace

SimDirectory::SimDirectory(const DirectorySpec& spec, std::uint64_t seed)
    : spec_(spec), seed_(mix64(seed ^ 0x6469726563746f72ULL)), vocabulary_{spec.regions, spec.tags} {}

UserRecord SimDirectory::user(std::uint64_t index) const {
  RELAYSIM_ASSERT(index < spec_.users, "a user of the directory");
  const std::uint64_t h = mix64(seed_ + index * 0x9e3779b97f4a7c15ULL);
  UserRecord u;
  u.recipient = kFirstNumber + index;
  u.region = static_cast<std::uint16_t>(spec_.regions.empty() ? 0 : h % spec_.regions.size());
  u.utc_offset = spec_.utc_offsets.empty() ? 0 : spec_.utc_offsets[(h >> 16) % spec_.utc_offsets.size()];
  u.opt_in = fraction(mix64(h ^ 1)) < spec_.opt_in;
  u.opted_out = fraction(mix64(h ^ 2)) < spec_.opted_out;
  for (std::size_t t = 0; t < spec_.tags.size(); ++t) {
    if (fraction(mix64(h ^ (0x100 + t))) < spec_.tag_share) u.tags |= std::uint64_t{1} << t;
  }
  const auto spread = static_cast<double>(spec_.active_within.count());
  u.last_active = Time{} - Duration(static_cast<Duration::rep>(fraction(mix64(h ^ 3)) * spread));
  return u;
}

std::optional<std::uint64_t> SimDirectory::index_of(Recipient r) const {
  if (r < kFirstNumber || r - kFirstNumber >= spec_.users) return std::nullopt;
  return r - kFirstNumber;
}

void SimDirectory::opt_out(Recipient r) {
  const std::optional<std::uint64_t> i = index_of(r);
  if (!i) return;
  if (opted_out_later_.empty()) opted_out_later_.resize(spec_.users / 64 + 1);
  opted_out_later_[*i / 64] |= std::uint64_t{1} << (*i % 64);
}

std::size_t SimDirectory::read(std::uint64_t from, std::span<UserRecord> out) {
  const std::uint64_t n = from >= spec_.users ? 0 : std::min<std::uint64_t>(out.size(), spec_.users - from);
  for (std::uint64_t i = 0; i < n; ++i) {
    out[i] = user(from + i);
    if (later(from + i)) out[i].opted_out = true;
  }
  return static_cast<std::size_t>(n);
}

bool SimDirectory::opted_out(Recipient r) {
  const std::optional<std::uint64_t> i = index_of(r);
  if (!i) return false;
  return later(*i) || user(*i).opted_out;
}

std::int32_t SimDirectory::utc_offset(Recipient r) {
  const std::optional<std::uint64_t> i = index_of(r);
  return i ? user(*i).utc_offset : 0;
}

}  // namespace relaysim::sim::sms
