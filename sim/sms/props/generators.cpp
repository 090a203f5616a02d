#include "sim/sms/props/generators.h"

#include <algorithm>
#include <memory>

#include "sim/sms/spec.h"
#include "sim/props/draw.h"
#include "sim/props/faults.h"
#include "sim/system.h"

namespace relaysim::sim::sms::props {

using namespace std::chrono;
using relaysim::props::draw_crashes;
using relaysim::props::draw_store_faults;
using relaysim::props::draw_window;
using relaysim::props::ms;
using relaysim::props::percent;
using relaysim::props::sec;

namespace {

LimiterSpec limiter(std::uint32_t lo, std::uint32_t hi) {
  LimiterSpec l;
  l.algorithm = *rc::gen::element(LimiterAlgorithm::sliding_log, LimiterAlgorithm::sliding_counter,
                                  LimiterAlgorithm::token_bucket, LimiterAlgorithm::gcra);
  l.limit = *rc::gen::inRange(lo, hi + 1);
  l.window = seconds(1);
  l.burst = *rc::gen::element(0U, 1U, l.limit / 2 + 1);
  return l;
}

// The swarm: which kinds of trouble this case may contain.
enum Feature { kCrash, kOutage, kLostAnswers, kSlowdown, kAsync, kLimits, kRedisFaults, kSmallQuota, kBadTokens,
               kDuplicates, kBulk, kScheduled, kImpatient, kRefusals, kThrottle, kReceiptTrouble, kFailUnknown,
               kInMemoryRetry, kMarketing, kAdmin, kResend, kStoreFaults, kFeatureCount };

// One case, drawn step by step. The steps run in the order `scenarios` calls them, and each one's
// draws in the order written: the draws' order is the case, so the same seed gives the same case.
// (The platform's config is `p` in the steps that use it: a provider's spec is `p` in theirs.)
struct Draw {
  const std::vector<bool>& on;  // the swarm's switches, by Feature
  Scenario& s;
  SmsSpec& m;
  Time last_fault{};  // when the last fault or load is over: the heal phase starts after it
  std::uint32_t slowest_limit = 0;  // the lowest limit a message passes, per second (0: none)
  double messages = 0;  // messages expected, over all the load
  Duration lead_max{};  // the longest a scheduled message waits for its time
  Duration quiet{};     // how long after the start the recipients' quiet hours may last

  Draw(const std::vector<bool>& switches, Scenario& scenario) : on(switches), s(scenario), m(spec_of(scenario)) {}

  void provider_specs() {
    std::vector<ProviderSpec>& providers = m.providers;
    for (int k = *rc::gen::inRange(1, 4); k > 0; --k) {
      ProviderSpec p;
      p.name = "p" + std::to_string(providers.size());
      p.latency.p50 = ms(5, 300);
      p.latency.p99 = p.latency.p50 * *rc::gen::inRange(1, 6);
      p.receipts.delay.p50 = sec(1, 20);
      p.receipts.delay.p99 = p.receipts.delay.p50 * *rc::gen::inRange(1, 4);
      if (on[kOutage] && *rc::gen::arbitrary<bool>()) {
        Outage o;
        o.window = draw_window({120, 2, 60});
        o.mode = *rc::gen::element(OutageMode::error, OutageMode::timeout);
        p.outages.push_back(o);
        last_fault = std::max(last_fault, o.window.end());
      }
      if (on[kSlowdown] && *rc::gen::arbitrary<bool>()) {
        Slowdown w;
        w.window = draw_window({90, 5, 60});
        w.factor = *rc::gen::element(3.0, 10.0, 30.0);
        p.slowdowns.push_back(w);
        last_fault = std::max(last_fault, w.window.end());
      }
      if (on[kLostAnswers]) p.lost_answers = percent(0, 10);
      if (on[kRefusals]) {
        p.refusal_rate = percent(0, 10);
        p.error_rate = percent(0, 20);
      }
      if (on[kThrottle]) p.mps = *rc::gen::inRange(5, 40);
      if (on[kReceiptTrouble]) {
        p.receipts.lost = percent(0, 20);
        p.receipts.undelivered = percent(0, 20);
      }
      providers.push_back(std::move(p));
    }
  }

