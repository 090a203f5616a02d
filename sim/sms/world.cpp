#include "sim/sms/world.h"

#include <cstdio>

#include "model/core/assert.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

namespace {

// The template id no business applies for: a call naming it is outside its token's scope.
constexpr std::uint32_t kForeignTemplate = 999'999'999;
// A client key's kind is in its top bits.
constexpr int kKindShift = 56;
// Recent requests kept for deliberate duplicates.
constexpr std::size_t kRecentKept = 4096;

std::string_view biz_type_of(Kind k) {
  switch (k) {
    case Kind::bulk: return "bulk";
    case Kind::scheduled: return "scheduled";
    case Kind::marketing: return "marketing";
    case Kind::resend: return "resend";
    default: return "otp";
  }
}

// The gateway's HS256 secret: 32 bytes from the seed, as hex.
std::string secret_for(std::uint64_t seed) {
  std::string out;
  char buf[17];
  for (std::uint64_t i = 0; i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(mix64(seed * 4 + i)));
    out += buf;
  }
  return out;
}

}  // namespace

std::string key_text(std::uint64_t key) {
  const auto kind = static_cast<Kind>(key >> kKindShift);
  return std::string(biz_type_of(kind)) + "/k" + std::to_string(key & ((std::uint64_t{1} << kKindShift) - 1));
}

Pod::Pod(World& world, Process& process)
    : world_(world), process_(process), rng_(Rng::derive(world.scenario_.seed, "pod/" + std::to_string(process.index()))) {}

std::size_t Pod::count() const { return world_.providers_.count(); }

std::uint32_t World::ejected_by(ProviderId provider, Time now) const {
  std::uint32_t n = 0;
  for (const auto& pod : pods_) {
    if (pod->node_ != nullptr && pod->node_->dispatcher().router().ejected(provider, now)) ++n;
  }
  return n;
}

void Pod::submit(ProviderId provider, const Submit& s, Duration timeout, SubmitCallback done) {
  RELAYSIM_ASSERT(static_cast<bool>(done), "a submit has someone to answer");
  Kernel& k = world_.kernel_;
  const ProviderAnswer a = world_.providers_.submit(provider, k.now(), timeout);
  world_.buses_.world.emit(ProviderSubmitted{provider, process_.index(), s.id, s.recipient, s.attempt, a.fate, k.now()});
  if (a.receipt && sent(a.fate)) {
    // The provider's receipt reaches whichever pod is up then, crash or not.
    k.at(a.receipt_at, [w = &world_, id = s.id, provider, delivered = a.delivered] { w->deliver_receipt(id, provider, delivered); });
  }
  process_.at(a.answer_at, [seen = a.seen, done = std::move(done)]() mutable { done(seen); });
}

void Pod::limit(std::string_view key, const LimiterSpec& spec, LimitOp op, std::uint32_t cost, std::uint64_t member,
                Duration timeout, LimitCallback done) {
  RELAYSIM_ASSERT(static_cast<bool>(done), "a call has someone to answer");
  const std::uint32_t slot = kv_calls_.acquire();
  kv_calls_[slot].done = std::move(done);
  kv_calls_[slot].generation = generation_;
  world_.kv_.limit(key, spec, op, cost, member, timeout, [this, slot](const KvLimitAnswer& a) {
    KvCall& c = kv_calls_[slot];
    LimitCallback cb = std::move(c.done);
    c.done = {};
    const bool current = c.generation == generation_;
    kv_calls_.release(slot);
    if (current) cb(a);
  });
}

