#include "model/webhook/ingest.h"

#include "model/core/assert.h"
#include "model/webhook/mutants.h"

namespace relaysim::webhook {

Ingest::Ingest(PodId pod, const PlatformConfig& config, Store& store, Clock& clock, Events& events,
               OnNewWork on_new_work)
    : pod_(pod), config_(config), store_(store), clock_(clock), events_(events),
      on_new_work_(std::move(on_new_work)) {}

IngestResult Ingest::create(std::string_view cxid, std::string_view request_id, std::string_view payload) {
  if (cxid.empty()) return {IngestStatus::invalid, 0, "cxid is empty"};
  if (request_id.empty()) return {IngestStatus::invalid, 0, "request_id is empty"};
  if (cxid.size() > config_.max_key_bytes) return {IngestStatus::invalid, 0, "cxid is too long"};
  if (request_id.size() > config_.max_key_bytes) return {IngestStatus::invalid, 0, "request_id is too long"};
  if (payload.size() > config_.max_payload_bytes) return {IngestStatus::invalid, 0, "payload is too large"};
  const Time now = clock_.now();
  std::string mutated;
  if (planted(mutant::ingest_skips_idempotency)) {
    mutated = std::string(request_id) + "~" + std::to_string(++mutant_serial_);
    request_id = mutated;
  }
  const NewRequest req{cxid, request_id, payload, now, now + config_.retry.deadline};
  CreateResult r;
  try {
    r = store_.create(req);
  } catch (const StoreError& e) {
    events_.emit(StoreFailed{pod_, StoreOp::create, e.failure(), now});
    return {IngestStatus::unavailable, 0, "the store failed; nothing was stored: try again"};
  }
  RELAYSIM_ASSERT(r.id != 0, "the store names the request it created or found");
  events_.emit(Ingested{pod_, req, r, now});
  switch (r.outcome) {
    case CreateOutcome::created:
      if (on_new_work_) on_new_work_();
      return {IngestStatus::created, r.id, {}};
    case CreateOutcome::duplicate:
      return {IngestStatus::duplicate, r.id, {}};
    case CreateOutcome::conflict:
      return {IngestStatus::conflict, r.id, "same (cxid, request_id) with a different payload"};
  }
  return {};
}

ReplayOutcome Ingest::replay(RequestId id) {
  const Time now = clock_.now();
  const Time deadline = now + config_.retry.deadline;
  ReplayOutcome r = ReplayOutcome::unavailable;
  try {
    r = store_.replay(id, now, deadline);
  } catch (const StoreError& e) {
    events_.emit(StoreFailed{pod_, StoreOp::replay, e.failure(), now});
    return r;
  }
  events_.emit(Replayed{pod_, id, r, deadline, now});
  if (r == ReplayOutcome::replayed && on_new_work_) on_new_work_();
  return r;
}

}  // namespace relaysim::webhook
