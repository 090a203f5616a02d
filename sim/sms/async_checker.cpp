#include "sim/sms/async_checker.h"

#include <algorithm>
#include <array>

#include "model/core/assert.h"
#include "sim/report/text.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

void AsyncChecker::on(const Accepted& e) {
  if (spec_.platform.sync_to_async.enabled) check_send_path(e);
}

void AsyncChecker::on(const SubmitStarted& e) {
  if (spec_.platform.sync_to_async.enabled) check_async_late(mode(e.pod), e.pod, e.at, false);
}

void AsyncChecker::SyncSubmits::on(const SubmitFinished& e) {
  if (e.path == SendPath::async) return;
  checker_.observe_sync_submit(e);
}

// S-async: the path an accepted request was sent by agrees with its pod's mode.
void AsyncChecker::check_send_path(const Accepted& e) {
  RELAYSIM_ASSERT(spec_.platform.sync_to_async.enabled, "a send path is judged only where there is a switch");
  const AcceptRequest& req = e.request;
  const AcceptResult& r = e.result;
  PodMode& pm = mode(e.pod);
  check_async_late(pm, e.pod, req.now, true);
  if (pm.async) {
    ++pm.sends;
    if (e.path == SendPath::sync) {
      violate_(Invariant::async, req.now, r.first, "sent synchronously by pod " + std::to_string(e.pod) + " in async mode");
    } else if (e.path == SendPath::probe && ++pm.probes > pm.sends / spec_.platform.sync_to_async.probe_every + 1) {
      violate_(Invariant::async, req.now, r.first,
               "pod " + std::to_string(e.pod) + " sent " + std::to_string(pm.probes) + " probes in " +
                   std::to_string(pm.sends) + " sends, more than one in " +
                   std::to_string(spec_.platform.sync_to_async.probe_every));
    }
  } else if (e.path == SendPath::probe) {
    violate_(Invariant::async, req.now, r.first, "a probe by pod " + std::to_string(e.pod) + " in sync mode");
  }
}

// S-async's evidence: what the pod's switch was shown (sync submits while in sync mode, probes
// while in async mode), reported before any change of mode it causes.
void AsyncChecker::observe_sync_submit(const SubmitFinished& e) {
  RELAYSIM_ASSERT(e.path != SendPath::async, "the switch is shown only the submits made in a client's request");
  const SyncAsyncConfig& c = spec_.platform.sync_to_async;
  PodMode& pm = mode(e.pod);
  const bool failed = e.outcome != SubmitClass::accepted;
  check_async_late(pm, e.pod, e.at, false);
  if (e.path == SendPath::probe) {
    if (!pm.async) return;
    const bool good = !failed && (c.latency.over <= Duration::zero() || e.latency <= c.latency.over);
    pm.good_probes = good ? pm.good_probes + 1 : 0;
    return;
  }
  if (pm.async) return;
  pm.slow_in_a_row = e.latency > c.latency.over ? pm.slow_in_a_row + 1 : 0;
  pm.samples.push_back(Sample{e.at, to_ns(e.latency), failed});
  // Keep what any rule can read: two whole seconds and each window, with a tenth to spare.
  const Duration keep = std::max({Duration{std::chrono::seconds(3)}, c.latency.window * 11 / 10,
                                  c.error_rate.window * 11 / 10});
  while (pm.samples.front().at + keep < e.at) pm.samples.pop_front();
  RELAYSIM_ASSERT(!pm.samples.empty() && pm.samples.back().at == e.at, "the newest sample is kept");
  // The other side of entering: once a rule holds on this evidence the pod must enter async mode
  // now (its ModeChanged follows this event, before anything else of the pod).
  if (!c.enabled) return;
  for (const AsyncRule rule : {AsyncRule::latency_consecutive, AsyncRule::latency_window, AsyncRule::growth,
                               AsyncRule::error_rate}) {
    if (async_rule_unmet(pm, rule, e.at).empty()) {
      pm.must_enter = rule;
      pm.must_enter_at = e.at;
      return;
    }
  }
}

AsyncChecker::PodMode& AsyncChecker::mode(PodId pod) {
  RELAYSIM_ASSERT(pod >= 1, "a pod");
  if (modes_.size() < pod) modes_.resize(pod);
  RELAYSIM_ASSERT(pod <= modes_.size(), "a pod's mode is kept");
  return modes_[pod - 1];
}