World::World(const Scenario& scenario, Kernel& kernel, Store& store, Db* db, SmsBuses& buses)
    : scenario_(scenario),
      spec_(spec_of(scenario)),
      kernel_(kernel),
      store_(store),
      buses_(buses),
      policies_(spec_.policies()),
      codec_(secret_for(scenario.seed)),
      back_office_(store, codec_, kernel, spec_.platform.token_lifetime, spec_.platform.quota_period),
      providers_(spec_.providers, scenario.seed),
      kv_(spec_.redis, kernel, scenario.seed),
      directory_(spec_.directory, scenario.seed),
      store_faults_(scenario),
      rng_(Rng::derive(scenario.seed, "clients")),
      arrivals_([&] {
        std::vector<ArrivalSpec> a;
        for (const LoadSegment& l : spec_.load) a.push_back(l.arrivals);
        a.push_back(spec_.directory.opt_outs);  // the last segment: users opting out
        return a;
      }(), rng_, [this](std::uint32_t segment) { arrive(segment); }),
      processes_(kernel, spec_.platform.pods, *this, buses.processes) {
  // The back office at the start: every business applies and is approved, and gets its token.
  for (std::uint32_t i = 0; i < spec_.businesses.size(); ++i) {
    const BusinessSpec& b = spec_.businesses[i];
    const BusinessId id = back_office_.apply(Application{b.name, b.senders, b.templates, b.quota});
    RELAYSIM_ASSERT(id == business_id(i), "businesses get ids in order");
    if (b.approved) back_office_.approve(id);
    granted_.push_back(b.approved);
  }
  tokens_.resize(spec_.businesses.size());
  token_issued_.assign(spec_.businesses.size(), kTimeNever);
  token_expires_s_.assign(spec_.businesses.size(), 0);
  token_claims_.resize(spec_.businesses.size());
  expired_at_s_.assign(spec_.businesses.size(), -1);
  failed_.resize(spec_.businesses.size());
  for (const AdminEvent& e : spec_.admin) kernel_.at(e.at, [this, &e] { admin(e); });
  for (std::uint32_t i = 0; i < processes_.size(); ++i) {
    pods_.push_back(std::make_unique<Pod>(*this, processes_[i]));
    pods_.back()->store_ = std::make_unique<PodStore>(store, db, store_faults_, kernel, processes_, i);
  }
  // Pods start first: events at equal times run in scheduling order, and a client call at time
  // zero must find them up.
  processes_.start_all();
  kv_.install();
  arrivals_.install(kernel_);
  processes_.install(scenario.crashes);
  processes_.install(scenario.pauses);
}

World::~World() = default;

void World::start(Process& p) {
  RELAYSIM_ASSERT(p.index() < pods_.size(), "a pod the world built");
  Pod& pod = *pods_[p.index()];
  RELAYSIM_ASSERT(!pod.node_, "starting a pod that is up");
  RELAYSIM_ASSERT(pod.store_ != nullptr, "a pod has its handle on the store");
  pod.store_->restart();
  // Without store faults the pod talks to the store directly: the facade costs a call per call.
  Store& store = store_faults_.any() ? static_cast<Store&>(*pod.store_) : store_;
  pod.node_ = std::make_unique<Node>(p.index() + 1, spec_.platform, policies_,
                                     NodePorts{kernel_, p, pod.rng_, pod, pod, directory_, codec_, store, buses_.model});
  pod.node_->start();
}

void World::stop(Process& p) {
  RELAYSIM_ASSERT(p.index() < pods_.size(), "a pod the world built");
  Pod& pod = *pods_[p.index()];
  RELAYSIM_ASSERT(pod.node_ != nullptr, "stopping a pod that is up");
  ++pod.generation_;
  pod.node_.reset();
}

