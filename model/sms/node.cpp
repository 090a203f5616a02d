#include "model/sms/node.h"

#include <algorithm>
#include <bit>
#include <string>

#include "model/core/assert.h"
#include "model/core/random.h"
#include "model/sms/mutants.h"

namespace relaysim::sms {

namespace {

SharedLimitConfig business_limit_config(const PlatformConfig& config, const LimiterSpec& spec) {
  SharedLimitConfig c = config.cluster_limit.value_or(SharedLimitConfig{});
  c.spec = spec;
  c.pods = config.pods;
  return c;
}

// A sync send waits for its first outcome; bulk, scheduled and marketing sends are stored and
// sent by the workers.
bool may_go_sync(const SendRequest& r, Time now) {
  if (r.messages.size() != 1) return false;
  const NewMessage& m = r.messages[0];
  return m.send_at <= now && (m.kind == Kind::single || m.kind == Kind::resend);
}

}  // namespace

Node::Node(PodId pod, const PlatformConfig& config, std::span<const BusinessPolicy> businesses, NodePorts ports)
    : pod_(pod),
      config_(config),
      businesses_(businesses),
      clock_(ports.clock),
      timers_(ports.timers),
      rng_(ports.rng),
      providers_(ports.providers),
      kv_(ports.kv),
      directory_(ports.directory),
      store_(ports.store),
      events_(ports.events),
      auth_(ports.codec, ports.clock),
      router_(config.routing, ports.providers.count()),
      switch_(config.sync_to_async),
      workers_(config.concurrency_per_pod),
      waker_(ports.timers, [this] { pump(); }) {
  RELAYSIM_ASSERT(pod >= 1, "pod 0 means no pod to the store");
  RELAYSIM_ASSERT(providers_.count() >= 1 && providers_.count() <= kMaxProviders, "1 to 64 providers");
  if (config.cluster_limit) {
    SharedLimitConfig c = *config.cluster_limit;
    c.pods = config.pods;
    cluster_limit_ = std::make_unique<SharedLimiter>("sms:cluster", c, kv_, clock_);
  }
}

Node::~Node() {
  if (mode_timer_) timers_.cancel(mode_timer_);
  for (std::uint32_t i = 0; i < jobs_.size(); ++i) {
    if (jobs_[i].retry_timer) timers_.cancel(jobs_[i].retry_timer);
  }
}

const BusinessPolicy& Node::policy(BusinessId business) const {
  static const BusinessPolicy kDefault{};
  return business >= 1 && business <= businesses_.size() ? businesses_[business - 1] : kDefault;
}

SharedLimiter* Node::business_limiter(BusinessId business) {
  const BusinessPolicy& p = policy(business);
  if (!p.limit || business < 1) return nullptr;
  if (business_limits_.size() < business) business_limits_.resize(business);
  std::unique_ptr<SharedLimiter>& l = business_limits_[business - 1];
  if (!l) {
    l = std::make_unique<SharedLimiter>("sms:business:" + std::to_string(business),
                                        business_limit_config(config_, *p.limit), kv_, clock_);
  }
  return l.get();
}

void Node::send(const SendRequest& request, AnswerCallback done) {
  RELAYSIM_ASSERT(!request.messages.empty(), "a send request carries at least one message");
  const Time now = clock_.now();
  SendAnswer a;
  auto reply = [&] {
    events_.emit(Answered{pod_, a, now});
    done(a);
  };
  const AuthResult auth = auth_.check(request.token, SendScope{request.sender, request.template_id});
  if (auth.fault != AuthFault::none) {
    a.fault = auth.fault;
    a.answer = Answer::failure;
    reply();
    return;
  }
  ModeChange change;
  const SendPath path = may_go_sync(request, now) ? switch_.route(now, change) : SendPath::async;
  if (change) mode_changed(change, now);
  const AcceptRequest accept{auth.business, auth.epoch, now, quota_period(now, config_.quota_period),
                             request.messages, path == SendPath::async ? PodId{0} : pod_, config_.lease};
  AcceptResult r;
  try {
    r = store_.accept(accept);
  } catch (const StoreError& e) {
    store_failed(StoreOp::accept, e.failure());
    a.unavailable = true;
    a.answer = Answer::failure;
    reply();
    return;
  }
  events_.emit(Accepted{pod_, accept, r, path});
  a.outcome = r.outcome;
  a.first = r.first;
  a.quota_left = r.quota_left;
  a.path = path;
  if (r.outcome != AcceptOutcome::accepted) {
    a.answer = r.outcome == AcceptOutcome::duplicate ? answer_for(r.status) : Answer::failure;
    reply();
    return;
  }
  a.answer = Answer::pending;
  if (path == SendPath::async) {
    reply();
    pump();  // persist, then send at once: the workers take it now if they have room
    return;
  }
  start_sync(request.messages[0], accept, r, path, a, std::move(done));
}

// Sync: the message was accepted already claimed by this pod; it is sent in the client's request.
void Node::start_sync(const NewMessage& m, const AcceptRequest& accept, const AcceptResult& r, SendPath path,
                      const SendAnswer& a, AnswerCallback done) {
  RELAYSIM_ASSERT(r.first_token != 0, "a message accepted for this pod comes claimed by it");
  const Time now = accept.now;
  const std::uint32_t slot = new_job();
  Job& j = jobs_[slot];
  accepted_row(m, accept, r, j.row);
  j.prior = Status::pending;
  j.path = path;
  j.lease_ends = now + config_.lease;
  j.answer = std::move(done);
  j.reply = a;
  j.answered = false;
  ++sync_busy_;
  events_.emit(Claimed{pod_, j.row, j.prior, now});
  begin(slot);
}

// The row the store holds for `m`, accepted by `accept` already claimed by this pod.
void Node::accepted_row(const NewMessage& m, const AcceptRequest& accept, const AcceptResult& r,
                        MessageRow& row) const {
  const Time now = accept.now;
  row.id = r.first;
  row.business = accept.business;
  row.biz_type.assign(m.biz_type);
  row.biz_id.assign(m.biz_id);
  row.recipient = m.recipient;
  row.template_id = m.template_id;
  row.content = m.content;
  row.campaign = m.campaign;
  row.resend_of = m.resend_of;
  row.created_at = now;
  row.send_at = m.send_at;
  row.due_at = now + config_.lease;
  row.updated_at = now;
  row.final_at = Time{};
  row.period = accept.period;
  row.claim_token = r.first_token;
  row.lease_owner = pod_;
  row.attempts = 0;
  row.segments = m.segments;
  row.provider = kNoProvider;
  row.kind = m.kind;
  row.status = Status::in_flight;
  row.reason = Reason::none;
  row.charged = true;
  row.accepted = false;
}

CampaignAnswer Node::campaign(const CampaignRequest& request) {
  const Time now = clock_.now();
  CampaignAnswer a;
  auto reply = [&] {
    events_.emit(CampaignAnswered{pod_, request, a, now});
    return a;
  };
  const AuthResult auth = auth_.check(request.token, SendScope{request.sender, request.template_id});
  if (auth.fault != AuthFault::none) {
    a.fault = auth.fault;
    return reply();
  }
  if (auto parsed = Filter::parse(request.filter, directory_.vocabulary()); auto* e = std::get_if<FilterError>(&parsed)) {
    a.filter_error = std::move(*e);
    return reply();
  }
  const NewCampaign c{auth.business,   auth.epoch,      request.biz_type, request.biz_id, request.filter,
                      request.template_id, request.content, request.segments, now,            request.send_at};
  CampaignStart started;
  try {
    started = store_.start_campaign(c);
  } catch (const StoreError& e) {
    store_failed(StoreOp::campaign, e.failure());
    a.unavailable = true;
    return reply();
  }
  a.outcome = started.outcome;
  a.id = started.id;
  reply();
  if (started.outcome == AcceptOutcome::accepted) {
    campaigns_next_look_ = now;
    pump();  // expand its first chunk now
  }
  return a;
}

const Filter* Node::filter_of(const CampaignRow& c) {
  RELAYSIM_ASSERT(c.id != 0, "a campaign the store handed out has an id");
  for (auto& [id, f] : filters_) {
    if (id == c.id) return &f;
  }
  auto parsed = Filter::parse(c.filter, directory_.vocabulary());
  Filter* f = std::get_if<Filter>(&parsed);
  if (f == nullptr) return nullptr;
  constexpr std::size_t kKept = 16;
  if (filters_.size() >= kKept) filters_.erase(filters_.begin());
  filters_.emplace_back(c.id, std::move(*f));
  return &filters_.back().second;
}

void Node::expand() {
  const Time now = clock_.now();
  // The store is asked about campaigns once a chunk interval, not at every pump: most pumps follow
  // a message's completion, and campaigns are few.
  if (now < store_retry_at_ || now < campaigns_next_look_) return;
  campaigns_next_look_ = now + config_.marketing.every;
  try {
    // A claimed campaign's due time moves past now, so each is expanded at most once per call.
    while (store_.claim_campaign(now, pod_, config_.lease, campaign_)) expand_chunk(now);
    campaign_due_ = store_.next_campaign_due();
  } catch (const StoreError& e) {
    store_failed(StoreOp::campaign, e.failure());
    return;
  }
  if (campaign_due_) campaigns_next_look_ = std::max(*campaign_due_, now + std::chrono::milliseconds(1));
}

void Node::expand_chunk(Time now) {
  const CampaignRow& c = campaign_;
  RELAYSIM_ASSERT(c.claim_token != 0, "a campaign is expanded under its claim");
  CampaignProgress p;
  p.cursor = c.cursor;
  p.due_at = now + config_.marketing.every;
  ChunkTally t;
  chunk_.clear();
  const Filter* filter = filter_of(c);
  if (filter == nullptr) {
    // Its filter no longer parses against this directory: nothing more can be chosen.
    p.state = CampaignState::stopped;
    p.stopped_by = t.outcome = AcceptOutcome::conflict;
  } else {
    const std::size_t n = read_chunk(*filter, now, p, t);
    p.cursor = c.cursor + n;
    if (!chunk_.empty() && !accept_chunk(now, p, t)) return;
    if (p.state == CampaignState::expanding && p.cursor >= directory_.size()) p.state = CampaignState::done;
  }
  bool applied = false;
  try {
    applied = store_.advance_campaign(c.id, c.claim_token, p);
  } catch (const StoreError& e) {
    store_failed(StoreOp::campaign, e.failure());
  }
  events_.emit(CampaignExpanded{pod_, c, c.cursor, p.cursor, t.chosen, p.skipped, t.quiet, chunk_, t.outcome, t.first,
                                p.state, applied, now});
}

// Reads the campaign's next chunk of directory users into users_ and makes chunk_'s messages, one
// for each user the filter chooses who has not opted out. Returns how many users it read.
std::size_t Node::read_chunk(const Filter& filter, Time now, CampaignProgress& p, ChunkTally& t) {
  const CampaignRow& c = campaign_;
  const MarketingConfig& m = config_.marketing;
  users_.resize(m.chunk);
  const std::size_t n = directory_.read(c.cursor, users_);
  RELAYSIM_ASSERT(n <= users_.size(), "the directory fills at most the users it is given room for");
  // The keys are written in place before any view of them is taken: keys_ must not grow after.
  if (keys_.size() < n) keys_.resize(n);
  const Time send_at = std::max(c.send_at, now);
  for (std::size_t i = 0; i < n; ++i) {
    const UserRecord& u = users_[i];
    if (!filter.matches(u, now)) continue;
    ++t.chosen;
    if (u.opted_out) {
      ++p.skipped;
      continue;
    }
    std::string& key = keys_[chunk_.size()];
    key.assign(c.biz_id);
    key += '@';
    key += std::to_string(u.recipient);
    NewMessage& msg = chunk_.emplace_back();
    msg.biz_type = c.biz_type;
    msg.biz_id = key;
    msg.recipient = u.recipient;
    msg.template_id = c.template_id;
    msg.content = mix64(c.content ^ u.recipient);
    msg.segments = c.segments;
    msg.kind = Kind::marketing;
    // Scheduled past the recipient's quiet hours from the start, rather than claimed in them
    // and put back (the rules are still judged before each submit).
    const std::int32_t offset = planted(mutant::quiet_hours_server_tz) ? 0 : u.utc_offset;
    msg.send_at = quiet_until(send_at, offset, m.quiet_hours);
    if (msg.send_at != send_at) ++t.quiet;
    msg.campaign = c.id;
  }
  return n;
}

// Accepts chunk_ in one transaction (charged then). False when the store failed: nothing was
// accepted, and the chunk is expanded again once the claim lapses.
bool Node::accept_chunk(Time now, CampaignProgress& p, ChunkTally& t) {
  const CampaignRow& c = campaign_;
  const AcceptRequest req{c.business, c.epoch, now, quota_period(now, config_.quota_period), chunk_, 0, {}};
  AcceptResult r;
  try {
    r = store_.accept(req);
  } catch (const StoreError& e) {
    // Nothing was accepted; the claim lapses and the chunk is expanded again later.
    store_failed(StoreOp::accept, e.failure());
    return false;
  }
  events_.emit(Accepted{pod_, req, r, SendPath::async});
  t.outcome = r.outcome;
  t.first = r.first;
  if (r.outcome == AcceptOutcome::accepted) {
    p.messages = chunk_.size();
  } else if (r.outcome != AcceptOutcome::duplicate) {
    // Out of quota, revoked, or a key a client already used: the campaign ends here.
    p.state = CampaignState::stopped;
    p.stopped_by = r.outcome;
    p.cursor = c.cursor;
  }
  return true;
}

bool Node::marketing_allows(std::uint32_t slot, bool take_cap) {
  Job& j = jobs_[slot];
  if (j.row.kind != Kind::marketing) return true;
  const Time now = clock_.now();
  const MarketingConfig& m = config_.marketing;
  const Status waiting = j.pinned ? Status::unknown : Status::pending;
  if (directory_.opted_out(j.row.recipient) && !planted(mutant::opt_out_ignored)) {
    finish(slot, completion(j, Status::suppressed, Reason::opted_out, {}));
    return false;
  }
  const std::int32_t offset = planted(mutant::quiet_hours_server_tz) ? 0 : directory_.utc_offset(j.row.recipient);
  const Time until = quiet_until(now, offset, m.quiet_hours);
  if (until > now) {
    if (until > j.row.send_at + config_.validity || planted(mutant::quiet_hours_suppress)) {
      finish(slot, completion(j, Status::suppressed, Reason::quiet_hours, {}));
      return false;
    }
    events_.emit(MarketingDeferred{pod_, j.row.id, j.row.recipient, until, now});
    finish(slot, completion(j, waiting, Reason::none, until));
    return false;
  }
  if (!take_cap) return true;
  bool room = false;
  try {
    room = store_.take_cap(j.row.recipient, j.row.id, now, m.cap);
  } catch (const StoreError& e) {
    store_failed(StoreOp::cap, e.failure());
    finish(slot, completion(j, waiting, Reason::none, now + config_.store_retry));
    return false;
  }
  if (!room) {
    finish(slot, completion(j, Status::suppressed, Reason::frequency_cap, {}));
    return false;
  }
  return true;
}

void Node::receipt(MessageId id, ProviderId provider, bool delivered) {
  RELAYSIM_ASSERT(id != 0, "message ids count from 1");
  const Time now = clock_.now();
  ReceiptOutcome outcome;
  try {
    outcome = store_.receipt(id, delivered, now);
  } catch (const StoreError& e) {
    // The receipt is lost: the message ends unconfirmed when its receipt is overdue.
    store_failed(StoreOp::receipt, e.failure());
    return;
  }
  if (provider < router_.providers()) router_.observe_receipt(provider, now, delivered);
  events_.emit(ReceiptReceived{pod_, id, provider, delivered, outcome, now});
}

std::uint32_t Node::new_job() {
  const std::uint32_t slot = jobs_.acquire();
  Job& j = jobs_[slot];
  j.tried = 0;
  j.provider = kNoProvider;
  j.submits = 0;
  j.pinned = false;
  j.accepted = false;
  j.answered = true;
  j.limit_stage = 0;
  j.waited = false;
  j.retry_timer = TimerId{};
  j.reply = SendAnswer{};
  return slot;
}

void Node::pump() {
  // Completions that happen synchronously inside begin() call pump() again; fold them into this
  // loop instead of recursing.
  if (pumping_) {
    repump_ = true;
    return;
  }
  pumping_ = true;
  const Time now = clock_.now();
  expand();  // a campaign's next chunk first: its messages are due at once
  do {
    repump_ = false;
    while (workers_.has_room() && now >= store_retry_at_) {
      const std::uint32_t slot = new_job();
      Job& j = jobs_[slot];
      std::optional<Status> prior;
      try {
        prior = store_.claim_due(now, pod_, config_.lease, j.row);
      } catch (const StoreError& e) {
        jobs_.release(slot);
        store_failed(StoreOp::claim, e.failure());
        break;
      }
      if (!prior) {
        jobs_.release(slot);
        break;
      }
      workers_.take(now);
      j.prior = *prior;
      j.path = SendPath::async;
      j.lease_ends = now + config_.lease;
      events_.emit(Claimed{pod_, j.row, j.prior, now});
      begin(slot);
    }
  } while (repump_);
  pumping_ = false;
  arm_wake(now);
}

void Node::store_failed(StoreOp op, StoreFailure failure) {
  const Time now = clock_.now();
  events_.emit(StoreFailed{pod_, op, failure, now});
  store_retry_at_ = now + config_.store_retry;
}

void Node::arm_wake(Time now) {
  if (!workers_.has_room()) return;  // a completion will pump
  std::optional<Time> next;
  if (now >= store_retry_at_) {
    try {
      next = store_.next_due();
      // A campaign's chunk is looked for no sooner than the next look: a wake before it would
      // find expand() holding off, and wake again at once.
      if (campaign_due_) {
        const Time look = std::max(*campaign_due_, campaigns_next_look_);
        if (!next || look < *next) next = look;
      }
    } catch (const StoreError& e) {
      store_failed(StoreOp::next_due, e.failure());
    }
  }
  waker_.arm(now, store_retry_at_, next);
}

Completion Node::completion(const Job& j, Status status, Reason reason, Time due) const {
  Completion c;
  c.status = status;
  c.reason = reason;
  c.at = clock_.now();
  c.due_at = due;
  // The provider stays on the row while it matters: the one that took the message (submitted
  // and after), or the one whose outcome is ambiguous (unknown) — which pins the message to it,
  // even through a claim that crashes. A message pending again was certainly not taken.
  c.provider = status == Status::pending ? kNoProvider : j.provider;
  c.pod = pod_;
  c.attempts = j.submits;
  c.accepted = j.accepted;
  return c;
}

void Node::begin(std::uint32_t slot) {
  Job& j = jobs_[slot];
  RELAYSIM_ASSERT(j.row.status == Status::in_flight && j.row.claim_token != 0, "a job begins on a message it claimed");
  const Time now = clock_.now();
  // Pinned: its last outcome was ambiguous — stored as unknown, or left so by a claim that then
  // crashed (the row still names the provider, and no provider certainly took it).
  j.pinned = (j.prior == Status::unknown || j.prior == Status::in_flight) && j.row.provider != kNoProvider &&
             !j.row.accepted;
  if (j.prior == Status::submitted || j.row.accepted) {
    // A provider took the message: its receipt is overdue, or the claim that was ending it
    // crashed. It is never sent again; it ends unconfirmed.
    if (j.row.provider < router_.providers()) router_.observe_receipt(j.row.provider, now, false);
    finish(slot, completion(j, Status::unconfirmed, Reason::no_receipt, {}));
    return;
  }
  const Time valid_from = planted(mutant::validity_from_acceptance) ? j.row.created_at : j.row.send_at;
  if (now > valid_from + config_.validity) {
    finish(slot, completion(j, Status::failed, Reason::expired, {}));
    return;
  }
  if (!marketing_allows(slot, false)) return;
  limit(slot);
}

namespace {
// The name a limit's log gives the next submit of a message: a retried take of the same submit
// is not counted twice.
std::uint64_t limit_member(MessageId id, std::uint32_t attempt) { return id << 16 | attempt; }
}  // namespace

void Node::limit(std::uint32_t slot) {
  Job& j = jobs_[slot];
  const std::uint64_t member = limit_member(j.row.id, j.row.attempts + j.submits + 1U);
  while (j.limit_stage < 2) {
    const bool business = j.limit_stage == 0;
    ++j.limit_stage;
    SharedLimiter* l = business ? business_limiter(j.row.business) : cluster_limit_.get();
    if (l == nullptr) continue;
    const BusinessId who = business ? j.row.business : 0;
    j.waited = true;
    l->take(1, member, [this, slot, who, l](const SharedDecision& d) { limited(slot, who, *l, d); });
    return;
  }
  if (j.waited && j.path == SendPath::async && !still_claimed(slot)) return;
  if (!marketing_allows(slot, true)) return;
  submit(slot);
}

bool Node::still_claimed(std::uint32_t slot) {
  // While a limit was asked (a store call away), the claim may have ended: a receipt of an
  // earlier submit made the message final, or the lease ran out and another pod took it over.
  // Submitting then would send a message a provider has certainly taken, or send it twice.
  Job& j = jobs_[slot];
  std::optional<MessageRow> now;
  try {
    now = store_.get(j.row.id);
  } catch (const StoreError& e) {
    store_failed(StoreOp::claim, e.failure());
    now.reset();
  }
  if (now && now->status == Status::in_flight && now->claim_token == j.row.claim_token) return true;
  // Let the claim go: its completion is fenced out (another claim, or a final status, holds the
  // row), and the message is where the store says.
  finish(slot, completion(j, Status::pending, Reason::none, clock_.now()));
  return false;
}

void Node::limited(std::uint32_t slot, BusinessId business, const SharedLimiter& limiter, const SharedDecision& d) {
  Job& j = jobs_[slot];
  const Time now = clock_.now();
  events_.emit(LimitDecided{pod_, j.row.id, business, limiter.config(),
                            limit_member(j.row.id, j.row.attempts + j.submits + 1U), d, now});
  if (d.admitted) {
    limit(slot);
    return;
  }
  // Held back: stored for later and sent by the workers when the limit allows — never dropped.
  const Duration wait = d.retry_after == Duration::max() ? config_.store_retry
                                                         : std::max<Duration>(d.retry_after, std::chrono::milliseconds(1));
  finish(slot, completion(j, j.pinned ? Status::unknown : Status::pending, Reason::none, now + wait));
}

void Node::submit(std::uint32_t slot) {
  Job& j = jobs_[slot];
  const Time now = clock_.now();
  const ProviderId p = j.pinned ? j.row.provider : router_.pick(now, j.tried);
  RELAYSIM_ASSERT(p != kNoProvider && p < providers_.count(), "a provider to submit to");
  j.provider = p;
  j.tried |= ProviderMask{1} << p;
  ++j.submits;
  j.started = now;
  const auto attempt = static_cast<std::uint16_t>(j.row.attempts + j.submits);
  events_.emit(SubmitStarted{pod_, j.row, p, attempt, j.path, now});
  providers_.submit(p, Submit{j.row.id, j.row.recipient, j.row.template_id, j.row.content, j.row.segments, attempt},
                    config_.send_timeout, [this, slot](SubmitClass c) { on_result(slot, c); });
}

void Node::on_result(std::uint32_t slot, SubmitClass outcome) {
  Job& j = jobs_[slot];
  const Time now = clock_.now();
  const Duration latency = now - j.started;
  router_.observe(j.provider, now, outcome, latency);
  const BusinessPolicy& p = policy(j.row.business);
  const auto attempts = planted(mutant::retry_counter_shared) ? static_cast<std::uint16_t>(++shared_submits_)
                                                               : static_cast<std::uint16_t>(j.row.attempts + j.submits);
  const bool untried = !j.pinned && static_cast<std::size_t>(std::popcount(j.tried)) < providers_.count();
  const Decision d = decide(SubmitContext{outcome, attempts, untried, now, config_.receipt_timeout, Duration::zero()},
                            p.retry, config_.on_unknown, rng_);
  events_.emit(SubmitFinished{pod_, j.row.id, j.provider, outcome, latency, j.path, d, now, j.row.claim_token});
  // The switch judges the submit after it is reported, so a change of mode it causes follows
  // the evidence it rests on.
  if (j.path != SendPath::async) {
    const ModeChange change = switch_.observe(now, latency, outcome != SubmitClass::accepted, j.path);
    if (change) mode_changed(change, now);
  }
  if (p.retry.alert_after > 0 && attempts == p.retry.alert_after) events_.emit(RetryAlert{pod_, j.row.id, attempts, now});
  switch (d.step) {
    case Step::submitted:
      j.accepted = true;
      finish(slot, completion(j, Status::submitted, Reason::none, d.due));
      return;
    case Step::fail_over:
      // Later than the rules were judged: an opt-out or a quiet hour may have begun since.
      if (!marketing_allows(slot, true)) return;
      submit(slot);
      return;
    case Step::fail:
      finish(slot, completion(j, Status::failed, d.reason, {}));
      return;
    case Step::unknown:
      finish(slot, completion(j, Status::unknown, Reason::none, d.due));
      return;
    case Step::retry:
      break;
  }
  if (j.pinned) {
    // Its earlier outcome is still unknown: it stays on its provider until that is certain.
    finish(slot, completion(j, Status::unknown, Reason::none, d.due));
    return;
  }
  const Duration claim_work = config_.send_timeout * static_cast<std::int64_t>(providers_.count());
  if (!p.retry.cross_process && d.due + claim_work < j.lease_ends) {
    // Retried in this pod's memory while the claim lasts; the client hears `pending` now.
    answer(slot, Answer::pending);
    j.tried = 0;
    j.limit_stage = 0;
    j.waited = true;  // a receipt of an earlier submit may end the claim while it waits
    j.retry_timer = timers_.schedule_at(planted(mutant::in_memory_retry_early) ? now : d.due, [this, slot] {
      jobs_[slot].retry_timer = TimerId{};
      limit(slot);
    });
    return;
  }
  finish(slot, completion(j, Status::pending, Reason::none, d.due));
}

void Node::mode_changed(const ModeChange& change, Time now) {
  RELAYSIM_ASSERT(change.entered != change.left, "a change of mode either enters async mode or leaves it");
  events_.emit(ModeChanged{pod_, change, now});
  if (mode_timer_) {
    timers_.cancel(mode_timer_);
    mode_timer_ = TimerId{};
  }
  if (change.entered && config_.sync_to_async.exit == SyncAsyncConfig::Exit::after) {
    mode_timer_ = timers_.schedule_at(now + config_.sync_to_async.after, [this] {
      mode_timer_ = TimerId{};
      const Time at = clock_.now();
      const ModeChange left = switch_.expire(at);
      if (left) mode_changed(left, at);
    });
  }
}

void Node::answer(std::uint32_t slot, Answer a) {
  Job& j = jobs_[slot];
  if (j.answered) return;
  j.answered = true;
  j.reply.answer = a;
  const Time now = clock_.now();
  events_.emit(Answered{pod_, j.reply, now});
  AnswerCallback done = std::move(j.answer);
  j.answer = {};
  done(j.reply);
}

void Node::finish(std::uint32_t slot, const Completion& c) {
  Job& j = jobs_[slot];
  RELAYSIM_ASSERT(c.status != Status::in_flight, "a completion leaves in_flight");
  RELAYSIM_ASSERT(j.path == SendPath::async ? workers_.busy() > 0 : sync_busy_ > 0, "a finished job was counted as busy");
  bool applied = false;
  bool failed = false;
  try {
    applied = store_.complete(j.row.id, j.row.claim_token, c);
  } catch (const StoreError& e) {
    // Nothing was recorded: the message stays in flight under this claim until its lease
    // expires, and then another claim takes it over.
    failed = true;
    store_failed(StoreOp::complete, e.failure());
  }
  events_.emit(Completed{pod_, j.row, c, applied, failed});
  answer(slot, answer_for(c.status));
  if (j.path == SendPath::async) {
    workers_.release(clock_.now());
  } else {
    --sync_busy_;
  }
  jobs_.release(slot);
  pump();
}

}  // namespace relaysim::sms