// Why `rule` could not have fired at `at` on the evidence, or empty if it could. Each rule is
// read from its definition (model/sms/sync_async.h); the error-rate window's bucketing is met
// with a necessary condition over a tenth more than the window.
std::string AsyncChecker::async_rule_unmet(const PodMode& m, AsyncRule rule, Time at) const {
  const SyncAsyncConfig& c = spec_.platform.sync_to_async;
  const std::int64_t over = to_ns(c.latency.over);
  switch (rule) {
    case AsyncRule::latency_consecutive:
      if (over <= 0 || c.latency.consecutive == 0) return "the consecutive-latency rule is not configured";
      if (m.slow_in_a_row < c.latency.consecutive) {
        return "only " + std::to_string(m.slow_in_a_row) + " sync submits in a row were slower than " +
               format_duration(c.latency.over) + " (needs " + std::to_string(c.latency.consecutive) + ")";
      }
      return {};
    case AsyncRule::latency_window: return latency_window_unmet(m, at);
    case AsyncRule::growth: return growth_unmet(m, at);
    case AsyncRule::error_rate: return error_rate_unmet(m, at);
    case AsyncRule::none:
    case AsyncRule::timer:
    case AsyncRule::probes: break;
  }
  return "'" + std::string(to_string(rule)) + "' is not a rule that enters async mode";
}

// The latency-window rule: the mean latency of the sync submits in the window.
std::string AsyncChecker::latency_window_unmet(const PodMode& m, Time at) const {
  const SyncAsyncConfig& c = spec_.platform.sync_to_async;
  const std::int64_t over = to_ns(c.latency.over);
  if (over <= 0 || c.latency.consecutive != 0) return "the latency-window rule is not configured";
  const std::int64_t tenth = std::max<std::int64_t>(1, to_ns(c.latency.window) / 10);
  const std::int64_t newest = to_ns(at) / tenth;
  std::uint64_t calls = 0;
  __extension__ using i128 = __int128;
  i128 sum = 0;
  for (const Sample& x : m.samples) {
    if (to_ns(x.at) / tenth > newest - 10) {
      ++calls;
      sum += x.latency_ns;
    }
  }
  // The model's own comparison, of a mean in doubles: the sums are whole nanoseconds well below
  // 2^53, so both add them exactly, whatever the order.
  if (calls < c.latency.min_calls || calls == 0 ||
      !(static_cast<double>(sum) / static_cast<double>(calls) > static_cast<double>(over))) {
    return std::to_string(calls) + " sync submits in the latency window, not enough or not slow enough";
  }
  return {};
}

// The growth rule: the last whole second's mean latency against the one before it.
std::string AsyncChecker::growth_unmet(const PodMode& m, Time at) const {
  const SyncAsyncConfig& c = spec_.platform.sync_to_async;
  if (c.growth.percent <= 0) return "the growth rule is not configured";
  const std::int64_t second = to_ns(at) / 1'000'000'000;
  std::array<std::uint64_t, 2> calls{};
  std::array<double, 2> sum{};
  for (const Sample& x : m.samples) {
    const std::int64_t back = second - to_ns(x.at) / 1'000'000'000;
    if (back == 1 || back == 2) {
      ++calls[static_cast<std::size_t>(back - 1)];
      sum[static_cast<std::size_t>(back - 1)] += static_cast<double>(x.latency_ns);
    }
  }
  if (calls[0] < c.growth.min_calls || calls[1] < c.growth.min_calls || calls[0] == 0 || calls[1] == 0 ||
      !(sum[0] / calls[0] > sum[1] / calls[1] * (1.0 + c.growth.percent / 100.0))) {
    return "the last whole second's mean latency did not grow by " + fmt("%g", c.growth.percent) + " %";
  }
  return {};
}

// The error-rate rule over the window as a window counter keeps it (model/resilience/window_counter.h):
// the ten tenths up to the one `at` falls in.
std::string AsyncChecker::error_rate_unmet(const PodMode& m, Time at) const {
  const SyncAsyncConfig& c = spec_.platform.sync_to_async;
  if (c.error_rate.over <= 0) return "the error-rate rule is not configured";
  const std::int64_t tenth = std::max<std::int64_t>(1, to_ns(c.error_rate.window) / 10);
  const std::int64_t newest = to_ns(at) / tenth;
  std::uint64_t calls = 0;
  std::uint64_t failures = 0;
  for (const Sample& x : m.samples) {
    if (to_ns(x.at) / tenth <= newest - 10) continue;
    ++calls;
    failures += x.failed ? 1 : 0;
  }
  if (calls < c.error_rate.min_calls || calls == 0 ||
      !(static_cast<double>(failures) / static_cast<double>(calls) > c.error_rate.over)) {
    return std::to_string(failures) + " failures in " + std::to_string(calls) + " sync submits of the window, not " +
           "more than " + fmt("%g", c.error_rate.over * 100) + " % of at least " +
           std::to_string(c.error_rate.min_calls);
  }
  return {};
}