const std::string& World::token_for(std::uint32_t business, TokenKind kind) {
  RELAYSIM_ASSERT(business < tokens_.size(), "a business of the scenario");
  const Time now = kernel_.now();
  auto& t = tokens_[business];
  // A client renews its token when half its lifetime is gone.
  if (token_issued_[business] == kTimeNever || now - token_issued_[business] >= spec_.platform.token_lifetime / 2) {
    const BusinessId id = business_id(business);
    // A revoked business gets no new token: its clients keep the one they have (and are refused),
    // or, never having had one, do not call (an empty token).
    std::optional<std::string> fresh = back_office_.issue_token(id);
    token_issued_[business] = now;
    if (!fresh) return t[static_cast<int>(t[static_cast<int>(TokenKind::good)].empty() ? TokenKind::good : kind)];
    t[static_cast<int>(TokenKind::good)] = std::move(*fresh);
    std::string& forged = t[static_cast<int>(TokenKind::forged)];
    forged = t[static_cast<int>(TokenKind::good)];
    forged.back() = forged.back() == 'A' ? 'B' : 'A';  // the signature no longer matches
    TokenClaims claims;
    if (codec_.verify(t[static_cast<int>(TokenKind::good)], claims) == AuthFault::none) {
      token_expires_s_[business] = claims.expires_at;
      token_claims_[business] = claims;
      expired_at_s_[business] = -1;  // signed again from the new claims
    }
    t[static_cast<int>(TokenKind::foreign)] = t[static_cast<int>(TokenKind::good)];
  }
  const std::int64_t now_s = to_ns(now) / 1'000'000'000;
  if (kind == TokenKind::expired && !t[static_cast<int>(TokenKind::good)].empty() &&
      (expired_at_s_[business] != now_s || t[static_cast<int>(TokenKind::expired)].empty())) {
    // The boundary: a token whose expiry is this very second, which the platform must already
    // refuse (a claim is read in whole seconds, and a token is expired from its `exp` on). Signed
    // once a second, not once a call.
    TokenClaims claims = token_claims_[business];
    claims.expires_at = now_s;
    t[static_cast<int>(TokenKind::expired)] = codec_.issue(claims);
    expired_at_s_[business] = now_s;
  }
  return t[static_cast<int>(kind)];
}

TokenKind World::presented_kind(std::uint32_t business, TokenKind kind) const {
  RELAYSIM_ASSERT(business < token_expires_s_.size(), "a business of the scenario");
  const std::int64_t now_s = to_ns(kernel_.now()) / 1'000'000'000;  // as the platform reads a claim
  return kind == TokenKind::good && now_s >= token_expires_s_[business] ? TokenKind::expired : kind;
}

void World::admin(const AdminEvent& e) {
  RELAYSIM_ASSERT(e.business_index < spec_.businesses.size(), "the reader resolves an admin event's business");
  const BusinessId id = business_id(e.business_index);
  const Time now = kernel_.now();
  if (e.action == AdminAction::query) {
    const std::optional<QuotaView> quota = back_office_.quota(id);
    std::optional<MessageStatus> latest;
    MessageQuery q;
    q.business = id;
    q.limit = SIZE_MAX;
    // The latest of its messages: the back office's query lists them in id order.
    const std::vector<MessageId> ids = back_office_.messages(q);
    if (!ids.empty()) {
      if (std::optional<MessageRow> row = store_.get(ids.back())) latest = MessageStatus{*row, store_.history(ids.back())};
    }
    buses_.world.emit(AdminQueried{e.business_index, quota, latest, now});
    return;
  }
  const std::optional<BusinessRow> before = store_.business(id);
  const AdminOutcome outcome = e.action == AdminAction::revoke ? back_office_.revoke(id) : back_office_.approve(id);
  if (outcome == AdminOutcome::done && e.action == AdminAction::approve) {
    granted_[e.business_index] = true;
    token_issued_[e.business_index] = kTimeNever;  // a new grant's clients fetch a new token
  }
  buses_.world.emit(AdminActed{e.business_index, static_cast<std::uint8_t>(e.action), outcome, before ? before->epoch : 0, now});
}

void World::opt_out() {
  if (spec_.directory.users == 0) return;
  const Recipient r = SimDirectory::kFirstNumber + rng_.below(spec_.directory.users);
  directory_.opt_out(r);
  buses_.world.emit(OptedOut{r, kernel_.now()});
}

Node* World::pod_for_client() {
  Process* p = processes_.next_awake();
  if (p == nullptr) {
    buses_.world.emit(ClientRejected{kernel_.now()});
    return nullptr;
  }
  RELAYSIM_ASSERT(pods_[p->index()]->node_ != nullptr, "the load balancer picks a pod that is up");
  return pods_[p->index()]->node_.get();
}