  void platform() {
    relaysim::sms::PlatformConfig& p = m.platform;
    p.pods = *rc::gen::inRange(1, 5);
    p.concurrency_per_pod = *rc::gen::inRange(1, 33);
    p.send_timeout = ms(200, 3000);
    p.lease = p.send_timeout * static_cast<std::int64_t>(m.providers.size()) + sec(1, 30);
    p.receipt_timeout = sec(20, 120);
    // A validity shorter than a scheduled message's lead or a recipient's quiet hours, so that
    // messages expire and quiet hours suppress: both must happen only when they are true.
    if ((on[kScheduled] || on[kMarketing]) && *rc::gen::arbitrary<bool>()) p.validity = sec(5, 120);
    p.on_unknown = on[kFailUnknown] ? relaysim::sms::OnUnknown::fail : relaysim::sms::OnUnknown::resend;
    p.routing.policy = *rc::gen::element(relaysim::sms::RoutingPolicy::round_robin, relaysim::sms::RoutingPolicy::ewma,
                                         relaysim::sms::RoutingPolicy::error_rate);
    if (on[kAsync]) {
      relaysim::sms::SyncAsyncConfig& a = p.sync_to_async;
      a.enabled = true;
      a.latency.over = ms(100, 1500);
      a.latency.consecutive = *rc::gen::element(0U, 1U, 3U, 5U);
      a.latency.window = sec(1, 10);
      a.latency.min_calls = *rc::gen::inRange(1, 10);
      if (*rc::gen::arbitrary<bool>()) a.growth.percent = *rc::gen::element(20.0, 50.0, 100.0);
      a.growth.min_calls = *rc::gen::inRange(1, 10);
      if (*rc::gen::arbitrary<bool>()) a.error_rate.over = percent(5, 50);
      a.error_rate.window = sec(1, 10);
      a.error_rate.min_calls = *rc::gen::inRange(1, 10);
      a.exit = *rc::gen::element(relaysim::sms::SyncAsyncConfig::Exit::after, relaysim::sms::SyncAsyncConfig::Exit::probe);
      a.after = sec(1, 60);
      a.probe_every = *rc::gen::inRange(1, 20);
      a.min_probes = *rc::gen::inRange(1, 5);
    }
  }

  void shared_limit() {
    relaysim::sms::PlatformConfig& p = m.platform;
    if (on[kLimits]) {
      SharedLimitConfig c;
      c.spec = limiter(5, 60);
      // Local limits are the subtle policy (each pod's share while Redis is down): drawn most often.
      c.when_down = *rc::gen::element(StoreDownPolicy::allow, StoreDownPolicy::deny, StoreDownPolicy::local,
                                      StoreDownPolicy::local);
      c.timeout = ms(5, 100);
      c.breaker.min_calls = *rc::gen::inRange(1, 10);
      c.breaker.open_for = sec(1, 10);
      if (*rc::gen::arbitrary<bool>()) {
        p.cluster_limit = c;
        slowest_limit = c.spec.limit;
      } else {
        p.cluster_limit = c;  // the businesses' limits take their down policy from it
        p.cluster_limit->spec.limit = 1'000'000;
        p.cluster_limit->spec.burst = 0;
      }
    }
  }

  void redis() {
    if (on[kRedisFaults]) {
      for (int k = *rc::gen::inRange(1, 3); k > 0; --k) {
        Outage o;
        o.window = draw_window({120, 1, 40});
        o.mode = *rc::gen::element(OutageMode::error, OutageMode::timeout);
        m.redis.outages.push_back(o);
        last_fault = std::max(last_fault, o.window.end());
      }
      if (*rc::gen::arbitrary<bool>()) {
        m.redis.restarts.push_back(draw_window({120, 1, 10}));
        last_fault = std::max(last_fault, m.redis.restarts.back().end());
      }
      m.redis.lost_answers = percent(0, 5);
    }
  }

  void businesses() {
    for (int k = *rc::gen::inRange(1, 3); k > 0; --k) {
      BusinessSpec b;
      b.name = "b" + std::to_string(m.businesses.size());
      b.quota = on[kSmallQuota] ? static_cast<std::uint64_t>(*rc::gen::inRange(0, 400)) : 1'000'000;
      b.templates = {1, 2};
      auto& r = b.policy.retry;
      r.backoff.kind = *rc::gen::element(BackoffKind::exponential, BackoffKind::fixed);
      r.backoff.initial = ms(100, 5000);
      r.backoff.multiplier = *rc::gen::element(1.0, 2.0, 3.0);
      r.backoff.max_interval = std::max(r.backoff.initial, sec(1, 30));
      r.max_attempts = static_cast<std::uint16_t>(*rc::gen::inRange(1, 7));
      r.alert_after = static_cast<std::uint16_t>(*rc::gen::inRange(0, 4));
      r.cross_process = !on[kInMemoryRetry] || *rc::gen::arbitrary<bool>();
      if (on[kLimits] && *rc::gen::arbitrary<bool>()) {
        b.policy.limit = limiter(5, 40);
        slowest_limit = slowest_limit == 0 ? b.policy.limit->limit : std::min(slowest_limit, b.policy.limit->limit);
      }
      m.businesses.push_back(std::move(b));
    }
  }

