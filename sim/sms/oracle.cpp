#include "sim/sms/oracle.h"

#include <algorithm>
#include <bit>

#include "model/core/assert.h"
#include "model/resilience/backoff.h"
#include "sim/report/text.h"
#include "model/resilience/shared_limiter.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

namespace {

std::uint64_t ledger_key(std::uint32_t business, std::uint32_t period) {
  return static_cast<std::uint64_t>(business) << 32 | period;
}

void key_text(std::string& out, BusinessId b, std::string_view type, std::string_view id) {
  out.assign(std::to_string(b));
  out += '/';
  out += type;
  out += '/';
  out += id;
}


}  // namespace

Oracle::Oracle(const SmsSpec& spec, std::uint64_t seed, Ledger& ledger)
    : spec_(spec), ledger_(ledger), directory_(spec.directory, seed) {}

MessageId Oracle::find_key(std::string_view key) const {
  return keys_.find(hash_bytes(key), [&](std::uint64_t id) {
    RELAYSIM_ASSERT(id >= 1 && id <= key_at_.size(), "a key's message has its place in the arena");
    const std::uint64_t at = key_at_[id - 1];
    return std::string_view(key_arena_).substr(at >> 24, at & 0xffffff) == key;
  });
}

Oracle::Message* Oracle::find(MessageId id) {
  return id >= 1 && id <= messages_.size() ? &messages_[id - 1] : nullptr;
}

void Oracle::violate(Invariant i, Time at, MessageId id, std::string what) {
  ledger_.violate(index(i), at, id == 0 ? std::string() : "message " + std::to_string(id), std::move(what));
}

const BusinessSpec* Oracle::business(BusinessId id) const {
  return id >= 1 && id <= spec_.businesses.size() ? &spec_.businesses[id - 1] : nullptr;
}

void Oracle::on(const Accepted& e) {
  const AcceptResult& r = e.result;
  if (spec_.platform.sync_to_async.enabled) check_send_path(e);
  if (r.outcome == AcceptOutcome::duplicate) {
    check_repeat(e.request, r);
    return;
  }
  if (r.outcome == AcceptOutcome::quota_exhausted) check_quota_refusal(e.request);
  if (r.outcome == AcceptOutcome::accepted) record_accepted(e.request, r);
}

// S-async: the path an accepted request was sent by agrees with its pod's mode.
void Oracle::check_send_path(const Accepted& e) {
  const AcceptRequest& req = e.request;
  const AcceptResult& r = e.result;
  PodMode& pm = mode(e.pod);
  check_async_late(pm, e.pod, req.now);
  if (pm.async) {
    ++pm.sends;
    if (e.path == SendPath::sync) {
      violate(Invariant::async, req.now, r.first, "sent synchronously by pod " + std::to_string(e.pod) + " in async mode");
    } else if (e.path == SendPath::probe && ++pm.probes > pm.sends / spec_.platform.sync_to_async.probe_every + 1) {
      violate(Invariant::async, req.now, r.first,
              "pod " + std::to_string(e.pod) + " sent " + std::to_string(pm.probes) + " probes in " +
                  std::to_string(pm.sends) + " sends, more than one in " +
                  std::to_string(spec_.platform.sync_to_async.probe_every));
    }
  } else if (e.path == SendPath::probe) {
    violate(Invariant::async, req.now, r.first, "a probe by pod " + std::to_string(e.pod) + " in sync mode");
  }
}

// S-dedup: a repeated request is answered with the first one's message and its outcome so far.
void Oracle::check_repeat(const AcceptRequest& req, const AcceptResult& r) {
  RELAYSIM_ASSERT(!req.messages.empty(), "a request carries a message");
  const NewMessage& m = req.messages[0];
  key_text(scratch_, req.business, m.biz_type, m.biz_id);
  const MessageId known = find_key(scratch_);
  if (known == 0) {
    violate(Invariant::dedup, req.now, r.first, "a request was answered as a repeat of a key never accepted");
  } else if (known != r.first) {
    violate(Invariant::dedup, req.now, r.first,
            "a repeated request was answered with message " + std::to_string(r.first) + ", not the first one (" +
                std::to_string(known) + ")");
  } else if (const Message* first = find(r.first); first != nullptr) {
    // Its outcome so far: the final state the oracle saw, or none yet.
    const bool ended = first->final_status != kOpen;
    if (ended != is_final(r.status) || (ended && static_cast<Status>(first->final_status) != r.status)) {
      violate(Invariant::dedup, req.now, r.first,
              "a repeated request was told its message is " + std::string(to_string(r.status)) + ", but it is " +
                  (ended ? std::string(to_string(static_cast<Status>(first->final_status))) : std::string("not final")));
    }
  }
}