void World::start_campaign(std::uint32_t segment) {
  RELAYSIM_ASSERT(segment < spec_.load.size(), "a segment of the load");
  const LoadSegment& l = spec_.load[segment];
  Node* node = pod_for_client();
  if (node == nullptr) return;
  const BusinessSpec& b = spec_.businesses[l.business_index];
  const std::uint64_t key = static_cast<std::uint64_t>(Kind::marketing) << kKindShift |
                            next_key_[static_cast<std::size_t>(Kind::marketing)]++;
  const std::string biz_id = "c" + std::to_string(key & ((std::uint64_t{1} << kKindShift) - 1));
  const std::string& token = token_for(l.business_index, TokenKind::good);
  if (token.empty()) return;
  const CampaignRequest request{token,
                                b.senders[0],
                                b.templates[0],
                                biz_type_of(Kind::marketing),
                                biz_id,
                                l.filter,
                                mix64(key) ^ b.templates[0],
                                1,
                                kernel_.now() + l.lead};
  // A campaign request is a request the client made, like a send, so it is told as a call before it
  // is answered. ClientCalled is not fingerprinted: telling it changes no run's fingerprint.
  buses_.world.emit(ClientCalled{key, l.business_index, 0, TokenKind::good, false, true, kernel_.now()});
  node->campaign(request);
}

void World::arrive(std::uint32_t segment) {
  RELAYSIM_ASSERT(segment <= spec_.load.size(), "a segment of the load, or the opt-outs after them");
  if (segment == spec_.load.size()) {
    opt_out();
    return;
  }
  const LoadSegment& l = spec_.load[segment];
  // A business without a grant has no token to send with: its clients wait.
  if (!granted_[l.business_index]) return;
  if (l.kind == Kind::marketing) {
    start_campaign(segment);
    return;
  }
  MessageId resend_of = 0;
  if (l.kind == Kind::resend) {
    std::vector<MessageId>& failed = failed_[l.business_index];
    if (failed.empty()) return;
    const std::size_t pick = rng_.below(failed.size());
    resend_of = failed[pick];
    failed[pick] = failed.back();
    failed.pop_back();
  }
  // A deliberate duplicate repeats a recent request of this segment exactly.
  if (!recent_.empty() && rng_.chance(l.duplicates)) {
    const Recent& r = recent_[rng_.below(recent_.size())];
    if (r.segment == segment) {
      call(r.key, segment, r.send_at, TokenKind::good, 0, true, r.resend_of);
      return;
    }
  }
  TokenKind token = TokenKind::good;
  if (rng_.chance(l.bad_tokens)) token = static_cast<TokenKind>(1 + rng_.below(kTokenKindCount - 1));
  // Each kind numbers its requests from 1, so one biz_id appears under several biz_types (a gateway
  // that dedups on biz_id alone takes them for repeats); the kind in the top bits keeps keys unique.
  const std::uint64_t key = static_cast<std::uint64_t>(l.kind) << kKindShift | next_key_[static_cast<std::size_t>(l.kind)]++;
  const Time send_at = l.kind == Kind::scheduled ? kernel_.now() + l.lead : kernel_.now();
  if (token == TokenKind::good) {
    const Recent r{key, segment, send_at, resend_of};
    if (recent_.size() < kRecentKept) {
      recent_.push_back(r);
    } else {
      recent_[recent_next_] = r;
      recent_next_ = (recent_next_ + 1) % kRecentKept;
    }
  }
  call(key, segment, send_at, token, l.retries, false, resend_of);
}

