#include "sim/webhook/serviceb.h"

#include <charconv>

#include "model/core/assert.h"

namespace relaysim::sim::webhook {

ServiceB::ServiceB(const ServiceBSpec& spec, std::uint32_t cxids, std::uint32_t endpoints, std::uint64_t seed)
    : spec_(spec), endpoints_(endpoints), latency_(spec.latency), rng_(Rng::derive(seed, "serviceb")),
      known_(cxids, true), version_(cxids, 1) {
  RELAYSIM_ASSERT(endpoints > 0 && cxids > 0, "a world has endpoints and cxids");
  Rng unknown = Rng::derive(seed, "serviceb/unknown");
  for (std::uint32_t c = 0; c < cxids; ++c) known_[c] = !unknown.chance(spec.unknown_cxids);
}

void ServiceB::install(Kernel& kernel) {
  for (const UrlChange& change : spec_.url_changes) {
    kernel.at(change.at, [this, fraction = change.fraction] {
      for (std::uint32_t c = 0; c < version_.size(); ++c) {
        if (fraction >= 1.0 || rng_.chance(fraction)) ++version_[c];
      }
    });
  }
}

bool ServiceB::in_outage(Time t) const {
  for (const auto& o : spec_.outages) {
    if (o.window.contains(t)) return true;
  }
  return false;
}

Time ServiceB::last_outage_end() const {
  Time last{};
  for (const auto& o : spec_.outages) last = std::max(last, o.window.end());
  return last;
}

ServiceB::Answer ServiceB::lookup(std::uint32_t cxid, Time now, Duration timeout) {
  RELAYSIM_ASSERT(timeout > Duration::zero(), "a lookup has a timeout");
  Answer a;
  a.latency = latency_.sample(rng_);
  for (const auto& o : spec_.outages) {
    if (o.window.contains(now)) {
      a.in_outage = true;
      a.status = LookupStatus::error;
      if (o.mode == OutageMode::timeout) a.latency = timeout;
      a.latency = std::min(a.latency, timeout);
      return a;
    }
  }
  if (a.latency > timeout || rng_.chance(spec_.error_rate)) {
    a.latency = std::min(a.latency, timeout);
    a.status = LookupStatus::error;
    return a;
  }
  if (cxid >= known_.size() || !known_[cxid]) {
    a.status = LookupStatus::not_found;
    return a;
  }
  RELAYSIM_ASSERT(a.latency <= timeout, "an answer comes by the timeout");
  a.status = LookupStatus::found;
  a.version = version(cxid);
  return a;
}

ServiceB::Url ServiceB::url(std::uint32_t cxid, std::uint32_t endpoint, std::uint64_t version) {
  Url u;
  u << "http://ep" << std::uint64_t{endpoint} << ".sim/hooks/cx" << std::uint64_t{cxid} << "/v" << version;
  return u;
}

std::int64_t ServiceB::endpoint_in(std::string_view url) {
  constexpr std::string_view prefix = "http://ep";
  if (url.substr(0, prefix.size()) != prefix) return -1;
  std::uint32_t ep = 0;
  const char* first = url.data() + prefix.size();
  auto [end, ec] = std::from_chars(first, url.data() + url.size(), ep);
  if (ec != std::errc{} || end == first) return -1;
  return ep;
}

std::uint64_t ServiceB::version_in(std::string_view url) {
  const std::size_t slash = url.rfind("/v");
  if (slash == std::string_view::npos) return 0;
  std::uint64_t v = 0;
  const char* first = url.data() + slash + 2;
  const char* last = url.data() + url.size();
  const auto [end, ec] = std::from_chars(first, last, v);
  return ec == std::errc{} && end == last && end != first ? v : 0;
}

std::int64_t ServiceB::cxid_index(std::string_view name) {
  if (name.substr(0, 2) != "cx") return -1;
  std::uint32_t c = 0;
  auto [end, ec] = std::from_chars(name.data() + 2, name.data() + name.size(), c);
  if (ec != std::errc{} || end != name.data() + name.size()) return -1;
  return c;
}

}  // namespace relaysim::sim::webhook