// Async mode must begin in the event after the one whose evidence made a rule hold, and end once
// its exit condition holds: `after` its entry, or right after the probe
// that made `min_probes` good ones in a row (that probe's SubmitFinished comes first).
void AsyncChecker::check_async_late(PodMode& m, PodId pod, Time at, bool send_decision) {
  const SyncAsyncConfig& c = spec_.platform.sync_to_async;
  if (m.must_enter != AsyncRule::none) {
    violate_(Invariant::async, at, 0,
             "pod " + std::to_string(pod) + " stayed in sync mode though its " + std::string(to_string(m.must_enter)) +
                 " rule held at " + format_time(m.must_enter_at));
    m.must_enter = AsyncRule::none;
  }
  if (!m.async || m.late_reported) return;
  std::string why;
  if (c.exit == SyncAsyncConfig::Exit::after && at > m.entered + c.after &&
      (judged_ == Judged::simulation || send_decision)) {
    why = "though it entered at " + format_time(m.entered) + " to stay " + format_duration(c.after);
  } else if (c.exit == SyncAsyncConfig::Exit::probe && m.good_probes >= c.min_probes) {
    why = "though " + std::to_string(m.good_probes) + " good probes in a row have come back (" +
          std::to_string(c.min_probes) + " end it)";
  } else {
    return;
  }
  m.late_reported = true;
  violate_(Invariant::async, at, 0,
           "pod " + std::to_string(pod) + " is still in async mode at " + format_time(at) + ", " + why);
}

void AsyncChecker::on(const ModeChanged& e) {
  const SyncAsyncConfig& c = spec_.platform.sync_to_async;
  PodMode& m = mode(e.pod);
  const std::string pod = "pod " + std::to_string(e.pod);
  if (!c.enabled) {
    violate_(Invariant::async, e.at, 0, pod + " changed mode though sync-to-async is off");
    return;
  }
  if (e.change.entered) {
    if (m.async) {
      violate_(Invariant::async, e.at, 0, pod + " entered async mode while in it");
    } else if (std::string why = async_rule_unmet(m, e.change.rule, e.at); !why.empty()) {
      violate_(Invariant::async, e.at, 0,
               pod + " entered async mode by " + std::string(to_string(e.change.rule)) + ", but " + why);
    }
    m = PodMode{};
    m.async = true;
    m.entered = e.at;
    return;
  }
  if (!m.async) {
    violate_(Invariant::async, e.at, 0, pod + " left async mode it was not in");
  } else if (e.change.rule == AsyncRule::timer) {
    const bool on_time = judged_ == Judged::simulation ? e.at == m.entered + c.after : e.at >= m.entered + c.after;
    if (c.exit != SyncAsyncConfig::Exit::after || !on_time) {
      violate_(Invariant::async, e.at, 0,
               pod + " left async mode by its timer at " + format_time(e.at) + ", not at " +
                   format_time(m.entered + c.after));
    }
  } else if (e.change.rule == AsyncRule::probes) {
    if (c.exit != SyncAsyncConfig::Exit::probe || m.good_probes < c.min_probes) {
      violate_(Invariant::async, e.at, 0,
               pod + " left async mode after " + std::to_string(m.good_probes) + " good probes in a row (needs " +
                   std::to_string(c.min_probes) + ")");
    }
  } else {
    violate_(Invariant::async, e.at, 0, pod + " left async mode by " + std::string(to_string(e.change.rule)));
  }
  m = PodMode{};  // judged afresh
}

void AsyncChecker::reset(PodId pod) {
  RELAYSIM_ASSERT(pod >= 1, "gateway pods are numbered from 1");
  if (pod <= modes_.size()) modes_[pod - 1] = PodMode{};
}

void AsyncChecker::on(const ProcessStarted& e) { reset(e.pod + 1); }
void AsyncChecker::on(const ProcessCrashed& e) { reset(e.pod + 1); }

void AsyncChecker::finish(Time end) {
  for (std::size_t i = 0; i < modes_.size(); ++i) check_async_late(modes_[i], static_cast<PodId>(i + 1), end, false);
}

}  // namespace relaysim::sim::sms