void World::call(std::uint64_t key, std::uint32_t segment, Time send_at, TokenKind token, std::uint32_t retries,
                 bool repeat, MessageId resend_of) {
  RELAYSIM_ASSERT(segment < spec_.load.size(), "a segment of the load");
  const LoadSegment& l = spec_.load[segment];
  RELAYSIM_ASSERT(l.recipients > 0, "a segment sends to someone");
  Node* node = pod_for_client();
  if (node == nullptr) return;
  const BusinessSpec& b = spec_.businesses[l.business_index];
  const std::string& presented = token_for(l.business_index, token);
  if (presented.empty()) return;  // its business was revoked before its clients got a token
  const TokenKind truth = presented_kind(l.business_index, token);
  const std::uint32_t size = l.kind == Kind::bulk ? l.size : 1;
  RELAYSIM_ASSERT(size >= 1, "a request carries a message");
  const std::uint32_t template_id = token == TokenKind::foreign ? kForeignTemplate : b.templates[0];
  const Recipient base = 8'610'000'000'000 + mix64(scenario_.seed ^ key) % l.recipients;
  ids_.resize(size);
  messages_.resize(size);
  for (std::uint32_t i = 0; i < size; ++i) {
    ids_[i] = "k" + std::to_string(key & ((std::uint64_t{1} << kKindShift) - 1));
    if (l.kind == Kind::bulk) add_bulk_index(ids_[i], i);
    NewMessage& m = messages_[i];
    m.biz_type = biz_type_of(l.kind);
    m.biz_id = ids_[i];
    m.recipient = 8'610'000'000'000 + (base - 8'610'000'000'000 + i) % l.recipients;
    m.template_id = template_id;
    m.content = mix64(key * 1'000'003 + i) ^ template_id;
    m.segments = 1;
    m.kind = l.kind;
    m.send_at = send_at;
    m.resend_of = resend_of;
  }
  const std::uint32_t slot = calls_.acquire();
  Call& c = calls_[slot];
  c.key = key;
  c.segment = segment;
  ++c.serial;
  c.retries_left = retries;
  c.send_at = send_at;
  c.resend_of = resend_of;
  c.token = token;
  c.presented = truth;
  c.repeat = repeat;
  c.answered = false;
  buses_.world.emit(ClientCalled{key, l.business_index, size, truth, repeat, false, kernel_.now()});
  kernel_.at(kernel_.now() + l.client_timeout, [this, slot] { timed_out(slot); });
  const SendRequest request{presented, b.senders[0], template_id,
                            std::span<const NewMessage>(messages_.data(), size)};
  node->send(request, [this, slot, serial = c.serial](const SendAnswer& a) { answered(slot, serial, a); });
}

void World::answered(std::uint32_t slot, std::uint32_t serial, const SendAnswer& a) {
  Call& c = calls_[slot];
  if (c.serial != serial || c.answered) return;  // the client gave up on this call already
  c.answered = true;
  buses_.world.emit(ClientAnswered{c.key, c.presented, c.repeat, a, kernel_.now()});
  // The client was told its new message failed: a resend segment of its business may resend it.
  if (a.outcome == AcceptOutcome::accepted && a.answer == Answer::failure && a.first != 0 && !a.unavailable &&
      a.fault == AuthFault::none) {
    RELAYSIM_ASSERT(c.segment < spec_.load.size(), "a call of a segment of the load");
    std::vector<MessageId>& failed = failed_[spec_.load[c.segment].business_index];
    constexpr std::size_t kKept = 4096;
    if (failed.size() < kKept) failed.push_back(a.first);
  }
}

void World::timed_out(std::uint32_t slot) {
  Call& c = calls_[slot];
  const Call copy = c;
  ++c.serial;  // a later answer to this call is ignored
  calls_.release(slot);
  if (copy.answered) return;
  buses_.world.emit(ClientTimedOut{copy.key, kernel_.now()});
  if (copy.retries_left > 0) {
    call(copy.key, copy.segment, copy.send_at, copy.token, copy.retries_left - 1, true, copy.resend_of);
  }
}

void World::deliver_receipt(MessageId id, ProviderId provider, bool delivered) {
  Process* p = processes_.next_awake();
  if (p == nullptr) return;  // nobody to take it: the message ends unconfirmed
  RELAYSIM_ASSERT(pods_[p->index()]->node_ != nullptr, "the load balancer picks a pod that is up");
  pods_[p->index()]->node_->receipt(id, provider, delivered);
}

}  // namespace relaysim::sim::sms
