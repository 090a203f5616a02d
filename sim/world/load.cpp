#include "sim/world/load.h"

#include "model/core/assert.h"
#include "model/core/short_text.h"

namespace relaysim::sim {

static constexpr std::size_t kRecentKeys = 4096;

LoadGenerator::LoadGenerator(const std::vector<LoadSegment>& segments, std::uint32_t cxids, std::uint64_t seed,
                             Sink sink)
    : segments_(segments), cxids_(cxids), rng_(Rng::derive(seed, "load")), sink_(std::move(sink)) {
  RELAYSIM_ASSERT(cxids > 0, "load needs cxids to send to");
  recent_.reserve(kRecentKeys);
}

void LoadGenerator::install(Kernel& kernel) {
  for (std::uint32_t i = 0; i < segments_.size(); ++i) {
    kernel.at(segments_[i].from, [this, &kernel, i] { arrive(kernel, i); });
  }
}

void LoadGenerator::arrive(Kernel& kernel, std::uint32_t segment) {
  const LoadSegment& s = segments_[segment];
  if (s.burst > 0) {
    for (std::uint64_t n = 0; n < s.burst; ++n) call(s);
    return;
  }
  if (kernel.now() >= s.to || s.rate_per_s <= 0.0) return;
  call(s);
  const double mean_s = 1.0 / s.rate_per_s;
  const double gap_s = s.arrival == Arrival::constant ? mean_s : rng_.exponential(mean_s);
  const Duration gap{std::max<std::int64_t>(1, static_cast<std::int64_t>(gap_s * 1e9))};
  if (kernel.now() + gap < s.to) kernel.after(gap, [this, &kernel, segment] { arrive(kernel, segment); });
}

void LoadGenerator::call(const LoadSegment& s) {
  if (!recent_.empty()) {
    const double u = rng_.uniform01();
    if (u < s.duplicates) {
      emit(recent_[rng_.below(recent_.size())], 0);
      return;
    }
    if (u < s.duplicates + s.conflicts) {
      emit(recent_[rng_.below(recent_.size())], 1 + rng_.below(1000));
      return;
    }
  }
  ClientKey key{static_cast<std::uint32_t>(rng_.below(cxids_)), next_request_++, 0};
  if (recent_.size() < kRecentKeys) {
    recent_.push_back(key);
  } else {
    recent_[recent_next_] = key;
    recent_next_ = (recent_next_ + 1) % kRecentKeys;
  }
  emit(key, 0);
}

void LoadGenerator::emit(const ClientKey& base, std::uint64_t variant) {
  ShortText<32> cxid;
  cxid << "cx" << std::uint64_t{base.cxid};
  ShortText<32> request;
  request << "r" << base.request;
  ShortText<80> payload;
  payload << "{\"seq\":" << base.request;
  if (variant != 0) payload << ",\"variant\":" << variant;
  payload << "}";
  ClientKey key = base;
  key.payload = hash_bytes(payload.view());
  sink_(key, cxid.view(), request.view(), payload.view());
}

}  // namespace relaysim::sim
