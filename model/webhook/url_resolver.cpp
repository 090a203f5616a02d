#include "model/webhook/url_resolver.h"

#include "model/core/assert.h"
#include "model/webhook/mutants.h"

namespace relaysim::webhook {

UrlResolver::UrlResolver(PodId pod, const ResolverConfig& config, UrlDirectory& directory, Clock& clock,
                         Events& events)
    : pod_(pod),
      config_(config),
      directory_(directory),
      clock_(clock),
      events_(events),
      breaker_(config.breaker, [this](BreakerState from, BreakerState to, Time at) {
        events_.emit(BreakerChanged{pod_, from, to, at});
      }) {
  RELAYSIM_ASSERT(config.max_entries >= 1, "the URL cache holds at least one entry");
}

void UrlResolver::resolve(std::string_view cxid, ResolveCallback done) {
  const Time now = clock_.now();
  if (const std::uint32_t s = find(cxid, hash_bytes(cxid)); s != 0) {
    const Entry& e = entries_[s - 1];
    if (now - e.fetched_at < config_.ttl || planted(mutant::cache_ignores_ttl)) {
      events_.emit(UrlLookedUp{pod_, cxid, true, now});
      done(Resolution{ResolveStatus::found, e.url.view(), e.version, true, now});
      return;
    }
    forget(s - 1);
  }
  events_.emit(UrlLookedUp{pod_, cxid, false, now});
  const Permit permit = breaker_.acquire(now);
  if (!permit.admitted) {
    done(Resolution{ResolveStatus::unavailable, {}, 0, false, now});
    return;
  }
  const std::uint32_t slot = lookups_.acquire();
  Lookup& l = lookups_[slot];
  RELAYSIM_ASSERT(!l.busy, "a free lookup slot is not busy");
  l.busy = true;
  l.permit = permit;
  l.started_at = now;
  l.cxid.assign(cxid);
  l.done = std::move(done);
  directory_.lookup(cxid, config_.lookup_timeout,
                    [this, slot](const LookupResult& r) { finish_lookup(slot, r); });
}

void UrlResolver::finish_lookup(std::uint32_t slot, const LookupResult& r) {
  RELAYSIM_ASSERT(slot < lookups_.size(), "an answer to a lookup this resolver sent");
  Lookup& l = lookups_[slot];
  RELAYSIM_ASSERT(l.busy, "a lookup answered twice");
  const Time now = clock_.now();
  events_.emit(LookupFinished{pod_, l.cxid, r.status, r.version, l.started_at, now});
  breaker_.record(l.permit, r.status != LookupStatus::error, now);
  ResolveCallback done = std::move(l.done);
  l.busy = false;
  lookups_.release(slot);
  switch (r.status) {
    case LookupStatus::found:
      remember(l.cxid, r.url, r.version, planted(mutant::cache_ages_from_answer) ? now : l.started_at);
      done(Resolution{ResolveStatus::found, r.url, r.version, false, now});
      return;
    case LookupStatus::not_found:
      done(Resolution{ResolveStatus::not_found, {}, 0, false, now});
      return;
    case LookupStatus::error:
      done(Resolution{ResolveStatus::unavailable, {}, 0, false, now});
      return;
  }
}

std::uint32_t UrlResolver::find(std::string_view cxid, std::uint64_t hash) const {
  return static_cast<std::uint32_t>(
      index_.find(hash, [&](std::uint64_t s) { return entries_[static_cast<std::uint32_t>(s - 1)].cxid == cxid; }));
}

void UrlResolver::forget(std::uint32_t slot) {
  Entry& e = entries_[slot];
  RELAYSIM_ASSERT(!e.cxid.empty(), "only a cached entry is forgotten");
  index_.erase(hash_bytes(e.cxid), slot + 1);
  e.cxid.clear();
  entries_.release(slot);
}

void UrlResolver::remember(std::string_view cxid, std::string_view url, std::uint64_t version,
                           Time fetched_at) {
  if (config_.ttl <= Duration::zero()) return;
  RELAYSIM_ASSERT(!cxid.empty(), "an empty cxid marks a free cache slot: a cached cxid is not empty");
  const std::uint64_t hash = hash_bytes(cxid);
  std::uint32_t s = find(cxid, hash);
  if (s == 0) {
    if (index_.size() >= config_.max_entries) {
      // Bounded: drop expired entries first; if that frees nothing, start over.
      for (std::uint32_t i = 0; i < entries_.size(); ++i) {
        const Entry& x = entries_[i];
        if (!x.cxid.empty() && fetched_at - x.fetched_at >= config_.ttl) forget(i);
      }
      if (index_.size() >= config_.max_entries) {
        for (std::uint32_t i = 0; i < entries_.size(); ++i) {
          if (!entries_[i].cxid.empty()) forget(i);
        }
      }
    }
    s = entries_.acquire() + 1;
    entries_[s - 1].cxid.assign(cxid);
    index_.insert(hash, s);
  }
  Entry& e = entries_[s - 1];
  e.url.assign(url);
  e.version = version;
  e.fetched_at = fetched_at;
}

}  // namespace relaysim::webhook