// S-quota, the other side: a refusal is true only when the request did not fit in what its
// business had left, as the oracle counts it (charges less refunds, checked against the store's
// count at every back-office query and at the end).
void Oracle::check_quota_refusal(const AcceptRequest& req) {
  const BusinessSpec* b = business(req.business);
  const auto it = charged_.find(ledger_key(req.business, req.period));
  const std::uint64_t held = it == charged_.end() ? 0 : it->second;
  if (b != nullptr && held + req.messages.size() <= b->quota) {
    violate(Invariant::quota, req.now, 0,
            "a request of " + std::to_string(req.messages.size()) + " message(s) was refused for quota, but business '" +
                b->name + "' held " + std::to_string(held) + " of its " + std::to_string(b->quota) + " units");
  }
}

// An accepted request's messages: S-scope (no revoked grant), S-dedup (no key twice) and S-quota
// (never over), and the messages kept for what follows.
void Oracle::record_accepted(const AcceptRequest& req, const AcceptResult& r) {
  if (req.business >= 1 && req.business <= revoked_epochs_.size()) {
    const std::vector<std::uint64_t>& revoked = revoked_epochs_[req.business - 1];
    if (std::find(revoked.begin(), revoked.end(), req.epoch) != revoked.end()) {
      violate(Invariant::scope, req.now, r.first,
              "accepted with a token of grant epoch " + std::to_string(req.epoch) + ", which was revoked");
    }
  }
  for (std::size_t i = 0; i < req.messages.size(); ++i) {
    const NewMessage& m = req.messages[i];
    const MessageId id = r.first + i;
    RELAYSIM_ASSERT(id == messages_.size() + 1, "message ids are handed out in order");
    messages_.push_back(Message{req.business, req.period, m.send_at});
    key_text(scratch_, req.business, m.biz_type, m.biz_id);
    if (const MessageId first = find_key(scratch_); first != 0) {
      violate(Invariant::dedup, req.now, id,
              "accepted key " + scratch_ + " a second time (first as message " + std::to_string(first) + ")");
    } else {
      RELAYSIM_ASSERT(scratch_.size() < (1U << 24), "a key shorter than 16 MiB");
      key_at_.push_back(key_arena_.size() << 24 | scratch_.size());
      key_arena_ += scratch_;
      keys_.insert(hash_bytes(scratch_), id);
    }
  }
  std::uint64_t& used = charged_[ledger_key(req.business, req.period)];
  RELAYSIM_ASSERT(key_at_.size() <= messages_.size(), "a key for no more than every message");
  used += req.messages.size();
  const BusinessSpec* b = business(req.business);
  if (b != nullptr && used > b->quota) {
    violate(Invariant::quota, req.now, r.first,
            "business '" + b->name + "' holds " + std::to_string(used) + " quota units, over its quota of " +
                std::to_string(b->quota));
  }
}

void Oracle::on(const Claimed& e) {
  Message* m = find(e.row.id);
  if (m == nullptr) return;
  m->claim_pinned = kNoProvider;
  m->rescued = e.prior == Status::in_flight;
  m->claim = e.row.claim_token;
  m->claim_submits = 0;
  // A claim of a message whose last outcome was ambiguous stays with that provider
  // (model/sms/node.h); any other claim tries the providers afresh.
  m->round_claim = e.row.claim_token;
  m->round_tried = 0;
  m->round_pinned = (e.prior == Status::unknown || e.prior == Status::in_flight) &&
                    e.row.provider != kNoProvider && !e.row.accepted;
  // A claim that took over an expired lease forgets the plan its predecessor could not record.
  if (m->rescued) m->retry_due = Time{};
  if (e.prior != m->status) {
    violate(Invariant::lifecycle, e.at, e.row.id,
            "claimed as " + std::string(to_string(e.prior)) + ", but its events had left it " + std::string(to_string(m->status)));
  }
  move(*m, e.row.id, e.prior, Status::in_flight, e.at);
}

