// LoadGenerator: the platform's clients. Each segment of the load schedule creates requests at
// a constant or Poisson rate (or all at once, for a burst) over cxids drawn uniformly; a fraction
// repeats an earlier call exactly (a duplicate ingest) or repeats its key with another payload
// (a conflict).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/function.h"
#include "model/core/random.h"
#include "sim/kernel/kernel.h"
#include "sim/scenario/scenario.h"
#include "sim/world/truth.h"

namespace relaysim::sim {

class LoadGenerator {
 public:
  using Sink = InplaceFunction<void(const ClientKey&, std::string_view cxid, std::string_view request_id,
                                    std::string_view payload),
                               16>;

  LoadGenerator(const std::vector<LoadSegment>& segments, std::uint32_t cxids, std::uint64_t seed, Sink sink);
  void install(Kernel& kernel);

 private:
  void arrive(Kernel& kernel, std::uint32_t segment);
  void call(const LoadSegment& s);
  void emit(const ClientKey& key, std::uint64_t variant);

  std::vector<LoadSegment> segments_;
  std::uint32_t cxids_;
  Rng rng_;
  Sink sink_;
  std::uint64_t next_request_ = 1;
  std::vector<ClientKey> recent_;  // ring of recent keys, for duplicates and conflicts
  std::size_t recent_next_ = 0;
};

}  // namespace relaysim::sim
