#include "model/sms/campaigns.h"

#include <algorithm>
#include <string>

#include "model/core/assert.h"
#include "model/core/random.h"
#include "model/sms/marketing.h"
#include "model/sms/mutants.h"

namespace relaysim::sms {

std::optional<Time> Campaigns::next_look() const {
  if (!due_) return std::nullopt;
  return std::max(*due_, next_look_);
}

const Filter* Campaigns::filter_of(const CampaignRow& c) {
  RELAYSIM_ASSERT(c.id != 0, "a campaign the store handed out has an id");
  for (auto& [id, f] : filters_) {
    if (id == c.id) return &f;
  }
  auto parsed = Filter::parse(c.filter, pod_.directory.vocabulary());
  Filter* f = std::get_if<Filter>(&parsed);
  if (f == nullptr) return nullptr;
  constexpr std::size_t kKept = 16;
  if (filters_.size() >= kKept) filters_.erase(filters_.begin());
  filters_.emplace_back(c.id, std::move(*f));
  return &filters_.back().second;
}

void Campaigns::expand() {
  const Time now = pod_.clock.now();
  if (now < pod_.store_retry_at || now < next_look_) return;
  next_look_ = now + pod_.config.marketing.every;
  try {
    // A claimed campaign's due time moves past now, so each is expanded at most once per call.
    while (pod_.store.claim_campaign(now, pod_.id, pod_.config.lease, campaign_)) expand_chunk(now);
    due_ = pod_.store.next_campaign_due();
  } catch (const StoreError& e) {
    pod_.store_failed(StoreOp::campaign, e.failure());
    return;
  }
  if (due_) next_look_ = std::max(*due_, now + std::chrono::milliseconds(1));
}

void Campaigns::expand_chunk(Time now) {
  const CampaignRow& c = campaign_;
  RELAYSIM_ASSERT(c.claim_token != 0, "a campaign is expanded under its claim");
  CampaignProgress p;
  p.cursor = c.cursor;
  p.due_at = now + pod_.config.marketing.every;
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
    if (p.state == CampaignState::expanding && p.cursor >= pod_.directory.size()) p.state = CampaignState::done;
  }
  bool applied = false;
  try {
    applied = pod_.store.advance_campaign(c.id, c.claim_token, p);
  } catch (const StoreError& e) {
    pod_.store_failed(StoreOp::campaign, e.failure());
  }
  pod_.events.emit(CampaignExpanded{pod_.id, c, c.cursor, p.cursor, t.chosen, p.skipped, t.quiet, chunk_, t.outcome, t.first,
                                p.state, applied, now});
}

// Reads the campaign's next chunk of directory users into users_ and makes chunk_'s messages, one
// for each user the filter chooses who has not opted out. Returns how many users it read.
std::size_t Campaigns::read_chunk(const Filter& filter, Time now, CampaignProgress& p, ChunkTally& t) {
  const CampaignRow& c = campaign_;
  const MarketingConfig& m = pod_.config.marketing;
  users_.resize(m.chunk);
  const std::size_t n = pod_.directory.read(c.cursor, users_);
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
    add_campaign_recipient(key, u.recipient);
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
bool Campaigns::accept_chunk(Time now, CampaignProgress& p, ChunkTally& t) {
  const CampaignRow& c = campaign_;
  const AcceptRequest req{c.business, c.epoch, now, quota_period(now, pod_.config.quota_period), chunk_, 0, {}};
  AcceptResult r;
  try {
    r = pod_.store.accept(req);
  } catch (const StoreError& e) {
    // Nothing was accepted; the claim lapses and the chunk is expanded again later.
    pod_.store_failed(StoreOp::accept, e.failure());
    return false;
  }
  pod_.events.emit(Accepted{pod_.id, req, r, SendPath::async});
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

}  // namespace relaysim::sms