Duration Oracle::quiet_left(Recipient r, Time at) const {
  const model::QuietHours& q = spec_.platform.marketing.quiet_hours;
  if (q.from == q.to) return Duration::zero();
  const std::optional<std::uint64_t> i = directory_.index_of(r);
  const std::int64_t offset = i ? directory_.user(*i).utc_offset : 0;
  constexpr std::int64_t kMinute = 60'000'000'000;
  const std::int64_t day = std::int64_t{model::kMinutesPerDay} * kMinute;
  std::int64_t tod = (to_ns(at) + offset * kMinute) % day;
  if (tod < 0) tod += day;
  const std::int64_t from = std::int64_t{q.from} * kMinute;
  const std::int64_t to = std::int64_t{q.to} * kMinute;
  if (!(from < to ? (tod >= from && tod < to) : (tod >= from || tod < to))) return Duration::zero();
  return Duration{tod < to ? to - tod : day - tod + to};
}

std::vector<std::pair<Time, MessageId>>& Oracle::cap_places(Recipient r, Time at) {
  // Events come in time order, so the places that left the window (at - per, at] are in front.
  std::vector<std::pair<Time, MessageId>>& places = cap_places_[r];
  const Duration per = spec_.platform.marketing.cap.per;
  const auto left = std::find_if(places.begin(), places.end(), [&](const auto& p) { return p.first > at - per; });
  places.erase(places.begin(), left);
  return places;
}

void Oracle::check_marketing(const SubmitStarted& e) {
  const Recipient r = e.row.recipient;
  if (directory_.opted_out(r)) {
    violate(Invariant::marketing, e.at, e.row.id, "submitted to " + std::to_string(r) + ", who opted out of marketing");
  }
  // Quiet hours, worked out here from the recipient's zone on the directory's truth.
  if (quiet_left(r, e.at) > Duration::zero()) {
    const std::optional<std::uint64_t> i = directory_.index_of(r);
    const std::int64_t offset = i ? directory_.user(*i).utc_offset : 0;
    violate(Invariant::marketing, e.at, e.row.id,
            "submitted in the quiet hours of " + std::to_string(r) + " (UTC" + (offset < 0 ? "" : "+") +
                std::to_string(offset) + " minutes)");
  }
  const model::FrequencyCap& cap = spec_.platform.marketing.cap;
  if (cap.count == 0) return;
  std::vector<std::pair<Time, MessageId>>& places = cap_places(r, e.at);
  if (std::any_of(places.begin(), places.end(), [&](const auto& p) { return p.second == e.row.id; })) return;
  if (places.size() >= cap.count) {
    violate(Invariant::marketing, e.at, e.row.id,
            std::to_string(places.size() + 1) + " marketing messages to " + std::to_string(r) + " within " +
                format_duration(cap.per) + ", over the cap of " + std::to_string(cap.count));
  }
  places.emplace_back(e.at, e.row.id);
}

void Oracle::check_ending(const Message& m, MessageId id, const MessageRow& row, const Completion& c) {
  const Recipient r = row.recipient;
  if (c.status == Status::failed && c.reason == Reason::expired && c.at <= m.send_at + spec_.platform.validity) {
    violate(Invariant::schedule, c.at, id,
            "ended as expired at " + format_time(c.at) + ", though its validity lasts until " +
                format_time(m.send_at + spec_.platform.validity));
  }
  if (c.status != Status::suppressed) return;
  switch (c.reason) {
    case Reason::opted_out:
      if (!directory_.opted_out(r)) {
        violate(Invariant::marketing, c.at, id, "suppressed as opted out, but " + std::to_string(r) + " had not opted out");
      }
      return;
    case Reason::quiet_hours: {
      const Duration left = quiet_left(r, c.at);
      if (left == Duration::zero()) {
        violate(Invariant::marketing, c.at, id,
                "suppressed for quiet hours at " + format_time(c.at) + ", outside the quiet hours of " + std::to_string(r));
      } else if (c.at + left <= m.send_at + spec_.platform.validity) {
        violate(Invariant::marketing, c.at, id,
                "suppressed for quiet hours that end at " + format_time(c.at + left) + ", within its validity (until " +
                    format_time(m.send_at + spec_.platform.validity) + "): it should have waited");
      }
      return;
    }
    case Reason::frequency_cap: {
      const model::FrequencyCap& cap = spec_.platform.marketing.cap;
      std::vector<std::pair<Time, MessageId>>& places = cap_places(r, c.at);
      if (cap.count == 0) {
        violate(Invariant::marketing, c.at, id, "suppressed by a frequency cap, but there is none");
      } else if (std::any_of(places.begin(), places.end(), [&](const auto& p) { return p.second == id; })) {
        violate(Invariant::marketing, c.at, id, "suppressed by the frequency cap, though it holds a place in it");
      } else if (places.size() < cap.count) {
        violate(Invariant::marketing, c.at, id,
                "suppressed by the frequency cap with " + std::to_string(places.size()) + " other marketing messages to " +
                    std::to_string(r) + " within " + format_duration(cap.per) + ", under its " + std::to_string(cap.count));
      }
      return;
    }
    default: return;
  }
}

