// LoadGenerator: the platform's clients. They call at the times the load schedule says
// (sim/world/arrivals.h), over cxids drawn uniformly; a share of calls repeats an earlier call
// exactly (a duplicate ingest), repeats its key with another payload (a conflict), or reuses its
// request_id under another cxid (a new key that only looks like the old one).
//
// Names: cxid n is "cx<n>", the request with key number k is "r<k>" (a key sharing another's
// request_id is named as that one), and its payload {"seq":k} (with a variant for conflicts).
// The oracle names requests to users the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/function.h"
#include "model/core/random.h"
#include "sim/kernel/kernel.h"
#include "sim/webhook/spec.h"
#include "sim/webhook/truth.h"
#include "sim/world/arrivals.h"
#include "sim/world/zipf.h"

namespace relaysim::sim::webhook {

class LoadGenerator {
 public:
  using Sink = InplaceFunction<void(const ClientKey&, std::string_view cxid, std::string_view request_id,
                                    std::string_view payload),
                               16>;

  LoadGenerator(const std::vector<LoadSegment>& segments, std::uint32_t cxids, std::uint64_t seed, Sink sink);
  void install(Kernel& kernel) { arrivals_.install(kernel); }

  // "(cx3, r45)": a client key as the client wrote it (`name`: ClientKey::name).
  static std::string key_text(std::uint32_t cxid, std::uint64_t name);
  // The key number a payload was written for (the inverse of emit's {"seq":k...}); 0 when the
  // text is no payload of ours.
  static std::uint64_t key_in(std::string_view payload);

 private:
  void call(std::uint32_t segment);
  void emit(const ClientKey& key, std::uint64_t variant);
  void remember(const ClientKey& key);

  // A new call's cxid: uniform, or by Zipf's law under the segment's tenant_skew.
  std::uint32_t pick_cxid(std::uint32_t segment);

  std::vector<LoadSegment> segments_;
  std::vector<std::optional<Zipf>> zipf_;  // per segment: its skew, if any
  std::uint32_t cxids_;
  Rng rng_;
  Sink sink_;
  Arrivals arrivals_;
  std::uint64_t next_request_ = 1;
  struct Recent {
    ClientKey key;
    std::uint32_t shares = 0;  // later keys that took its request_id (cxids key.cxid + 1, + 2, ...)
  };
  std::vector<Recent> recent_;  // ring of recent keys, for duplicates, conflicts and shared ids
  std::size_t recent_next_ = 0;
};

}  // namespace relaysim::sim::webhook
