#include "sim/webhook/oracle.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/resilience/backoff.h"
#include "sim/webhook/load.h"

namespace relaysim::sim::webhook {

using namespace relaysim::webhook;

RequestChecker::RequestChecker(const Scenario& scenario, const ServiceB& serviceb, const StoreFaults& store_faults,
                               std::optional<Duration> retention, Ledger& ledger)
    : spec_(spec_of(scenario)),
      serviceb_(serviceb),
      store_faults_(store_faults),
      ledger_(ledger),
      lookup_heads_(std::size_t{spec_.platform.pods} * spec_.cxid_count(), kNoLookup),
      incarnation_(spec_.platform.pods, 0),
      retention_(retention),
      in_flight_(spec_.platform.pods),
      refusing_until_(spec_.platform.pods),
      pauses_(spec_.platform.pods) {
  const PlatformConfig& p = spec_.platform;
  RELAYSIM_ASSERT(p.pods >= 1, "a platform has at least one pod");
  // How long after its deadline a request may still be open. An attempt in flight at the deadline
  // ends within lookup + HTTP timeout, and a freed slot takes expired work before anything else,
  // so without crashes that is the bound. A request in flight under a pod that dies waits for its
  // lease to run out before another pod claims it — so does one whose completion the store failed
  // to record, or whose pod was paused past it (and a paused pod wakes to all that came due
  // meanwhile) — so runs with crashes, pauses or store faults (or a lease forced short) also allow
  // the lease and a minute of scheduling slack.
  const bool strict = scenario.crashes.empty() && scenario.pauses.empty() && !store_faults.any() && !p.allow_unsafe_lease;
  const Duration slack = scenario.oracle.terminal_slack >= Duration::zero() ? scenario.oracle.terminal_slack
                         : strict ? Duration{std::chrono::seconds(1)}
                                  : Duration{std::chrono::minutes(1)};
  terminal_bound_ = (strict ? Duration::zero() : p.lease) + p.lookup_timeout + p.http_timeout + slack;
  notice_bound_ = strict ? Duration::zero() : p.lease + p.store_retry + slack;
  terminal_bound_text_ = "deadline + " + format_duration(terminal_bound_) + " (" +
                         (strict ? std::string() : "lease " + format_duration(p.lease) + " + ") + "lookup_timeout " +
                         format_duration(p.lookup_timeout) + " + http_timeout " + format_duration(p.http_timeout) +
                         " + slack " + format_duration(slack) + ", plus any time no pod was up or the store was failing)";
}

std::uint64_t RequestChecker::life_bit(std::uint32_t life) { return std::uint64_t{1} << std::min<std::uint32_t>(life, 63); }

RequestChecker::Req* RequestChecker::find(RequestId id) {
  const std::uint32_t slot = req_index_.find(id);
  return slot == DenseIdMap::kNone ? nullptr : &reqs_[slot];
}

std::uint32_t RequestChecker::find_key(std::uint64_t request) const {
  const std::uint32_t slot = key_index_.find(request);
  if (slot != DenseIdMap::kNone) return slot;
  const std::uint64_t late = late_keys_.find(request, [&](std::uint64_t s) {
    RELAYSIM_ASSERT(s >= 1 && s <= reqs_.size(), "a late key's slot is in the pool");
    return reqs_[static_cast<std::uint32_t>(s - 1)].request == request;
  });
  return late != 0 ? static_cast<std::uint32_t>(late - 1) : DenseIdMap::kNone;
}

void RequestChecker::forget_finished(Time now) {
  // As the store does: load the cold record a few calls before it is due.
  retention_.prefetch([this](const Retention::Finished& f) -> const Req& { return reqs_[f.slot]; });
  retention_.expire(now, [this, now](const Retention::Finished& f) {
    RELAYSIM_ASSERT(f.slot < reqs_.size(), "a finished request's slot is in the pool");
    Req& q = reqs_[f.slot];
    if (q.id != f.id || q.terminal_count <= q.replays || q.terminal_at != f.at) return;  // replayed since
    // Its notice may still wait in the outbox, if the retention is shorter than a sender may be
    // held up: then the oracle cannot know, and does not say.
    if (notice_bound_ == Duration::zero() || q.terminal_at + notice_bound_ + downtime(q.terminal_at, now) < now) {
      check_notified(q, now);
    }
    if (q.keyed && key_index_.find(q.request) == f.slot) {
      key_index_.erase(q.request);
    } else if (q.keyed) {
      late_keys_.erase(q.request, f.slot + 1);
    }
    req_index_.erase(f.id);
    q = Req{};
    reqs_.release(f.slot);
  });
}

std::string RequestChecker::subject(const Req& q) const {
  return "request " + std::to_string(q.id) + (q.keyed ? " " + LoadGenerator::key_text(q.cxid, q.name) : "");
}

void RequestChecker::violate(Invariant i, const Req* q, RequestId id, Time at, std::string what) {
  ledger_.violate(index(i), at, q != nullptr ? subject(*q) : id != 0 ? "request " + std::to_string(id) : "", std::move(what));
}

void RequestChecker::on(const Ingested& e) {
  const CreateResult& r = e.result;
  if (r.outcome != CreateOutcome::created) return;
  if (!req_index_.accepts(r.id)) {
    violate(Invariant::idem, find(r.id), r.id, e.request.created_at,
            find(r.id) != nullptr ? "the store handed out an id twice" : "the store handed out an id older than an earlier one");
    return;
  }
  const std::uint32_t slot = reqs_.acquire();
  req_index_.insert(r.id, slot);
  Req& q = reqs_[slot];
  RELAYSIM_ASSERT(q.id == 0 && !q.keyed, "a fresh slot holds no request");
  q.id = r.id;
  q.deadline_at = e.request.deadline_at;
  // A cxid that is none of ServiceB's (the live shell's requests may name any) is UINT32_MAX.
  const std::int64_t c = ServiceB::cxid_index(e.request.cxid);
  q.cxid = c < 0 || c >= std::int64_t{spec_.cxid_count()} ? UINT32_MAX : static_cast<std::uint32_t>(c);
  ++acked_;
  // What the platform stores during a client's call is that call's key (ground truth the
  // platform cannot see); bound now, before the request can be delivered. A key that already
  // has a request is not rebound: ClientCreated reports the second one.
  if (calling_now_) {
    calling_now_ = false;
    if (find_key(calling_.request) == DenseIdMap::kNone) bind_key(slot, calling_);
  }
}

void RequestChecker::bind_key(std::uint32_t slot, const ClientKey& key) {
  Req& q = reqs_[slot];
  RELAYSIM_ASSERT(!q.keyed, "a request bound to two client keys");
  q.request = key.request;
  q.name = key.name;
  q.payload = key.payload;
  q.keyed = true;
  if (key_index_.accepts(key.request)) {
    key_index_.insert(key.request, slot);
  } else {
    late_keys_.insert(key.request, slot + 1);  // stored after younger keys: see late_keys_
  }
  RELAYSIM_ASSERT(find_key(key.request) == slot, "a bound key finds its request");
}

void RequestChecker::move(Req& q, Status to, Time at) {
  if (!allows(kRequestLifecycle, q.status, to)) {
    violate(Invariant::lifecycle, &q, q.id, at,
            "moved " + std::string(to_string(q.status)) + " -> " + std::string(to_string(to)) + ", which its lifecycle has no move for");
  }
  q.status = to;
}

void RequestChecker::on(const ClientCalling& e) {
  // Every create starts here, before the store forgets what it forgets at this time; so the
  // oracle forgets here too, before it judges the answer.
  forget_finished(e.at);
  calling_ = e.key;
  calling_now_ = true;
}

void RequestChecker::on(const ClientCreated& e) {
  const ClientKey& key = e.key;
  const IngestResult& r = e.result;
  const Time at = e.at;
  calling_now_ = false;
  // The request number alone names the key: a duplicate or a conflict reuses it.
  const std::uint32_t original_slot = find_key(key.request);
  const Req* original = original_slot != DenseIdMap::kNone ? &reqs_[original_slot] : nullptr;
  // A key the oracle has forgotten (retention) cannot be judged: either answer is allowed.
  // (A key newer than every key stored so far was never stored: nothing to forget.)
  const bool forgotten = original == nullptr && !retention_.forever() && !key_index_.accepts(key.request);
  auto named = [&key] { return LoadGenerator::key_text(key.cxid, key.name); };  // for messages only
  switch (r.status) {
    case IngestStatus::created:
      if (original != nullptr && original->id != r.id) {
        violate(Invariant::idem, nullptr, r.id, at,
                "a second request was stored for " + named() + ", already stored as request " + std::to_string(original->id));
      } else if (const std::uint32_t slot = req_index_.find(r.id);
                 original == nullptr && slot != DenseIdMap::kNone && !reqs_[slot].keyed) {
        bind_key(slot, key);  // no Ingested came during the call
      }
      return;
    case IngestStatus::duplicate:
      if (forgotten) return;
      if (original == nullptr || original->id != r.id || original->payload != key.payload) {
        violate(Invariant::idem, original, r.id, at,
                "a duplicate create of " + named() + " was not answered with the original request");
      }
      return;
    case IngestStatus::conflict:
      if (forgotten) return;
      if (original == nullptr) {
        violate(Invariant::idem, nullptr, r.id, at,
                "a create of " + named() + " was refused as a conflict, but no request of that key was stored (request " +
                    std::to_string(r.id) + " is another key's)");
      } else if (original->payload == key.payload) {
        violate(Invariant::idem, original, r.id, at,
                "a create of " + named() + " was refused as a conflict though its payload matched");
      }
      return;
    case IngestStatus::invalid:
      violate(Invariant::idem, nullptr, 0, at, "a well-formed create of " + named() + " was refused as invalid");
      return;
    case IngestStatus::unavailable:
      return;  // the store failed: nothing was acknowledged
  }
}

void RequestChecker::on(const Claimed& e) {
  Req* q = find(e.row.id);
  if (q == nullptr) return;
  // The deadline the store holds is the one the oracle knows: the create's, or the last replay's.
  if (e.row.deadline_at != q->deadline_at) {
    violate(Invariant::deadline, q, q->id, e.at,
            "was claimed with deadline_at " + format_time(e.row.deadline_at) + " in the store; its deadline is " +
                format_time(q->deadline_at) + (q->replays > 0 ? " (from its last replay)" : " (from its create)"));
    q->deadline_at = std::min(q->deadline_at, e.row.deadline_at);  // report the rest against the stricter one
  }
  RELAYSIM_ASSERT(e.pod < refusing_until_.size(), "an event from a pod the scenario does not have");
  // (A blocked request past its deadline is claimed to be dead-lettered, whatever the breaker.)
  if (q->status == Status::blocked && e.at < refusing_until_[e.pod] && e.at <= q->deadline_at) {
    violate(Invariant::breaker, q, q->id, e.at,
            "was claimed while blocked by pod " + std::to_string(e.pod) + ", whose breaker refuses every lookup until " +
                format_time(refusing_until_[e.pod]) + ": it could only be deferred again");
  }
  if (q->claimed_open) ++rescued_;  // the previous claimant never completed: a rescue
  q->claimed_open = true;
  move(*q, Status::in_flight, e.at);
  q->latest_token = e.row.claim_token;
  q->lease_until = e.row.due_at;
}

void RequestChecker::on(const BreakerChanged& e) {
  RELAYSIM_ASSERT(e.pod < refusing_until_.size(), "an event from a pod the scenario does not have");
  refusing_until_[e.pod] = e.to == BreakerState::open ? e.at + spec_.platform.serviceb_breaker.open_for : Time{};
}

void RequestChecker::on(const AttemptStarted& e) {
  Req* q = find(e.row.id);
  if (q == nullptr) return;
  const Time at = e.at;
  const std::uint32_t number = e.number;
  if (at > q->deadline_at) {
    violate(Invariant::deadline, q, q->id, at,
            "attempt " + std::to_string(number) + " started " + format_duration(at - q->deadline_at) +
                " after its deadline (deadline_at " + format_time(q->deadline_at) + "; no attempt may start after it)");
  }
  if (at < q->inflight_until) {
    violate(Invariant::nodup, q, q->id, at,
            "attempt " + std::to_string(number) + " started while the previous one was in flight until " +
                format_time(q->inflight_until));
  }
  if (q->delivered) {
    violate(Invariant::nodup, q, q->id, at, "attempt " + std::to_string(number) + " started after delivery");
  }
  // A claim's holder sends only within its lease: past it another pod may hold the request (a
  // pod paused past its lease wakes to find that). A lease the records do not carry (the live
  // judge's logs) is not checked.
  if (e.row.claim_token == q->latest_token && q->lease_until != Time{} && at >= q->lease_until) {
    violate(Invariant::nodup, q, q->id, at,
            "attempt " + std::to_string(number) + " started by pod " + std::to_string(e.pod) + " after its claim's lease ended at " +
                format_time(q->lease_until));
  }
  if (q->have_last && q->last_number + 1 == number) {
    if (q->last_terminal) {
      violate(Invariant::retry, q, q->id, at, "a retry after a terminal verdict");
    }
    const RetryPolicy& rp = spec_.platform.retry;
    Duration need = min_delay(rp.backoff, q->last_number);
    need = std::min(need, q->deadline_at - q->last_finish);  // the clamp to the deadline
    if (q->last_retry_after >= Duration::zero()) {
      const Duration asked = std::min(q->last_retry_after, rp.retry_after_max);
      if (asked > need && at - q->last_finish >= asked) ++retry_after_honoured_;
      need = std::max(need, asked);
    }
    if (at - q->last_finish < need) {
      violate(Invariant::retry, q, q->id, at,
              "attempt " + std::to_string(number) + " came " + format_duration(at - q->last_finish) +
                  " after the previous one; the policy asks for at least " + format_duration(need));
    }
  }
  // W-url, as the platform reports it: the URL is an answer this pod may still use.
  const ServiceB::Url expected = ServiceB::url(q->cxid, serviceb_.endpoint_of(q->cxid), e.serviceb_version);
  if (e.url != expected.view() || !url_allowed(e.pod, q->cxid, e.serviceb_version, at)) {
    violate(Invariant::url, q, q->id, at,
            "attempt used " + std::string(e.url) + " (version " + std::to_string(e.serviceb_version) +
                "), not an answer of pod " + std::to_string(e.pod) + "'s own lookups younger than the TTL (" +
                format_duration(spec_.platform.url_cache_ttl) + "); current version is " +
                std::to_string(q->cxid == UINT32_MAX ? 0 : serviceb_.version(q->cxid)));
  }
}

void RequestChecker::on(const ServiceBCalled& e) {
  RELAYSIM_ASSERT(e.pod < incarnation_.size(), "an event from a pod the scenario does not have");
  if (e.version == 0 || e.cxid >= spec_.cxid_count()) return;  // nothing to use
  const Duration ttl = spec_.platform.url_cache_ttl;
  RELAYSIM_ASSERT(std::size_t{e.pod} * spec_.cxid_count() + e.cxid < lookup_heads_.size(),
                  "a lookup list for every pod and cxid");
  std::uint32_t& head = lookup_heads_[std::size_t{e.pod} * spec_.cxid_count() + e.cxid];
  // Drop the entries of no use now: read (answered, and any pause it came in over), and past
  // sent + TTL, or of a dead incarnation.
  for (std::uint32_t* link = &head; *link != kNoLookup;) {
    const std::uint32_t i = *link;
    const Lookup& l = lookups_[i];
    if (l.incarnation != incarnation_[e.pod] || (pauses_.read_at(e.pod, l.answered) < e.at && l.sent + ttl <= e.at)) {
      *link = l.next;
      lookups_[i].next = free_lookup_;
      free_lookup_ = i;
    } else {
      link = &lookups_[i].next;
    }
  }
  const Lookup added{e.at, e.answer_at, e.version, incarnation_[e.pod], head};
  std::uint32_t i = free_lookup_;
  if (i != kNoLookup) {
    free_lookup_ = lookups_[i].next;
    lookups_[i] = added;
  } else {
    i = static_cast<std::uint32_t>(lookups_.size());
    lookups_.push_back(added);
  }
  head = i;
  last_url_ = {};
}

bool RequestChecker::url_allowed(std::uint32_t pod, std::uint32_t cxid, std::uint64_t version, Time at) const {
  if (cxid >= spec_.cxid_count()) return false;
  RELAYSIM_ASSERT(pod < incarnation_.size(), "a pod the scenario has");
  UrlQuestion& last = last_url_;
  if (last.at == at && last.version == version && last.pod == pod && last.cxid == cxid) return last.allowed;
  const Duration ttl = spec_.platform.url_cache_ttl;
  bool allowed = false;
  for (std::uint32_t i = lookup_heads_[std::size_t{pod} * spec_.cxid_count() + cxid]; i != kNoLookup && !allowed;
       i = lookups_[i].next) {
    const Lookup& l = lookups_[i];
    allowed = l.incarnation == incarnation_[pod] && l.version == version && l.answered <= at &&
              (l.answered == at || at < l.sent + ttl || pauses_.read_at(pod, l.answered) == at);
  }
  last = {at, version, pod, cxid, allowed};
  return allowed;
}

void RequestChecker::on(const HttpSent& e) {
  // Ground truth names the request: the client key its payload was written for, not the id the
  // platform put in the header.
  const std::uint32_t slot = e.key != 0 ? find_key(e.key) : DenseIdMap::kNone;
  if (slot == DenseIdMap::kNone) {
    // A key the oracle has forgotten (retention) cannot be judged; anything else is a payload
    // no stored request holds.
    if (e.key == 0 || retention_.forever()) {
      violate(Invariant::url, find(e.request), e.request, e.at,
              "an endpoint received a payload no stored request holds (at " + std::string(e.url) + ")");
    }
    return;
  }
  Req& q = reqs_[slot];
  check_delivery(q, e);
  record_send(q, e);
}

// W-url, at the endpoint: the URL is one of this request's cxid the sending pod may still use,
// and the webhook-id and payload are the request's own.
void RequestChecker::check_delivery(Req& r, const HttpSent& e) {
  const std::uint64_t version = ServiceB::version_in(e.url);
  if (r.cxid == UINT32_MAX || e.url != ServiceB::url(r.cxid, serviceb_.endpoint_of(r.cxid), version).view() ||
      !url_allowed(e.pod, r.cxid, version, e.at)) {
    violate(Invariant::url, &r, r.id, e.at,
            "was sent to " + std::string(e.url) + ", not an answer for cx" + std::to_string(r.cxid) + " of pod " +
                std::to_string(e.pod) + "'s own lookups younger than the TTL (" +
                format_duration(spec_.platform.url_cache_ttl) + "); current version is " +
                std::to_string(r.cxid == UINT32_MAX ? 0 : serviceb_.version(r.cxid)));
  }
  // The endpoint deduplicates by webhook-id: one per request, the same on every attempt. One
  // that names this request's id is no other request's; one that names another id may be.
  const std::uint64_t wid = std::max<std::uint64_t>(1, hash_bytes(e.webhook_id));
  if (const RequestId named = e.request; named != r.id) {  // e.request: the id the header names
    const Req* other = find(named);
    violate(Invariant::url, &r, r.id, e.at,
            "reached its endpoint with webhook-id " + std::string(e.webhook_id) + ", which names " +
                (other != nullptr ? subject(*other) : named == 0 ? std::string("no request") : "request " + std::to_string(named)));
  }
  if (r.webhook_id == 0) {
    r.webhook_id = wid;
  } else if (r.webhook_id != wid) {
    violate(Invariant::url, &r, r.id, e.at,
            "reached its endpoint with webhook-id " + std::string(e.webhook_id) + ", not the one its earlier attempts carried");
  }
  if (e.payload != r.payload) {
    violate(Invariant::url, &r, r.id, e.at, "reached its endpoint with a payload other than the one its client stored");
  }
}

// W-nodup: a second 2xx at the endpoint must have an ambiguous outcome to explain it; and the
// send is in flight until its result.
void RequestChecker::record_send(Req& r, const HttpSent& e) {
  const SendFate& fate = e.fate;
  r.inflight_until = fate.result_at;
  const bool ok = fate.processed && fate.status >= 200 && fate.status < 300;
  if (ok && r.endpoint_ok) {
    ++duplicates_[static_cast<int>(r.ambiguity)];
    if (r.ambiguity == DuplicateCause::unexplained) {
      violate(Invariant::nodup, &r, r.id, e.at,
              "the endpoint received the request again after a 2xx, with no ambiguous outcome to explain it");
    }
  }
  r.ok_in_flight = ok;
  if (ok) {
    r.endpoint_ok = true;
    r.ambiguity = fate.response_lost                       ? DuplicateCause::lost_response
                   : fate.client_error == NetError::timeout ? DuplicateCause::late_response
                                                            : DuplicateCause::unexplained;
    // Its sender frozen now, until past the claim's lease: the answer will be heard too late.
    const Time until = pauses_.paused_until(e.pod);
    if (r.ambiguity == DuplicateCause::unexplained && until > e.at && until >= r.lease_until) {
      r.ambiguity = DuplicateCause::lease_expired;
    }
  }
  RELAYSIM_ASSERT(e.pod < in_flight_.size(), "an event from a pod the scenario does not have");
  auto& flights = in_flight_[e.pod];
  if (flights.size() > 4 * static_cast<std::size_t>(spec_.platform.concurrency_per_pod) + 16) {
    std::erase_if(flights, [at = e.at](const auto& f) { return f.second <= at; });
  }
  flights.emplace_back(r.id, fate.result_at);
}

void RequestChecker::on(const ProcessStarted& e) {
  RELAYSIM_ASSERT(e.pod < incarnation_.size(), "a start of a pod the scenario has");
  if (pods_up_++ == 0 && e.at > all_down_since_) all_down_.emplace_back(all_down_since_, e.at);
}

Duration RequestChecker::downtime(Time from, Time to) const {
  Duration total{};
  auto add = [&](Time a, Time b) {
    const Time lo = std::max(a, from);
    const Time hi = std::min(b, to);
    if (hi > lo) total += hi - lo;
  };
  for (const auto& [a, b] : all_down_) add(a, b);
  if (pods_up_ == 0) add(all_down_since_, to);
  return total + store_faults_.downtime(from, to);
}

void RequestChecker::on(const ProcessPaused& e) {
  RELAYSIM_ASSERT(e.pod < in_flight_.size(), "an event from a pod the scenario does not have");
  // A send whose answer the pod hears only after a pause that outlasts its claim's lease: the
  // claim is rescued meanwhile and the request sent again, its 2xx unheard -- like a crash. (A
  // send still on its way to the endpoint as the pause begins is judged when it lands.)
  pauses_.paused(e);
  for (const auto& [id, result_at] : in_flight_[e.pod]) {
    Req* q = find(id);
    if (q != nullptr && result_at > e.at && e.until >= q->lease_until && q->ok_in_flight &&
        q->ambiguity == DuplicateCause::unexplained) {
      q->ambiguity = DuplicateCause::lease_expired;
    }
  }
  // The only pod up, frozen: as good as none for the deadline bound.
  if (pods_up_ == 1) all_down_.emplace_back(e.at, e.until);
}

void RequestChecker::on(const ProcessCrashed& e) {
  RELAYSIM_ASSERT(pods_up_ > 0, "a crash of a pod that was not up");
  if (--pods_up_ == 0) all_down_since_ = e.at;
  RELAYSIM_ASSERT(e.pod < in_flight_.size(), "an event from a pod the scenario does not have");
  refusing_until_[e.pod] = Time{};  // a restarted pod starts with a fresh, closed breaker
  // A result it would have read only after the crash (it came later, or during a pause the crash
  // ended) was never heard.
  for (const auto& [id, result_at] : in_flight_[e.pod]) {
    Req* q = find(id);
    if (q != nullptr && pauses_.read_at(e.pod, result_at) > e.at && q->ok_in_flight &&
        q->ambiguity == DuplicateCause::unexplained) {
      q->ambiguity = DuplicateCause::crash;
    }
  }
  pauses_.crashed(e);
  in_flight_[e.pod].clear();
  // Its cache died with it: its lookups are of an older incarnation from now on.
  ++incarnation_[e.pod];
  last_url_ = {};
}

void RequestChecker::on(const AttemptFinished& e) {
  Req* q = find(e.attempt.request);
  if (q == nullptr) return;
  // Both count only once the completion is applied: an attempt whose completion the store lost
  // is made again, and its Retry-After binds nothing.
  q->pending_retry_after = (e.result.error == NetError::none) ? e.result.retry_after : Duration{-1};
  // The oracle classifies the result itself: the platform's own verdict is what is on trial.
  q->pending_terminal = classify(spec_.platform.classification, e.result).verdict == Verdict::terminal;
}

void RequestChecker::on(const Completed& e) {
  const RequestRow& row = e.row;
  const Completion& c = e.completion;
  const std::uint32_t slot = req_index_.find(row.id);
  if (slot == DenseIdMap::kNone) return;
  Req* q = &reqs_[slot];
  if (!e.applied) {
    if (!e.failed) ++stale_;
    if (c.attempt != nullptr && q->ok_in_flight && q->ambiguity == DuplicateCause::unexplained) {
      q->ambiguity = e.failed ? DuplicateCause::store_failure : DuplicateCause::lease_expired;
    }
    return;
  }
  if (row.claim_token != q->latest_token) {
    ++stale_applied_;
    violate(Invariant::nodup, q, q->id, c.at,
            "a completion under claim token " + std::to_string(row.claim_token) +
                " was applied after the request had been claimed again (token " + std::to_string(q->latest_token) + ")");
  }
  q->claimed_open = false;
  move(*q, c.status, c.at);
  if (c.attempt != nullptr) q->last_retry_after = q->pending_retry_after;
  if (c.status == Status::pending || c.status == Status::blocked) check_plan(*q, c);
  if (c.attempt != nullptr) {
    q->have_last = true;
    q->last_number = c.attempt->number;
    q->last_finish = c.at;
    q->last_terminal = is_terminal(c.status) || q->pending_terminal;
  } else {
    q->have_last = q->have_last && c.status == Status::blocked;  // a deferral keeps the gap rule
  }
  if (!is_terminal(c.status)) return;
  // terminal_by_status_ follows the store's counts: a request counts in its current state.
  if (q->terminal_count > q->replays) {
    violate(Invariant::noloss, q, q->id, c.at,
            "reached a second terminal state (" + std::string(to_string(c.status)) + ") after " +
                std::string(to_string(q->terminal)));
    RELAYSIM_ASSERT(terminal_by_status_[static_cast<int>(q->terminal)] > 0, "a terminal request is counted in its state");
    --terminal_by_status_[static_cast<int>(q->terminal)];
  }
  ++q->terminal_count;
  if (c.status != Status::delivered) {
    q->failed_lives |= life_bit(q->replays);
    q->failed_status = c.status;
    q->failed_reason = c.reason;
  }
  RELAYSIM_ASSERT(static_cast<int>(c.status) < kStatusCount, "a terminal status the counts have");
  ++terminal_by_status_[static_cast<int>(c.status)];
  q->terminal = c.status;
  q->terminal_at = c.at;
  retention_.finished(c.at, row.id, slot);
  if (c.status == Status::delivered) q->delivered = true;
  const Duration down = downtime(q->deadline_at, c.at);
  if (c.at > q->deadline_at + terminal_bound_ + down) {
    violate(Invariant::deadline, q, q->id, c.at,
            "became " + std::string(to_string(c.status)) + " only " + format_duration(c.at - q->deadline_at) +
                " after its deadline (deadline_at " + format_time(q->deadline_at) + "); the bound is " +
                terminal_bound_text_ + (down > Duration::zero() ? ", here " + format_duration(down) + " with no pod up" : ""));
  }
  if (c.status == Status::dead_lettered && c.reason == Reason::deadline && c.at < q->deadline_at) {
    violate(Invariant::deadline, q, q->id, c.at,
            "dead-lettered " + format_duration(q->deadline_at - c.at) + " before its deadline (deadline_at " +
                format_time(q->deadline_at) + ")");
  }
}

void RequestChecker::check_plan(Req& q, const Completion& c) {
  const Duration wait = c.due_at - c.at;
  // W-deadline: nothing is rescheduled past its deadline (unless it is past already: then now).
  if (c.due_at > std::max(q.deadline_at, c.at)) {
    violate(Invariant::deadline, &q, q.id, c.at,
            std::string(c.status == Status::blocked ? "deferred" : "a retry planned") + " until " + format_time(c.due_at) +
                ", " + format_duration(c.due_at - q.deadline_at) + " after its deadline (deadline_at " +
                format_time(q.deadline_at) + ")");
  }
  // W-retry: the wait lies between the policy's smallest and largest, Retry-After a floor on
  // both, the deadline a ceiling on both — in that order (model/webhook/retry.h). Without jitter
  // the two bounds are one value. The step is the attempt just made (retry n follows attempt n);
  // a deferral's step is the number of deferrals so far.
  const PlatformConfig& p = spec_.platform;
  Duration lo{};
  Duration hi{};
  std::string step;
  if (c.status == Status::blocked) {
    const std::uint32_t n = ++q.deferrals;
    lo = min_delay(p.dependency_backoff, n);
    hi = max_delay(p.dependency_backoff, n, Duration::zero());
    step = "deferral " + std::to_string(n);
  } else {
    if (c.attempt == nullptr) return;
    const std::uint32_t n = c.attempt->number;
    lo = min_delay(p.retry.backoff, n);
    hi = max_delay(p.retry.backoff, n, q.last_wait);
    step = "the retry after attempt " + std::to_string(n);
    if (q.last_retry_after >= Duration::zero()) {
      const Duration asked = std::min(q.last_retry_after, p.retry.retry_after_max);
      lo = std::max(lo, asked);
      hi = std::max(hi, asked);
      step += " (Retry-After " + format_duration(q.last_retry_after) + ")";
    }
    q.last_wait = wait;
  }
  const Duration room = std::max(Duration::zero(), q.deadline_at - c.at);
  lo = std::min(lo, room);
  hi = std::min(hi, room);
  if (wait < lo || wait > hi) {
    violate(Invariant::retry, &q, q.id, c.at,
            step + " was planned " + format_duration(wait) + " later; the policy allows " +
                (lo == hi ? "exactly " + format_duration(lo) : "from " + format_duration(lo) + " to " + format_duration(hi)));
  }
}

void RequestChecker::on(const TenantNotified& e) {
  const Notice& n = e.notice;
  Req* q = find(n.request);
  if (q == nullptr) return;
  const std::uint64_t life = life_bit(n.life);
  const std::string told = "its tenant was told it " + std::string(to_string(n.status)) +
                           (n.life > 0 ? " (after replay " + std::to_string(n.life) + ")" : "");
  if ((q->failed_lives & life) == 0 || (n.status != Status::failed && n.status != Status::dead_lettered)) {
    violate(Invariant::noloss, q, q->id, e.at, told + ", but it never ended so");
  } else if (n.life == q->replays && (n.status != q->failed_status || n.reason != q->failed_reason)) {
    // Of the latest life the oracle keeps how it ended: the notice must say so.
    violate(Invariant::noloss, q, q->id, e.at,
            told + " (" + std::string(to_string(n.reason)) + "), but it ended " + std::string(to_string(q->failed_status)) +
                " (" + std::string(to_string(q->failed_reason)) + ")");
  } else if ((q->told_lives & life) != 0 && n.sends <= 1 && n.life < 63) {
    // A second send is allowed only as a resend: its sender died before removing it. (Lives from
    // the 63rd on share one bit: a second first send there cannot be told from a later life's.)
    violate(Invariant::noloss, q, q->id, e.at, told + " twice, by two first sends");
  }
  q->told_lives |= life;
}

void RequestChecker::on(const Replayed& e) {
  // The store forgot what was due before it looked the request up (as at a create): so does
  // the oracle, before it judges the answer.
  forget_finished(e.at);
  Req* q = find(e.id);
  const bool terminal = q != nullptr && q->terminal_count > q->replays;
  const std::string state = q == nullptr ? std::string("unknown to the oracle")
                                         : std::string(to_string(terminal ? q->terminal : Status::pending));
  switch (e.outcome) {
    case ReplayOutcome::replayed: {
      if (!terminal) {
        violate(Invariant::noloss, q, e.id, e.at, "a replay restarted it while it was " + state + " (only terminal requests replay)");
        if (q == nullptr) return;
      } else {
        RELAYSIM_ASSERT(terminal_by_status_[static_cast<int>(q->terminal)] > 0, "a terminal request is counted in its state");
        --terminal_by_status_[static_cast<int>(q->terminal)];
        ++q->replays;
        RELAYSIM_ASSERT(q->replays <= q->terminal_count, "a replay follows a terminal state");
      }
      move(*q, Status::pending, e.at);
      // A new life: a fresh deadline, counted from the replay; a fresh schedule. What the
      // endpoint accepted before no longer makes a new receipt a duplicate.
      const Time deadline = e.at + spec_.platform.retry.deadline;
      if (e.deadline_at != deadline) {
        violate(Invariant::deadline, q, q->id, e.at,
                "replayed with deadline_at " + format_time(e.deadline_at) + "; a replay's deadline is " + format_time(deadline) +
                    " (the replay plus retry.deadline)");
      }
      q->deadline_at = deadline;
      q->have_last = false;
      q->last_terminal = false;
      q->pending_terminal = false;
      q->deferrals = 0;
      q->last_wait = Duration::zero();
      q->last_retry_after = Duration{-1};
      q->pending_retry_after = Duration{-1};
      q->delivered = false;
      q->endpoint_ok = false;
      q->ok_in_flight = false;
      q->ambiguity = DuplicateCause::unexplained;
      return;
    }
    case ReplayOutcome::not_terminal:
      if (q == nullptr || terminal) violate(Invariant::noloss, q, e.id, e.at, "a replay was refused as not terminal, but it is " + state);
      return;
    case ReplayOutcome::not_found:
      if (q != nullptr) violate(Invariant::noloss, q, e.id, e.at, "a replay found no such request, but it is stored and " + state);
      return;
    case ReplayOutcome::unavailable:
      return;  // the store failed: nothing changed
  }
}

void RequestChecker::check_notified(const Req& q, Time at) {
  if ((q.failed_lives & ~q.told_lives) != 0) {
    violate(Invariant::noloss, &q, q.id, at, "ended " + std::string(to_string(q.terminal)) + " and its tenant was never told");
  }
}

void RequestChecker::finish(Time end, const StoreCounts& sc, const std::vector<Notice>& outbox) {
  // A notice still in the outbox is not lost (it is durable, and will be sent) unless it has
  // waited longer than any sender could have been held up.
  for (const Notice& n : outbox) {
    Req* q = find(n.request);
    if (q != nullptr) q->told_lives |= life_bit(n.life);
    const Duration down = downtime(n.at, end);
    if (n.at + notice_bound_ + down < end) {
      violate(Invariant::noloss, q, n.request, end,
              "its tenant's notice that it " + std::string(to_string(n.status)) + " has waited in the outbox since " +
                  format_time(n.at) + " (" + std::to_string(n.sends) + " sends); the bound is " +
                  format_duration(notice_bound_) + " plus any time no pod was up or the store was failing");
    }
  }
  // W-noloss: the store holds every acknowledged request, in the state the platform reported.
  std::uint64_t stored = 0;
  for (auto n : sc.by_status) stored += n;
  if (stored != acked_) {
    lost_ += acked_ > stored ? acked_ - stored : 0;
    violate(Invariant::noloss, nullptr, 0, end,
            std::to_string(acked_) + " requests acknowledged but " + std::to_string(stored) + " stored");
  }
  for (int s = static_cast<int>(Status::delivered); s < kStatusCount; ++s) {
    if (sc.by_status[s] != terminal_by_status_[s]) {
      violate(Invariant::noloss, nullptr, 0, end,
              "the store holds " + std::to_string(sc.by_status[s]) + " " + std::string(to_string(static_cast<Status>(s))) +
                  " requests; the platform reported " + std::to_string(terminal_by_status_[s]));
    }
  }
  // W-deadline: everything whose deadline (plus the bound) has passed is terminal.
  for (std::uint32_t slot = 0; slot < reqs_.size(); ++slot) {
    const Req& q = reqs_[slot];
    if (q.id == 0) continue;
    check_notified(q, end);
    if (q.terminal_count > q.replays) continue;
    if (q.deadline_at + terminal_bound_ + downtime(q.deadline_at, end) <= end) {
      violate(Invariant::deadline, &q, q.id, end,
              "still not terminal " + format_duration(end - q.deadline_at) + " after its deadline (deadline_at " +
                  format_time(q.deadline_at) + "); the bound is " + terminal_bound_text_);
    }
  }
}

// ---- BreakerChecker ---------------------------------------------------------------------------

BreakerChecker::BreakerChecker(const Scenario& scenario, const ServiceB& serviceb, Ledger& ledger)
    : spec_(spec_of(scenario)), serviceb_(serviceb), ledger_(ledger), pods_(spec_.platform.pods), pauses_(spec_.platform.pods) {}

BreakerChecker::PodView& BreakerChecker::view(std::uint32_t pod) {
  RELAYSIM_ASSERT(pod < pods_.size(), "an event from a pod the scenario does not have");
  return pods_[pod];
}

void BreakerChecker::violate(std::uint32_t pod, Time at, std::string what) {
  ledger_.violate(index(Invariant::breaker), at, "pod " + std::to_string(pod), std::move(what));
}

void BreakerChecker::on(const ProcessPaused& e) { pauses_.paused(e); }

void BreakerChecker::on(const ProcessCrashed& e) {
  pauses_.crashed(e);
  view(e.pod) = PodView{};  // a restarted pod starts with a fresh, closed breaker and an empty window
}

void BreakerChecker::check_transition(std::uint32_t pod, PodView& p, BreakerState to, Time at) {
  const BreakerConfig& b = spec_.platform.serviceb_breaker;
  // A state change is moved by a result that arrives at that moment, from a call admitted in the
  // current state (a later generation ignores every older result) — except open -> half-open,
  // which time alone earns.
  // When the breaker saw each answer: as it came, or when a pause it came in ended.
  auto seen = [&](const Call& c) { return pauses_.read_at(pod, c.answer_at); };
  auto answered_now = [&](bool ok) {
    return std::any_of(p.calls.begin(), p.calls.end(), [&](const Call& c) { return seen(c) == at && c.ok == ok; });
  };
  const std::string change = std::string(to_string(p.breaker)) + " -> " + std::string(to_string(to));
  switch (to) {
    case BreakerState::half_open:
      if (p.breaker != BreakerState::open || at < p.changed_at + b.open_for) {
        violate(pod, at, change + " " + format_duration(at - p.changed_at) + " after it changed; open_for is " +
                             format_duration(b.open_for));
      }
      return;
    case BreakerState::closed: {
      // Only half-open closes, after half_open_probes successful probes of this period.
      const auto successes = std::count_if(p.calls.begin(), p.calls.end(), [&](const Call& c) { return c.ok && seen(c) <= at; });
      if (p.breaker != BreakerState::half_open || !answered_now(true) || static_cast<std::uint32_t>(successes) < b.half_open_probes) {
        violate(pod, at, change + " after " + std::to_string(successes) + " successful probes of this half-open period (" +
                             std::to_string(b.half_open_probes) + " needed)");
      }
      return;
    }
    case BreakerState::open: {
      if (p.breaker == BreakerState::half_open) {
        if (!answered_now(false)) violate(pod, at, change + " with no failed probe of this half-open period answered then");
        return;
      }
      // closed -> open: the window's results must say so. The breaker counts results in buckets
      // of window/10 and looks back over 9 to 10 of them; so at least the results of
      // [at - 9 buckets, at) counted, and at most those of (at - window, at].
      const Duration bucket{to_ns(b.window) / 10};
      std::uint32_t calls = 0;
      std::uint32_t failures = 0;
      std::uint32_t surely_counted = 0;
      for (const Call& c : p.calls) {
        const Time t = seen(c);
        if (t > at || t <= at - b.window) continue;
        ++calls;
        if (!c.ok) ++failures;
        if (t >= at - 9 * bucket && t < at) ++surely_counted;
      }
      if (!answered_now(false) || calls < b.min_calls ||
          static_cast<double>(failures) < b.failure_rate * static_cast<double>(surely_counted)) {
        violate(pod, at, change + " on " + std::to_string(failures) + " failures of " + std::to_string(calls) +
                             " results in the window (" + format_duration(b.window) + "; min_calls " +
                             std::to_string(b.min_calls) + ", failure_rate " + std::to_string(b.failure_rate) +
                             ", at least " + std::to_string(surely_counted) + " results counted)");
      }
      return;
    }
  }
}

void BreakerChecker::on(const BreakerChanged& e) {
  PodView& p = view(e.pod);
  check_transition(e.pod, p, e.to, e.at);
  p.changed_at = e.at;
  p.calls.clear();
  p.breaker = e.to;
  p.half_open_calls = 0;
  p.probe_answers.clear();
  if (e.to == BreakerState::open) p.opened_in_outage = true;
}

void BreakerChecker::on(const ServiceBCalled& e) {
  const std::uint32_t pod = e.pod;
  const Time at = e.at;
  const Time answer_at = e.answer_at;
  PodView& p = view(pod);
  const BreakerConfig& b = spec_.platform.serviceb_breaker;
  if (!e.ok) {
    p.last_failure_answer = std::max(p.last_failure_answer, answer_at);
    p.ok_calls_after_failure = 0;
  } else if (at > p.last_failure_answer) {
    ++p.ok_calls_after_failure;
  }
  if (p.breaker == BreakerState::open) violate(pod, at, "called ServiceB while its breaker was open");
  // Calls of this state period; a closed breaker forgets what left its window: a window after
  // it saw the answer (when it came, or when a pause it came in ended).
  if (p.breaker == BreakerState::closed) {
    while (!p.calls.empty() && pauses_.read_at(pod, p.calls.front().answer_at) + b.window < at) p.calls.pop_front();
  }
  p.calls.push_back({at, answer_at, e.ok});
  // In an outage every call fails. Once a whole window (plus the time for answers to come back)
  // has passed inside it, the breaker's window holds failures only; its buckets always cover at
  // least 0.9 of the window, so min_calls failures landing within that span must open it. Calls
  // already in flight when it opens (at most the pod's concurrency) may still land.
  const auto& outages = serviceb_.outages();
  for (std::uint32_t o = 0; o < outages.size(); ++o) {
    const Window& w = outages[o].window;
    if (!w.contains(at)) continue;
    if (p.outage != o) {
      p.outage = o;
      p.closed_failures.clear();
      p.opened_in_outage = false;
      p.reported_never_opened = false;
    }
    // (The window holds failures only once a window has passed since the pod read the last answer
    // to a call made before the outage: later, if a pause held those answers back.)
    if (p.breaker != BreakerState::closed || at < pauses_.read_at(pod, w.at + spec_.platform.lookup_timeout) + b.window) continue;
    const Duration span = b.window * 9 / 10;
    p.closed_failures.push_back(answer_at);
    while (!p.closed_failures.empty() && p.closed_failures.front() <= answer_at - span) p.closed_failures.pop_front();
    if (p.closed_failures.size() > b.min_calls + spec_.platform.concurrency_per_pod && !p.opened_in_outage &&
        !p.reported_never_opened) {
      p.reported_never_opened = true;
      violate(pod, at,
              "its breaker stayed closed through " + std::to_string(p.closed_failures.size()) +
                  " failed ServiceB calls within " + format_duration(span) + ", " + format_duration(at - w.at) +
                  " into an outage (min_calls " + std::to_string(b.min_calls) + ")");
    }
  }
  if (p.breaker == BreakerState::half_open) {
    std::erase_if(p.probe_answers, [at](Time t) { return t <= at; });
    if (p.probe_answers.size() >= b.half_open_probes) {
      violate(pod, at, "had more than " + std::to_string(b.half_open_probes) + " half-open probes in flight at once");
    }
    p.probe_answers.push_back(answer_at);
    // At most `probes` at once, and `probes` successes close it: 2 * probes bounds one period.
    const std::uint32_t bound = 2 * b.half_open_probes;
    if (++p.half_open_calls > bound) violate(pod, at, "sent more than " + std::to_string(bound) + " half-open probes");
  }
}

void BreakerChecker::finish(Time end, const std::vector<BreakerState>& final_breakers) {
  // W-breaker: once ServiceB answers a pod well again, its breaker closes. After the pod's last
  // failed answer, half_open_probes successful calls close it; allow for calls still unanswered
  // when the run ended (at most the pod's concurrency).
  const BreakerConfig& b = spec_.platform.serviceb_breaker;
  RELAYSIM_ASSERT(final_breakers.size() <= pods_.size(), "no more breakers than the scenario has pods");
  for (std::uint32_t pod = 0; pod < final_breakers.size(); ++pod) {
    const PodView& p = pods_[pod];
    if (final_breakers[pod] != BreakerState::closed &&
        p.ok_calls_after_failure >= b.half_open_probes + spec_.platform.concurrency_per_pod) {
      violate(pod, end,
              "its breaker is still " + std::string(to_string(final_breakers[pod])) + " after " +
                  std::to_string(p.ok_calls_after_failure) + " successful ServiceB calls since its last failure");
    }
  }
}

}  // namespace relaysim::sim::webhook