  void load() {
    for (int k = *rc::gen::inRange(1, 4); k > 0; --k) {
      LoadSegment l;
      l.business_index = static_cast<std::uint32_t>(*rc::gen::inRange<std::size_t>(0, m.businesses.size()));
      l.business = m.businesses[l.business_index].name;
      l.kind = relaysim::sms::Kind::single;
      if (on[kBulk] && *rc::gen::arbitrary<bool>()) l.kind = relaysim::sms::Kind::bulk;
      if (on[kScheduled] && *rc::gen::arbitrary<bool>()) l.kind = relaysim::sms::Kind::scheduled;
      l.arrivals.rate_per_s = *rc::gen::inRange(1, 21);
      l.arrivals.from = Time{} + sec(0, 30);
      l.arrivals.to = l.arrivals.from + sec(5, 90);
      if (l.kind == relaysim::sms::Kind::bulk) {
        l.size = static_cast<std::uint32_t>(*rc::gen::inRange(2, 30));
        l.arrivals.rate_per_s /= 5;
      }
      if (l.kind == relaysim::sms::Kind::scheduled) l.lead = sec(0, 90);
      lead_max = std::max(lead_max, l.lead);
      l.client_timeout = on[kImpatient] ? ms(50, 1000) : sec(5, 20);
      l.retries = static_cast<std::uint32_t>(*rc::gen::inRange(0, 3));
      if (on[kDuplicates]) l.duplicates = percent(0, 20);
      if (on[kBadTokens]) l.bad_tokens = percent(0, 20);
      l.recipients = static_cast<std::uint64_t>(*rc::gen::inRange(1, 100'000));
      messages += l.arrivals.expected_calls() * l.size * (1 + l.retries);
      last_fault = std::max(last_fault, l.arrivals.to);
      m.load.push_back(std::move(l));
    }
  }

  void resend() {
    if (on[kResend]) {
      // Clients resending messages they were told had failed (refusals make some).
      LoadSegment l;
      l.business_index = static_cast<std::uint32_t>(*rc::gen::inRange<std::size_t>(0, m.businesses.size()));
      l.business = m.businesses[l.business_index].name;
      l.kind = relaysim::sms::Kind::resend;
      l.arrivals.rate_per_s = *rc::gen::inRange(1, 10);
      l.arrivals.from = Time{} + sec(0, 60);
      l.arrivals.to = l.arrivals.from + sec(5, 90);
      l.retries = static_cast<std::uint32_t>(*rc::gen::inRange(0, 2));
      messages += l.arrivals.expected_calls() * (1 + l.retries);
      last_fault = std::max(last_fault, l.arrivals.to);
      m.load.push_back(std::move(l));
    }
  }

  void admin() {
    if (on[kAdmin]) {
      // The admin revokes a grant and maybe approves it again, and queries the back office.
      for (int k = *rc::gen::inRange(1, 5); k > 0; --k) {
        AdminEvent e;
        e.at = Time{} + sec(0, 120);
        e.action = *rc::gen::element(AdminAction::revoke, AdminAction::approve, AdminAction::query);
        e.business_index = static_cast<std::uint32_t>(*rc::gen::inRange<std::size_t>(0, m.businesses.size()));
        e.business = m.businesses[e.business_index].name;
        m.admin.push_back(std::move(e));
      }
      std::sort(m.admin.begin(), m.admin.end(), [](const AdminEvent& a, const AdminEvent& b) { return a.at < b.at; });
    }
  }

  void marketing() {
    relaysim::sms::PlatformConfig& p = m.platform;
    if (on[kMarketing]) {
      // Campaigns over a small directory whose zones are a few minutes apart, with quiet hours at
      // the start of the run: the zones' quiet hours begin and end at different moments.
      DirectorySpec& d = m.directory;
      d.users = static_cast<std::uint64_t>(*rc::gen::inRange(50, 3000));
      d.utc_offsets = {0, -1, 2, -3, 8 * 60};
      d.utc_offsets.resize(static_cast<std::size_t>(*rc::gen::inRange(1, 6)));
      d.opted_out = percent(0, 10);
      d.active_within = hours(24 * 30);
      if (*rc::gen::arbitrary<bool>()) {
        d.opt_outs.rate_per_s = *rc::gen::inRange(1, 20);
        d.opt_outs.from = Time{} + sec(0, 30);
        d.opt_outs.to = d.opt_outs.from + sec(10, 120);
      }
      relaysim::sms::MarketingConfig& mk = p.marketing;
      mk.quiet_hours = {0, *rc::gen::inRange(0, 7)};
      quiet = minutes(mk.quiet_hours.to + 3);
      if (*rc::gen::arbitrary<bool>()) mk.cap = {static_cast<std::uint32_t>(*rc::gen::inRange(1, 3)), sec(30, 600)};
      mk.chunk = static_cast<std::uint32_t>(*rc::gen::inRange(20, 500));
      mk.every = ms(10, 500);
      for (int k = *rc::gen::inRange(1, 3); k > 0; --k) {
        LoadSegment l;
        l.business_index = static_cast<std::uint32_t>(*rc::gen::inRange<std::size_t>(0, m.businesses.size()));
        l.business = m.businesses[l.business_index].name;
        l.kind = relaysim::sms::Kind::marketing;
        l.arrivals.burst = 1;
        l.arrivals.from = Time{} + sec(0, 90);
        l.arrivals.to = l.arrivals.from;  // as a burst reads back
        l.filter = *rc::gen::element<std::string>("all", "opt_in", "opt_in and not tags has churned",
                                                  "region in [north, east] or tags has vip", "last_active < 10d");
        messages += static_cast<double>(d.users);
        const Duration expansion = mk.every * static_cast<std::int64_t>(d.users / mk.chunk + 1);
        last_fault = std::max(last_fault, l.arrivals.from + expansion);
        m.load.push_back(std::move(l));
      }
    }
  }

  // The spine's faults: pods crashing, the store failing.
  void spine_faults() {
    relaysim::sms::PlatformConfig& p = m.platform;
    if (on[kCrash]) {
      const Time back = draw_crashes(s, p.pods, {120, 1, 60}, 3, [&] { return on[kStoreFaults] && *rc::gen::arbitrary<bool>(); });
      last_fault = std::max(last_fault, back);
    }

    if (on[kStoreFaults]) {
      // The database busy, full or failing for a while: every pod's calls fail, nothing is lost.
      last_fault = std::max(last_fault, draw_store_faults(s, {120, 1, 40}));
      p.store_retry = ms(100, 3000);
    }
  }

  void heal() {
    const relaysim::sms::PlatformConfig& p = m.platform;
    // Heal phase: every message can end after the last fault — its retries, a lease, its receipt —
    // and a backlog held by a limit drains at that limit.
    Duration retries{};
    for (const BusinessSpec& b : m.businesses) {
      const auto& r = b.policy.retry;
      retries = std::max(retries, r.backoff.max_interval * static_cast<std::int64_t>(r.max_attempts) * 2);
    }
    Duration drain{};
    if (slowest_limit > 0) drain = seconds(static_cast<std::int64_t>(messages / slowest_limit) + 1) * 2;
    s.duration = (last_fault - Time{}) + lead_max + quiet + p.lease * 3 + retries + p.receipt_timeout + drain + minutes(2);
  }
};

}  // namespace

rc::Gen<Scenario> scenarios() {
  return rc::gen::exec([] {
    const auto on = *rc::gen::container<std::vector<bool>>(kFeatureCount, rc::gen::arbitrary<bool>());
    Scenario s;
    s.system = find_system("sms");
    s.set_spec(std::make_unique<SmsSpec>());
    s.name = "property-case";
    s.seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    Draw draw(on, s);
    draw.provider_specs();
    draw.platform();
    draw.shared_limit();
    draw.redis();
    draw.businesses();
    draw.load();
    draw.resend();
    draw.admin();
    draw.marketing();
    draw.spine_faults();
    draw.heal();
    return s;
  });
}

}  // namespace relaysim::sim::sms::props
