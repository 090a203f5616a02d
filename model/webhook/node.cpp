#include "model/webhook/node.h"

namespace relaysim::webhook {

ResolverConfig resolver_config(const PlatformConfig& c) {
  return ResolverConfig{c.url_cache_ttl, c.url_cache_max_entries, c.lookup_timeout, c.serviceb_breaker};
}

Node::Node(PodId pod, const PlatformConfig& config, NodePorts p)
    : resolver_(pod, resolver_config(config), p.directory, p.clock, p.events),
      relay_(pod, config, p.store, p.clock, p.timers, p.notices, p.events),
      dispatcher_(pod, config, p.store, p.clock, p.timers, p.rng, resolver_, p.http, p.events,
                  [r = &relay_] { r->pump(); }),
      // New work wakes this node's dispatcher at once; other nodes find it when they next look.
      ingest_(pod, config, p.store, p.clock, p.events, [d = &dispatcher_] { d->nudge(); }) {}

}  // namespace relaysim::webhook