void Oracle::on(const SubmitStarted& e) {
  if (spec_.platform.sync_to_async.enabled) check_async_late(mode(e.pod), e.pod, e.at);
  Message* m = find(e.row.id);
  if (m == nullptr) return;
  if (e.row.kind == Kind::marketing) check_marketing(e);
  m->submitted = true;
  if (m->submits < UINT16_MAX) ++m->submits;
  // A submit of a claim that has ended (another claim took the message over) can record nothing.
  if (e.row.claim_token == m->claim && m->claim_submits < UINT16_MAX) {
    ++m->claim_submits;
    const BusinessSpec* b = business(m->business);
    const unsigned count = unsigned{m->counted} + m->claim_submits;
    if (b != nullptr && count > b->policy.retry.max_attempts) {
      violate(Invariant::retry, e.at, e.row.id,
              "submit " + std::to_string(count) + " started, but its business allows " +
                  std::to_string(b->policy.retry.max_attempts));
    }
  }
  if (e.at < m->retry_due) {
    violate(Invariant::retry, e.at, e.row.id,
            "submitted at " + format_time(e.at) + ", before its retry was due at " + format_time(m->retry_due));
  }
  if (e.at < m->send_at) {
    violate(Invariant::schedule, e.at, e.row.id,
            "submitted at " + format_time(e.at) + ", before its send_at " + format_time(m->send_at));
  }
  if (m->accepted) {
    violate(Invariant::failover, e.at, e.row.id, "submitted again after a provider's certain accept was recorded");
  }
  // A sync send's claim is its acceptance: its first submit begins the round. A submit of an older
  // claim than the round's (one whose lease ran out) is not judged here.
  if (e.row.claim_token > m->round_claim) {
    m->round_claim = e.row.claim_token;
    m->round_tried = 0;
    m->round_pinned = false;
  }
  if (e.row.claim_token == m->round_claim && !m->round_pinned && e.provider < kMaxProviders) {
    const ProviderMask bit = ProviderMask{1} << e.provider;
    if ((m->round_tried & bit) != 0 && std::popcount(m->round_tried) < static_cast<int>(spec_.providers.size())) {
      violate(Invariant::failover, e.at, e.row.id,
              "submitted to provider " + std::to_string(e.provider) + " a second time while " +
                  std::to_string(spec_.providers.size() - static_cast<std::size_t>(std::popcount(m->round_tried))) +
                  " providers were still untried");
    }
    m->round_tried |= bit;
  }
  const ProviderId pinned = m->claim_pinned != kNoProvider ? m->claim_pinned : m->pinned;
  if (pinned != kNoProvider && e.provider != pinned) {
    violate(Invariant::failover, e.at, e.row.id,
            "submitted to provider " + std::to_string(e.provider) + " after an ambiguous outcome at provider " +
                std::to_string(pinned) + ", which may have sent it");
  }
}

void Oracle::on(const SubmitFinished& e) {
  Message* m = find(e.message);
  if (m != nullptr && e.claim == m->claim && (e.decision.step == Step::retry || e.decision.step == Step::unknown)) {
    check_backoff(*m, e);
  }
  if (m != nullptr && e.claim == m->round_claim) check_failover(*m, e);
  if (m != nullptr && is_ambiguous(e.outcome)) m->claim_pinned = e.provider;
  if (m != nullptr && e.outcome == SubmitClass::accepted && m->seen_accepts < 0xff) ++m->seen_accepts;
  if (e.path == SendPath::async) return;
  observe_sync_submit(e);
}

