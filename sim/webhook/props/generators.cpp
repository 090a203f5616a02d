#include "sim/webhook/props/generators.h"

#include "sim/props/draw.h"
#include "sim/props/faults.h"
#include "sim/webhook/spec.h"

#include <algorithm>

namespace relaysim::sim::webhook::props {

using namespace std::chrono;
using relaysim::props::draw_crashes;
using relaysim::props::draw_pauses;
using relaysim::props::draw_store_faults;
using relaysim::props::draw_window;
using relaysim::props::ms;
using relaysim::props::percent;
using relaysim::props::sec;

namespace {

// A backoff that does not grow waits at least deadline / 100: a request that fails until its
// deadline (an endpoint down for ever, a ServiceB outage as long as the deadline) is then at most
// about a hundred attempts or deferrals, not a million for a case of a few thousand requests.
void bound_attempts(BackoffPolicy& b, Duration deadline) {
  if (b.kind != BackoffKind::fixed && b.multiplier >= 1.5) return;
  b.initial = std::max(b.initial, deadline / 100);
  b.max_interval = std::max(b.max_interval, b.initial);
}

BackoffPolicy backoff() {
  BackoffPolicy b;
  b.kind = *rc::gen::element(BackoffKind::exponential, BackoffKind::fixed);
  b.initial = ms(100, 5000);
  b.multiplier = *rc::gen::element(1.0, 1.5, 2.0, 3.0);
  b.max_interval = std::max(b.initial, sec(5, 120));
  b.jitter = *rc::gen::element(Jitter::none, Jitter::full, Jitter::equal, Jitter::decorrelated);
  return b;
}

// The swarm: which kinds of trouble this case may contain. (Store faults: the store busy, full or
// failing for a while, and crashes in the middle of a store write.)
// Sparse: a handful of lone requests instead of steady load, so nothing but the platform's own
// timers wakes a pod. FlakyServiceB: ServiceB fails a share of lookups and answers slowly while
// URLs flap, so breakers hover near their thresholds and cache entries age across URL changes.
// Retention: the platform forgets finished requests during the run. Replays: an operator replays
// failed and dead-lettered requests at random times. SharedIds: clients reuse request_ids under
// other cxids. AllDown: every pod is down at once while a burst of creates, duplicates and
// conflicts arrives; the clients repeat those keys once the pods are back. Pause: a pod frozen (a
// GC pause, a stopped VM) about as long as its claims' lease or the URL cache's TTL, so it wakes
// to claims another pod may hold and to answers that have aged.
enum Feature { kCrash, kOutage, kEndpointDown, kLostResponses, kStorm429, kUrlChanges, kUnknownCxids,
               kDuplicates, kBlackholes, kErrors, kStoreFaults, kSparse, kFlakyServiceB, kRetention, kReplays,
               kSharedIds, kAllDown, kPause, kFeatureCount };

// One case, drawn step by step. The steps run in the order `scenarios` calls them, and each one's
// draws in the order written: the draws' order is the case, so the same seed gives the same case.
struct Draw {
  const std::vector<bool>& on;  // the swarm's switches, by Feature
  GenOptions options;
  Scenario& s;
  WebhookSpec& w;
  relaysim::webhook::PlatformConfig& p;
  ServiceBSpec& b;
  Duration load_end{};  // the load arrives before it
  Time last_fault{};    // when the last fault, burst or replay is over: the heal phase starts here

  Draw(const std::vector<bool>& switches, GenOptions opts, Scenario& scenario)
      : on(switches), options(opts), s(scenario), w(spec_of(scenario)), p(w.platform), b(w.serviceb) {}

