#include "sim/webhook/load.h"

#include <charconv>

#include "model/core/assert.h"
#include "model/core/short_text.h"

namespace relaysim::sim::webhook {

static constexpr std::size_t kRecentKeys = 4096;

namespace {
std::vector<ArrivalSpec> arrivals_of(const std::vector<LoadSegment>& segments) {
  std::vector<ArrivalSpec> out;
  for (const LoadSegment& s : segments) out.push_back(s.arrivals);
  return out;
}
}  // namespace

LoadGenerator::LoadGenerator(const std::vector<LoadSegment>& segments, std::uint32_t cxids, std::uint64_t seed,
                             Sink sink)
    : segments_(segments),
      cxids_(cxids),
      rng_(Rng::derive(seed, "load")),
      sink_(std::move(sink)),
      arrivals_(arrivals_of(segments), rng_, [this](std::uint32_t segment) { call(segment); }) {
  RELAYSIM_ASSERT(cxids > 0, "load needs cxids to send to");
  recent_.reserve(kRecentKeys);
  for (const LoadSegment& s : segments_) {
    zipf_.push_back(s.tenant_skew > 0 ? std::optional<Zipf>(Zipf(cxids, s.tenant_skew)) : std::nullopt);
  }
}

std::uint32_t LoadGenerator::pick_cxid(std::uint32_t segment) {
  if (!zipf_[segment]) return static_cast<std::uint32_t>(rng_.below(cxids_));
  // Rank k to a cxid through a fixed shuffle (multiplying by a prime larger than any count of
  // cxids is a bijection mod cxids), so the busiest tenants are spread over the endpoint groups
  // rather than all in the first.
  constexpr std::uint64_t kPrime = 1'000'000'007;
  static_assert(kPrime > kMaxCxids, "the shuffle needs a prime above every count of cxids");
  const std::uint64_t rank = zipf_[segment]->draw(rng_);
  return static_cast<std::uint32_t>((rank - 1) * kPrime % cxids_);
}

std::string LoadGenerator::key_text(std::uint32_t cxid, std::uint64_t name) {
  return "(cx" + std::to_string(cxid) + ", r" + std::to_string(name) + ")";
}

std::uint64_t LoadGenerator::key_in(std::string_view payload) {
  constexpr std::string_view prefix = "{\"seq\":";
  if (payload.substr(0, prefix.size()) != prefix) return 0;
  std::uint64_t k = 0;
  const char* first = payload.data() + prefix.size();
  const char* last = payload.data() + payload.size();
  const auto [end, ec] = std::from_chars(first, last, k);
  if (ec != std::errc{} || end == first || end == last || (*end != '}' && *end != ',')) return 0;
  return k;
}

void LoadGenerator::call(std::uint32_t segment) {
  RELAYSIM_ASSERT(segment < segments_.size(), "a segment of the load");
  const LoadSegment& s = segments_[segment];
  if (!recent_.empty()) {
    const double u = rng_.uniform01();
    if (u < s.duplicates) {
      emit(recent_[rng_.below(recent_.size())].key, 0);
      return;
    }
    if (u < s.duplicates + s.conflicts) {
      emit(recent_[rng_.below(recent_.size())].key, 1 + rng_.below(1000));
      return;
    }
    if (u < s.duplicates + s.conflicts + s.shared_ids) {
      // The next cxid after the earlier key's that has not used its request_id yet: the new key
      // must be a new (cxid, request_id). A key that already shares another's name, or whose
      // name every cxid has used, gives way to a fresh key.
      Recent& earlier = recent_[rng_.below(recent_.size())];
      if (earlier.key.name == earlier.key.request && earlier.shares + 1 < cxids_) {
        ++earlier.shares;
        const ClientKey key{(earlier.key.cxid + earlier.shares) % cxids_, next_request_++, 0, earlier.key.name};
        remember(key);
        emit(key, 0);
        return;
      }
    }
  }
  const ClientKey key{pick_cxid(segment), next_request_, 0, next_request_};
  ++next_request_;
  remember(key);
  emit(key, 0);
}

void LoadGenerator::remember(const ClientKey& key) {
  if (recent_.size() < kRecentKeys) {
    recent_.push_back({key, 0});
  } else {
    RELAYSIM_ASSERT(recent_next_ < recent_.size(), "the ring's next place is in the ring");
    recent_[recent_next_] = {key, 0};
    recent_next_ = (recent_next_ + 1) % kRecentKeys;
  }
}

void LoadGenerator::emit(const ClientKey& base, std::uint64_t variant) {
  ShortText<32> cxid;
  cxid << "cx" << std::uint64_t{base.cxid};
  ShortText<32> request;
  request << "r" << base.name;
  ShortText<80> payload;
  payload << "{\"seq\":" << base.request;
  if (variant != 0) payload << ",\"variant\":" << variant;
  payload << "}";
  ClientKey key = base;
  key.payload = hash_bytes(payload.view());
  sink_(key, cxid.view(), request.view(), payload.view());
}

}  // namespace relaysim::sim::webhook