// S-retry, both sides of the backoff: the wait the gateway planned is what its business's
// policy draws for the attempt it counts, no less and no more. (It keeps no record of its
// draws, so decorrelated jitter grows from the first delay.)
void Oracle::check_backoff(Message& m, const SubmitFinished& e) {
  const BusinessSpec* b = business(m.business);
  const unsigned n = unsigned{m.counted} + m.claim_submits;
  if (b != nullptr && n >= 1) {
    const BackoffPolicy& backoff = b->policy.retry.backoff;
    const Duration wait = e.decision.due - e.at;
    const Duration least = min_delay(backoff, n);
    const Duration most = max_delay(backoff, n, Duration::zero());
    if (wait < least || wait > most) {
      violate(Invariant::retry, e.at, e.message,
              "retry after submit " + std::to_string(n) + " planned " + format_duration(wait) + " later, outside the backoff's " +
                  format_duration(least) + " to " + format_duration(most));
    }
  }
  m.retry_due = std::max(m.retry_due, e.decision.due);
}

// S-failover, the other side of failing over: a provider that certainly did not take the message
// (throttled, unavailable) is followed at once by an untried one while any is left; a wait for a
// retry comes only when every provider of the round was tried.
void Oracle::check_failover(Message& m, const SubmitFinished& e) {
  const bool certain_no = e.outcome == SubmitClass::throttled || e.outcome == SubmitClass::unavailable;
  const int tried = std::popcount(m.round_tried);
  if (certain_no && e.decision.step == Step::retry && !m.round_pinned &&
      tried < static_cast<int>(spec_.providers.size())) {
    violate(Invariant::failover, e.at, e.message,
            "provider " + std::to_string(e.provider) + " answered " + std::string(to_string(e.outcome)) +
                " and a retry was planned, though " +
                std::to_string(spec_.providers.size() - static_cast<std::size_t>(tried)) +
                " providers were untried");
  }
  if (e.decision.step == Step::retry || e.decision.step == Step::unknown) m.round_tried = 0;
}

