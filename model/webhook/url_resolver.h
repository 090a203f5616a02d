// UrlResolver: a cxid's destination URL, from ServiceB through a per-pod TTL cache and a
// circuit breaker.
//
// Promises:
//  - A cache entry is served only while younger than the TTL (never stale). Its age counts from
//    the moment the lookup was sent, so every attempt's URL is one ServiceB held at some moment
//    in the TTL before the attempt.
//  - While the breaker rejects, ServiceB gets no call and the answer is `unavailable` at once.
//  - `not_found` (ServiceB answered: unknown cxid) counts as a healthy ServiceB call.
//  - `done` is called exactly once; on a cache hit or a rejection, before resolve() returns. The
//    Resolution says when it was decided, and what follows from it happens at that moment.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/flat_index.h"
#include "model/core/inline_text.h"
#include "model/core/ports.h"
#include "model/webhook/ports.h"
#include "model/core/slot_pool.h"
#include "model/resilience/breaker.h"
#include "model/webhook/events.h"

namespace relaysim::webhook {

enum class ResolveStatus : std::uint8_t { found, not_found, unavailable };

struct Resolution {
  ResolveStatus status = ResolveStatus::unavailable;
  std::string_view url;  // valid during the callback only
  std::uint64_t version = 0;
  bool cache_hit = false;
  // When it was decided: the cache consulted, the breaker refusing, ServiceB's answer arriving
  // (LookupFinished::at). What the caller does with it happens at this moment, not at a later
  // reading of the clock: a live clock moves on between two readings, and an attempt stamped
  // later would use a cache entry past its TTL, or an answer that took longer than the TTL after
  // it arrived — which the oracle's W-url rightly refuses.
  Time at{};
};

using ResolveCallback = InplaceFunction<void(const Resolution&), 32>;

struct ResolverConfig {
  Duration ttl = std::chrono::minutes(2);
  std::size_t max_entries = 100'000;
  Duration lookup_timeout = std::chrono::seconds(2);
  BreakerConfig breaker{};
};

class UrlResolver {
 public:
  UrlResolver(PodId pod, const ResolverConfig& config, UrlDirectory& directory, Clock& clock, Events& events);

  void resolve(std::string_view cxid, ResolveCallback done);

  const CircuitBreaker& breaker() const { return breaker_; }

 private:
  // Every hit reads all of it: a URL of up to 32 bytes lives inside (InlineText) — the
  // simulator's are, for fewer than 1,000 endpoints and cxids — so such a hit costs one cold load
  // fewer than a std::string's separate text.
  struct Entry {
    Time fetched_at{};
    std::uint64_t version = 0;
    std::string cxid;  // empty: a free slot
    InlineText url;
  };
  // One outstanding ServiceB lookup. The port callback captures only (this, slot index), so the
  // table is bounded by the pod's concurrency and nothing is allocated per lookup once warm.
  struct Lookup {
    bool busy = false;
    Permit permit;
    Time started_at{};
    std::string cxid;
    ResolveCallback done;
  };
  void finish_lookup(std::uint32_t slot, const LookupResult& result);
  std::uint32_t find(std::string_view cxid, std::uint64_t hash) const;  // slot + 1, or 0
  void forget(std::uint32_t slot);
  void remember(std::string_view cxid, std::string_view url, std::uint64_t version, Time fetched_at);

  PodId pod_;
  ResolverConfig config_;
  UrlDirectory& directory_;
  Clock& clock_;
  Events& events_;
  CircuitBreaker breaker_;
  // The cache: entries in a slab, found by hash_bytes(cxid) (confirmed against the entry's cxid).
  SlotPool<Entry> entries_;
  FlatIndex index_;  // hash_bytes(cxid) -> slot + 1
  SlotPool<Lookup> lookups_;
};

}  // namespace relaysim::webhook