  void platform() {
    p.pods = *rc::gen::inRange(1, 5);
    p.concurrency_per_pod = *rc::gen::inRange(1, 17);
    p.lookup_timeout = ms(100, 2000);
    p.http_timeout = ms(500, 10'000);
    if (options.force_short_lease) {
      p.allow_unsafe_lease = true;
      p.lease = std::max<Duration>(milliseconds(100), (p.lookup_timeout + p.http_timeout) * *rc::gen::inRange(1, 9) / 10);
    } else {
      p.lease = p.lookup_timeout + p.http_timeout + sec(1, 60);
    }
    p.retry.backoff = backoff();
    p.retry.deadline = sec(60, 600);
    p.retry.retry_after_max = sec(10, 300);
    p.dependency_backoff = backoff();
    bound_attempts(p.retry.backoff, p.retry.deadline);
    bound_attempts(p.dependency_backoff, p.retry.deadline);
    p.url_cache_ttl = ms(0, 120'000);
    p.serviceb_breaker.window = sec(2, 30);
    p.serviceb_breaker.min_calls = *rc::gen::inRange(1, 21);
    p.serviceb_breaker.failure_rate = percent(20, 100);
    p.serviceb_breaker.open_for = sec(1, 30);
    p.serviceb_breaker.half_open_probes = *rc::gen::inRange(1, 4);
  }

  void load() {
    // Load: one to three segments within the first few minutes (or, sparse, one to three lone
    // requests).
    load_end = sec(30, 240);
    for (int n = *rc::gen::inRange(1, 4); n > 0 && on[kSparse]; --n) {
      LoadSegment lone;
      lone.arrivals.burst = 1;
      lone.arrivals.from = Time{} + ms(0, duration_cast<milliseconds>(load_end).count());
      lone.arrivals.to = lone.arrivals.from;
      w.load.push_back(lone);
    }
    for (int n = on[kSparse] ? 0 : *rc::gen::inRange(1, 4); n > 0; --n) {
      LoadSegment l;
      l.arrivals.from = Time{} + ms(0, duration_cast<milliseconds>(load_end).count() / 2);
      l.arrivals.to = l.arrivals.from + sec(10, 60);
      l.arrivals.rate_per_s = *rc::gen::inRange(1, 101) / 10.0;
      l.arrivals.arrival = *rc::gen::element(Arrival::poisson, Arrival::constant, Arrival::bursty);
      if (l.arrivals.arrival == Arrival::bursty) l.arrivals.spell = sec(1, 10);
      // A shaped rate now and then: a ramp up or down, and a cycle of a few seconds.
      if (l.arrivals.arrival != Arrival::bursty && *rc::gen::inRange(0, 4) == 0) {
        l.arrivals.ramp_to_per_s = *rc::gen::inRange(0, 101) / 10.0;
        if (*rc::gen::arbitrary<bool>()) {
          l.arrivals.swing = percent(10, 100);
          l.arrivals.period = sec(1, 20);
          l.arrivals.peak_at = sec(0, 20);
        }
      }
      if (on[kDuplicates]) l.duplicates = percent(0, 20);
      if (on[kDuplicates]) l.conflicts = percent(0, 5);
      if (on[kSharedIds]) l.shared_ids = percent(0, 20);
      w.load.push_back(l);
    }
    if (on[kDuplicates] && *rc::gen::arbitrary<bool>()) {
      LoadSegment burst;
      burst.arrivals.burst = *rc::gen::inRange(1, 200);
      burst.arrivals.from = Time{} + ms(0, duration_cast<milliseconds>(load_end).count());
      burst.arrivals.to = burst.arrivals.from;
      if (on[kSharedIds]) burst.shared_ids = percent(0, 30);
      w.load.push_back(burst);
    }
    last_fault = Time{} + load_end;
  }

  void all_down() {
    if (on[kAllDown]) {
      // Every pod crashes at once and stays down at least `gap`. (A pod already down then, by a
      // crash of kCrash, may come back sooner: then some of these calls find it.)
      const Time at = Time{} + sec(0, 200);
      const Duration gap = sec(1, 60);
      for (std::uint32_t pod = 0; pod < p.pods; ++pod) {
        CrashFault c;
        c.at = at;
        c.pod = pod;
        c.restart_after = gap + sec(0, 30);
        s.crashes.push_back(c);
        last_fault = std::max(last_fault, c.at + c.restart_after);
      }
      // Calls while no pod is up: new keys, repeats and conflicts, all refused...
      LoadSegment refused;
      refused.arrivals.burst = *rc::gen::inRange(1, 100);
      refused.arrivals.from = at + ms(1, duration_cast<milliseconds>(gap).count() - 1);  // after the crashes
      refused.arrivals.to = refused.arrivals.from;
      refused.duplicates = percent(0, 40);
      refused.conflicts = percent(0, 20);
      if (on[kSharedIds]) refused.shared_ids = percent(0, 20);
      w.load.push_back(refused);
      // ...and repeated once the pods are back: a key stored only now, after younger ones.
      LoadSegment again;
      again.arrivals.from = last_fault + sec(1, 10);
      again.arrivals.to = again.arrivals.from + sec(5, 30);
      again.arrivals.rate_per_s = *rc::gen::inRange(1, 51) / 10.0;
      again.duplicates = percent(30, 80);
      again.conflicts = percent(0, 20);
      w.load.push_back(again);
      last_fault = std::max(last_fault, again.arrivals.to);
    }
  }

  void endpoints() {
    // Endpoints: one to three groups, 1..30 endpoints in all.
    for (int g = *rc::gen::inRange(1, 4); g > 0; --g) {
      EndpointGroup e;
      e.name = "g" + std::to_string(w.endpoints.size());
      e.count = *rc::gen::inRange(1, 11);
      e.latency.p50 = ms(1, 500);
      e.latency.p99 = e.latency.p50 * *rc::gen::inRange(1, 21);
      if (on[kErrors]) {
        e.error_rate = percent(0, 60);
        e.error_status = *rc::gen::element(500, 502, 503, 400, 404, 410, 408, 301);
      }
      if (on[kBlackholes]) e.blackhole_rate = percent(0, 10);
      if (on[kLostResponses]) e.lost_response_rate = percent(0, 20);
      if (on[kEndpointDown]) {
        for (int k = *rc::gen::inRange(0, 3); k > 0; --k) {
          Window down{Time{} + sec(0, 240), *rc::gen::arbitrary<bool>() ? sec(5, 120) : kForever};
          e.down.push_back(down);
          if (down.length < kForever) last_fault = std::max(last_fault, down.end());
        }
      }
      if (on[kStorm429]) {
        for (int k = *rc::gen::inRange(0, 3); k > 0; --k) {
          Incident i;
          i.window = draw_window({200, 5, 90});
          i.rate = percent(50, 100);
          i.status = 429;
          i.retry_after = sec(1, 120);
          e.incidents.push_back(i);
          last_fault = std::max(last_fault, i.window.end());
        }
      }
      w.endpoints.push_back(std::move(e));
    }
    // Enough cxids that every group gets requests (cxid i delivers to endpoint i): the loader
    // refuses fewer, and a group nobody calls tests nothing.
    w.cxids = *rc::gen::inRange(w.endpoint_count() - w.endpoints.back().count + 1, w.endpoint_count() * 3 + 1);
  }

  void serviceb() {
    b.latency.p50 = ms(1, 200);
    b.latency.p99 = b.latency.p50 * *rc::gen::inRange(1, 11);
    if (on[kOutage]) {
      for (int k = *rc::gen::inRange(1, 3); k > 0; --k) {
        Outage o;
        o.window = draw_window({200, 5, 180});
        // Sometimes one that ends within seconds of the deadlines of the requests made as it began.
        if (*rc::gen::arbitrary<bool>()) o.window.length = p.retry.deadline + sec(-5, 5);
        o.mode = *rc::gen::element(OutageMode::error, OutageMode::timeout);
        b.outages.push_back(o);
        last_fault = std::max(last_fault, o.window.end());
      }
    }
    if (on[kUrlChanges]) {
      for (int k = *rc::gen::inRange(1, 4); k > 0; --k) b.url_changes.push_back({Time{} + sec(0, 240), percent(10, 100)});
    }
    if (on[kUnknownCxids]) b.unknown_cxids = percent(0, 30);
    if (on[kFlakyServiceB]) {
      b.error_rate = percent(5, 40);
      // A breaker that trips on a few calls and closes on several overlapping probes: results
      // of one generation still arrive in the next.
      p.serviceb_breaker.min_calls = *rc::gen::inRange(1, 6);
      p.serviceb_breaker.half_open_probes = *rc::gen::inRange(2, 4);
      // The flakiness never heals: deferrals must back off, or a case is millions of them.
      p.dependency_backoff.kind = BackoffKind::exponential;
      p.dependency_backoff.multiplier = std::max(p.dependency_backoff.multiplier, 2.0);
      b.latency.p50 = ms(50, duration_cast<milliseconds>(p.lookup_timeout).count());
      b.latency.p99 = b.latency.p50 * *rc::gen::inRange(1, 4);
      for (int k = *rc::gen::inRange(5, 40); k > 0; --k) b.url_changes.push_back({Time{} + ms(0, 240'000), percent(50, 100)});
    }
  }

  // The platform forgetting finished requests, and an operator replaying failed ones.
  void retention_and_replays() {
    if (on[kRetention]) p.retention = sec(0, 120);
    if (on[kReplays]) {
      // At random times up to a deadline after the last fault, when much has failed; a replayed
      // request has a fresh deadline, so the heal phase starts after the last replay.
      const std::int64_t latest = duration_cast<milliseconds>(last_fault - Time{} + p.retry.deadline).count();
      Time last_replay{};
      for (int k = *rc::gen::inRange(1, 6); k > 0; --k) {
        const ReplayBatch r{Time{} + ms(0, latest), static_cast<std::uint32_t>(*rc::gen::inRange(1, 30))};
        w.replays.push_back(r);
        last_replay = std::max(last_replay, r.at);
      }
      last_fault = std::max(last_fault, last_replay);
    }
  }

  // The spine's faults: pods crashing and pausing, the store failing.
  void spine_faults() {
    if (on[kCrash]) {
      const Time back = draw_crashes(s, p.pods, {240, 1, 120}, 3, [&] { return on[kStoreFaults] && *rc::gen::arbitrary<bool>(); });
      last_fault = std::max(last_fault, back);
    }

    if (on[kPause]) {
      // Short-lived cache entries and a slow ServiceB, so a pause often begins while a pod waits on
      // a lookup for a claim it holds: it wakes to the answer, and maybe to a lease that has run out.
      p.url_cache_ttl = std::min(p.url_cache_ttl, ms(0, 2000));
      b.latency.p50 = std::max(b.latency.p50, p.lookup_timeout / 3);
      b.latency.p99 = std::max(b.latency.p99, b.latency.p50 * 2);
      const Time end = draw_pauses(s, p.pods, 240, 2, [&] {
        return *rc::gen::arbitrary<bool>() ? p.lease - p.lease / 4 + sec(0, 30) : p.url_cache_ttl + ms(1, 5000);
      });
      last_fault = std::max(last_fault, end);
    }

    if (on[kStoreFaults]) {
      last_fault = std::max(last_fault, draw_store_faults(s, {200, 1, 60}));
      p.store_retry = ms(100, 5000);
    }
  }

  void heal() {
    // Heal phase: after the last fault, long enough for every deadline to pass and be settled.
    const Duration bound = p.lease + p.lookup_timeout + p.http_timeout + minutes(1);
    s.duration = (last_fault - Time{}) + p.retry.deadline + bound + minutes(2);
    // Everything must start before the run ends, or the case could not be written as a scenario
    // file and read back (a URL change or a lasting down window may come after the heal phase).
    Time latest{};
    for (const auto& c : b.url_changes) latest = std::max(latest, c.at);
    for (const auto& e : w.endpoints) {
      for (const auto& d : e.down) latest = std::max(latest, d.at);
    }
    if (latest >= Time{} + s.duration) s.duration = (latest - Time{}) + seconds(1);
  }
};

}  // namespace

rc::Gen<Scenario> scenarios(GenOptions options) {
  return rc::gen::exec([options] {
    const auto on = *rc::gen::container<std::vector<bool>>(kFeatureCount, rc::gen::arbitrary<bool>());
    Scenario s = make_scenario();
    s.name = "property-case";
    s.seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    Draw draw(on, options, s);
    draw.platform();
    draw.load();
    draw.all_down();
    draw.endpoints();
    draw.serviceb();
    draw.retention_and_replays();
    draw.spine_faults();
    draw.heal();
    return s;
  });
}

}  // namespace relaysim::sim::webhook::props