// S-async's evidence: what the pod's switch was shown (sync submits while in sync mode, probes
// while in async mode), reported before any change of mode it causes.
void Oracle::observe_sync_submit(const SubmitFinished& e) {
  const SyncAsyncConfig& c = spec_.platform.sync_to_async;
  PodMode& pm = mode(e.pod);
  const bool failed = e.outcome != SubmitClass::accepted;
  check_async_late(pm, e.pod, e.at);
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

Oracle::PodMode& Oracle::mode(PodId pod) {
  RELAYSIM_ASSERT(pod >= 1, "a pod");
  if (modes_.size() < pod) modes_.resize(pod);
  RELAYSIM_ASSERT(pod <= modes_.size(), "a pod's mode is kept");
  return modes_[pod - 1];
}

// Why `rule` could not have fired at `at` on the evidence, or empty if it could. Each rule is
// read from its definition (model/sms/sync_async.h); the error-rate window's bucketing is met
// with a necessary condition over a tenth more than the window.
std::string Oracle::async_rule_unmet(const PodMode& m, AsyncRule rule, Time at) const {
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
std::string Oracle::latency_window_unmet(const PodMode& m, Time at) const {
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
std::string Oracle::growth_unmet(const PodMode& m, Time at) const {
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
std::string Oracle::error_rate_unmet(const PodMode& m, Time at) const {
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
void Oracle::check_async_late(PodMode& m, PodId pod, Time at) {
  const SyncAsyncConfig& c = spec_.platform.sync_to_async;
  if (m.must_enter != AsyncRule::none) {
    violate(Invariant::async, at, 0,
            "pod " + std::to_string(pod) + " stayed in sync mode though its " + std::string(to_string(m.must_enter)) +
                " rule held at " + format_time(m.must_enter_at));
    m.must_enter = AsyncRule::none;
  }
  if (!m.async || m.late_reported) return;
  std::string why;
  if (c.exit == SyncAsyncConfig::Exit::after && at > m.entered + c.after) {
    why = "though it entered at " + format_time(m.entered) + " to stay " + format_duration(c.after);
  } else if (c.exit == SyncAsyncConfig::Exit::probe && m.good_probes >= c.min_probes) {
    why = "though " + std::to_string(m.good_probes) + " good probes in a row have come back (" +
          std::to_string(c.min_probes) + " end it)";
  } else {
    return;
  }
  m.late_reported = true;
  violate(Invariant::async, at, 0,
          "pod " + std::to_string(pod) + " is still in async mode at " + format_time(at) + ", " + why);
}

void Oracle::on(const ModeChanged& e) {
  const SyncAsyncConfig& c = spec_.platform.sync_to_async;
  PodMode& m = mode(e.pod);
  const std::string pod = "pod " + std::to_string(e.pod);
  if (!c.enabled) {
    violate(Invariant::async, e.at, 0, pod + " changed mode though sync-to-async is off");
    return;
  }
  if (e.change.entered) {
    if (m.async) {
      violate(Invariant::async, e.at, 0, pod + " entered async mode while in it");
    } else if (std::string why = async_rule_unmet(m, e.change.rule, e.at); !why.empty()) {
      violate(Invariant::async, e.at, 0,
              pod + " entered async mode by " + std::string(to_string(e.change.rule)) + ", but " + why);
    }
    m = PodMode{};
    m.async = true;
    m.entered = e.at;
    return;
  }
  if (!m.async) {
    violate(Invariant::async, e.at, 0, pod + " left async mode it was not in");
  } else if (e.change.rule == AsyncRule::timer) {
    if (c.exit != SyncAsyncConfig::Exit::after || e.at != m.entered + c.after) {
      violate(Invariant::async, e.at, 0,
              pod + " left async mode by its timer at " + format_time(e.at) + ", not at " +
                  format_time(m.entered + c.after));
    }
  } else if (e.change.rule == AsyncRule::probes) {
    if (c.exit != SyncAsyncConfig::Exit::probe || m.good_probes < c.min_probes) {
      violate(Invariant::async, e.at, 0,
              pod + " left async mode after " + std::to_string(m.good_probes) + " good probes in a row (needs " +
                  std::to_string(c.min_probes) + ")");
    }
  } else {
    violate(Invariant::async, e.at, 0, pod + " left async mode by " + std::string(to_string(e.change.rule)));
  }
  m = PodMode{};  // judged afresh
}

void Oracle::finalise(Message& m, MessageId id, Status s, Time at) {
  RELAYSIM_ASSERT(is_final(s), "only a final status ends a message");
  if (m.final_status != kOpen) {
    violate(Invariant::final, at, id,
            "became " + std::string(to_string(s)) + " after it had ended " +
                std::string(to_string(static_cast<Status>(m.final_status))));
    return;
  }
  m.final_status = static_cast<std::uint8_t>(s);
}

void Oracle::on(const Completed& e) {
  Message* m = find(e.row.id);
  if (m == nullptr) return;
  if (!e.applied) {
    if (e.failed) m->store_failed = true;
    return;
  }
  const Completion& c = e.completion;
  check_ending(*m, e.row.id, e.row, c);
  m->counted = static_cast<std::uint16_t>(std::min<unsigned>(UINT16_MAX, unsigned{m->counted} + c.attempts));
  if (e.row.claim_token == m->claim) {
    m->claim_submits = 0;
    m->claim = 0;
  }
  move(*m, e.row.id, m->status, c.status, c.at);
  m->accepted = m->accepted || c.accepted;
  if (c.status == Status::unknown) m->pinned = c.provider != kNoProvider ? c.provider : m->pinned;
  if (!is_final(c.status)) return;
  finalise(*m, e.row.id, c.status, c.at);
  // A crash or a store failure may hide a submit from the count the gateway keeps (so it may
  // give up after more), never add one.
  if (c.status == Status::failed && c.reason == Reason::exhausted && m->business >= 1 &&
      m->business <= spec_.businesses.size()) {
    const std::uint16_t allowed = spec_.businesses[m->business - 1].policy.retry.max_attempts;
    if (m->submits < allowed) {
      violate(Invariant::retry, c.at, e.row.id,
              "gave up as exhausted after " + std::to_string(m->submits) + " submits, of " + std::to_string(allowed) +
                  " its business allows");
    }
  }
  if (m->charged && relaysim::sms::refunds(c.status, m->accepted)) {
    m->charged = false;
    ++refunds_;
    std::uint64_t& used = charged_[ledger_key(m->business, m->period)];
    RELAYSIM_ASSERT(used > 0, "a refund follows a charge");
    --used;
  }
}

void Oracle::on(const ReceiptReceived& e) {
  Message* m = find(e.message);
  if (m == nullptr || e.outcome != ReceiptOutcome::applied) return;
  m->accepted = true;
  move(*m, e.message, m->status, e.delivered ? Status::delivered : Status::undelivered, e.at);
  finalise(*m, e.message, e.delivered ? Status::delivered : Status::undelivered, e.at);
}

void Oracle::move(Message& m, MessageId id, Status from, Status to, Time at) {
  if (!allows(kMessageLifecycle, from, to)) {
    violate(Invariant::lifecycle, at, id,
            "moved " + std::string(to_string(from)) + " -> " + std::string(to_string(to)) + ", which its lifecycle has no move for");
  }
  m.status = to;
}

void Oracle::on(const ClientAnswered& e) {
  const AcceptOutcome o = e.answer.outcome;
  if (!e.repeat && e.answer.fault == AuthFault::none && !e.answer.unavailable &&
      (o == AcceptOutcome::duplicate || o == AcceptOutcome::conflict)) {
    violate(Invariant::dedup, e.at, e.answer.first,
            "new request " + key_text(e.key) + " was answered as a " + std::string(to_string(o)) + " of message " +
                std::to_string(e.answer.first));
  }
  const bool refused = e.answer.fault != AuthFault::none;
  if (e.token == TokenKind::good && refused) {
    violate(Invariant::scope, e.at, 0,
            "a good token of request " + key_text(e.key) + " was refused as " +
                std::string(to_string(e.answer.fault)));
  } else if (e.token != TokenKind::good && !refused) {
    violate(Invariant::scope, e.at, e.answer.first,
            "a " + std::string(to_string(e.token)) + " token of request " + key_text(e.key) +
                " was let through");
  }
}

void Oracle::on(const AdminActed& e) {
  if (e.action != static_cast<std::uint8_t>(AdminAction::revoke) || e.outcome != AdminOutcome::done) return;
  if (revoked_epochs_.size() <= e.business) revoked_epochs_.resize(e.business + 1);
  RELAYSIM_ASSERT(e.business < revoked_epochs_.size(), "a revoked grant's business has a list of epochs");
  revoked_epochs_[e.business].push_back(e.epoch);
}

void Oracle::on(const AdminQueried& e) {
  // The back office's answers, against what the oracle saw happen.
  const BusinessId id = e.business + 1;
  if (e.quota) {
    const auto it = charged_.find(ledger_key(id, e.quota->period));
    const std::uint64_t held = it == charged_.end() ? 0 : it->second;
    if (e.quota->used != held) {
      violate(Invariant::quota, e.at, 0,
              "the back office said business " + std::to_string(id) + " used " + std::to_string(e.quota->used) +
                  " of its quota; the oracle counts " + std::to_string(held));
    }
  }
  if (e.latest) {
    const Message* m = find(e.latest->message.id);
    const Status said = e.latest->message.status;
    if (m != nullptr && m->final_status != kOpen && static_cast<Status>(m->final_status) != said) {
      violate(Invariant::final, e.at, e.latest->message.id,
              "the back office said it is " + std::string(to_string(said)) + ", but it ended " +
                  std::string(to_string(static_cast<Status>(m->final_status))));
    }
    if (e.latest->history.empty() || e.latest->history.back().status != said) {
      violate(Invariant::final, e.at, e.latest->message.id, "its status history does not end in its status");
    }
  }
}

void Oracle::on(const ProviderSubmitted& e) {
  if (!sms::sent(e.fate)) return;
  ++sent_;
  Message* m = find(e.message);
  if (m == nullptr) return;
  if (++m->sends > 1) {
    DuplicateCause cause = DuplicateCause::unexplained;
    // An earlier send whose accept the gateway never heard of: its answer was lost or late, or
    // its pod crashed before the answer came.
    if (m->seen_accepts < m->sends - 1) {
      cause = DuplicateCause::answer_lost;
    } else if (m->rescued) {
      cause = DuplicateCause::rescued;
    } else if (m->store_failed) {
      cause = DuplicateCause::store_failure;
    }
    RELAYSIM_ASSERT(static_cast<std::size_t>(cause) < duplicates_.size(), "a duplicate's cause the table counts");
    ++duplicates_[static_cast<std::size_t>(cause)];
    if (cause == DuplicateCause::unexplained) {
      violate(Invariant::dup, e.at, e.message,
              "provider " + std::to_string(e.provider) + " sent it again (" + std::to_string(m->sends) +
                  " times) with no ambiguous outcome to explain it");
    }
  }
}

void Oracle::on(const KvApplied& e) {
  auto it = store_limits_.find(e.key);
  if (it == store_limits_.end()) it = store_limits_.emplace(std::string(e.key), LimitReplay(e.spec)).first;
  LimitReplay& replay = it->second;
  if (e.op == LimitOp::peek) return;  // records nothing
  ++limit_checks_;
  const LimitReplay::Verdict v = replay.judge(e.at, e.cost, e.member);
  const bool counted = e.op == LimitOp::force || e.decision.admitted;
  if (e.op == LimitOp::force && !v.admitted) {
    violate(Invariant::limit, e.at, 0,
            "limit '" + std::string(e.key) + "' recorded a call its " + std::string(to_string(e.spec.algorithm)) +
                " refuses: it was checked, then set in a second call");
  } else if (e.op == LimitOp::take && e.decision.admitted != v.admitted) {
    violate(Invariant::limit, e.at, 0,
            "limit '" + std::string(e.key) + "' (" + std::string(to_string(e.spec.algorithm)) + ", " +
                std::to_string(e.spec.limit) + " per " + format_duration(e.spec.window) + ") " +
                (e.decision.admitted ? "admitted a call its definition refuses" : "refused a call its definition admits"));
  }
  if (counted && !v.repeat) replay.record(e.at, e.cost, e.member);
}

void Oracle::on(const KvRestarted&) {
  // The store came back empty: every limit starts afresh, which lets up to one limit's worth
  // more through (attributed to the restart, not a violation).
  for (auto& [key, replay] : store_limits_) replay.reset();
}

void Oracle::on(const LimitDecided& e) {
  const SharedDecision& d = e.decision;
  if (d.via == LimitVia::deny && d.admitted) {
    violate(Invariant::limit, e.at, e.message, "admitted by the deny policy");
    return;
  }
  if (d.via != LimitVia::local) return;
  // The pod's share of the limit while the store is down, as the promise states it: the limit
  // and the burst divided among the pods, rounded up.
  const std::uint32_t n = std::max<std::uint32_t>(1, e.limit.pods);
  LimiterSpec share = e.limit.spec;
  share.limit = (share.limit + n - 1) / n;
  share.burst = (share.burst + n - 1) / n;
  RELAYSIM_ASSERT(e.pod >= 1, "a pod");
  if (local_limits_.size() < e.pod) local_limits_.resize(e.pod);
  RELAYSIM_ASSERT(share.limit >= 1 || e.limit.spec.limit == 0, "a pod's share of a limit is at least one call");
  auto it = local_limits_[e.pod - 1].try_emplace(e.business, share).first;
  ++limit_checks_;
  const LimitReplay::Verdict v = it->second.judge(e.at, 1, e.member);
  if (d.admitted && !v.admitted) {
    violate(Invariant::limit, e.at, e.message,
            "pod " + std::to_string(e.pod) + "'s local limit admitted more than its share (" +
                std::to_string(share.limit) + " per " + format_duration(share.window) + ") while the store was down");
  }
  if (d.admitted && !v.repeat) it->second.record(e.at, 1, e.member);
}

void Oracle::reset_local_limits(PodId pod) {
  RELAYSIM_ASSERT(pod >= 1, "gateway pods are numbered from 1");
  if (pod <= local_limits_.size()) local_limits_[pod - 1].clear();
  if (pod <= modes_.size()) modes_[pod - 1] = PodMode{};
}

// A pod restarts with fresh local limits and in sync mode.
void Oracle::on(const ProcessStarted& e) { reset_local_limits(e.pod + 1); }
void Oracle::on(const ProcessCrashed& e) { reset_local_limits(e.pod + 1); }

void Oracle::finish(Time end, Store& store) {
  for (std::size_t i = 0; i < modes_.size(); ++i) check_async_late(modes_[i], static_cast<PodId>(i + 1), end);
  // Every accepted message is still in the store (ids are never reused, nothing is deleted).
  std::uint64_t stored = 0;
  for (const std::uint64_t n : store.counts().by_status) stored += n;
  if (stored < messages_.size()) {
    lost_ = messages_.size() - stored;
    violate(Invariant::final, end, 0,
            std::to_string(lost_) + " accepted messages are missing from the store (" + std::to_string(stored) +
                " of " + std::to_string(messages_.size()) + " kept)");
  }
  // The store holds exactly the quota one charge per message, less refunds, comes to.
  for (const auto& [key, used] : charged_) {
    const auto business = static_cast<BusinessId>(key >> 32);
    const auto period = static_cast<std::uint32_t>(key);
    const std::uint64_t held = store.quota_used(business, period);
    if (held != used) {
      violate(Invariant::quota, end, 0,
              "business " + std::to_string(business) + " holds " + std::to_string(held) + " quota units in period " +
                  std::to_string(period) + ", but its messages account for " + std::to_string(used) +
                  " (one charge each, less refunds)");
    }
  }
}

}  // namespace relaysim::sim::sms
