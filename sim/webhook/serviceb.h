// ServiceB, simulated: the external directory holding each cxid's destination URL.
//
// Every known cxid has a URL version, starting at 1 at time zero and bumped by url_changes; the
// URL names the cxid's endpoint and the version. Each lookup is answered with the version held
// when the lookup is sent; the oracle learns it from ServiceBCalled.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/assert.h"
#include "model/core/random.h"
#include "model/core/short_text.h"
#include "model/webhook/ports.h"
#include "sim/kernel/kernel.h"
#include "sim/webhook/spec.h"
#include "sim/world/distribution.h"

namespace relaysim::sim::webhook {

using relaysim::webhook::LookupStatus;

class ServiceB {
 public:
  ServiceB(const ServiceBSpec& spec, std::uint32_t cxids, std::uint32_t endpoints, std::uint64_t seed);

  // Schedules the URL changes on the kernel.
  void install(Kernel& kernel);

  struct Answer {
    LookupStatus status = LookupStatus::error;
    std::uint64_t version = 0;
    Duration latency{};
    bool in_outage = false;
  };
  // Decides the fate of a lookup sent at `now` with `timeout`.
  Answer lookup(std::uint32_t cxid, Time now, Duration timeout);

  bool known(std::uint32_t cxid) const {
    RELAYSIM_ASSERT(cxid < known_.size(), "a cxid of the world");
    return known_[cxid];
  }
  // Does ServiceB hold a URL for the cxid named `name`? Its index, or -1.
  std::int64_t known_index(std::string_view name) const {
    const std::int64_t c = cxid_index(name);
    return c >= 0 && static_cast<std::uint64_t>(c) < known_.size() && known_[static_cast<std::size_t>(c)] ? c : -1;
  }
  std::uint32_t endpoint_of(std::uint32_t cxid) const { return cxid % endpoints_; }
  std::uint64_t version(std::uint32_t cxid) const {
    RELAYSIM_ASSERT(cxid < version_.size(), "a cxid of the world");
    return version_[cxid];
  }
  bool in_outage(Time t) const;
  Time last_outage_end() const;
  const std::vector<Outage>& outages() const { return spec_.outages; }

  using Url = ShortText<96>;
  static Url url(std::uint32_t cxid, std::uint32_t endpoint, std::uint64_t version);
  static void url_for(std::uint32_t cxid, std::uint32_t endpoint, std::uint64_t version, std::string& out) {
    out.assign(url(cxid, endpoint, version).view());
  }
  // The endpoint a URL points at, or -1 for a host we do not know.
  static std::int64_t endpoint_in(std::string_view url);
  // The version a URL of ours names (its "/v<n>" tail), or 0.
  static std::uint64_t version_in(std::string_view url);
  static std::string cxid_name(std::uint32_t cxid) { return "cx" + std::to_string(cxid); }
  // Inverse of cxid_name; -1 when not one of ours.
  static std::int64_t cxid_index(std::string_view name);

 private:
  ServiceBSpec spec_;
  std::uint32_t endpoints_;
  Latency latency_;
  Rng rng_;
  std::vector<bool> known_;
  std::vector<std::uint64_t> version_;  // per cxid: the version it holds now
};

}  // namespace relaysim::sim::webhook
