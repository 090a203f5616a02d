#include "sim/webhook/pod_store.h"

#include "model/core/assert.h"

namespace relaysim::sim::webhook {

using namespace relaysim::webhook;

CreateResult PodStore::create(const NewRequest& r) {
  return guard_.run(1, [&] { return store_.create(r); });
}

// On SQLite a claim is one statement (its trigger moves the token counter on within it).
bool PodStore::claim_due(Time now, PodId pod, Duration lease, RequestRow& out, Claimable which) {
  return guard_.run(1, [&] { return store_.claim_due(now, pod, lease, out, which); });
}

bool PodStore::claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) {
  return guard_.run(1, [&] { return store_.claim_expired(now, pod, lease, out); });
}

// A completion writes the row, then (with an attempt) the attempt, then (with a notice) the
// notice: one transaction.
bool PodStore::complete(RequestId id, ClaimToken token, const Completion& c) {
  RELAYSIM_ASSERT(c.status != relaysim::webhook::Status::in_flight, "a completion must leave in_flight");
  RELAYSIM_ASSERT(c.attempt == nullptr || c.attempt->request == id, "an attempt belongs to the request it completes");
  RELAYSIM_ASSERT(c.attempt == nullptr || c.attempt->claim_token == token, "an attempt is recorded under the claim that made it");
  return guard_.run(1 + (c.attempt != nullptr ? 1 : 0) + (c.notify ? 1 : 0), [&] { return store_.complete(id, token, c); });
}

bool PodStore::claim_notice(Time now, Duration lease, Notice& out) {
  return guard_.run(1, [&] { return store_.claim_notice(now, lease, out); });
}

void PodStore::notice_sent(NoticeId id) {
  guard_.run(1, [&] { store_.notice_sent(id); });
}

std::optional<Time> PodStore::next_notice() {
  return guard_.run(0, [&] { return store_.next_notice(); });
}

std::optional<Time> PodStore::next_due(Claimable which) {
  return guard_.run(0, [&] { return store_.next_due(which); });
}

std::optional<Time> PodStore::next_expiry() {
  return guard_.run(0, [&] { return store_.next_expiry(); });
}

ReplayOutcome PodStore::replay(RequestId id, Time now, Time new_deadline) {
  return guard_.run(1, [&] { return store_.replay(id, now, new_deadline); });
}

}  // namespace relaysim::sim::webhook
