// Ingest: the create(cxid, request_id, payload) entry point.
//
// Persist first, acknowledge second: a request is acknowledged only after the Store has it; when
// the store fails, nothing is acknowledged and the client is told to try again. The ingest path
// touches only the Store — never ServiceB — so a ServiceB outage cannot reach it.
#pragma once

#include <string>
#include <string_view>

#include "model/core/function.h"
#include "model/core/names.h"
#include "model/core/ports.h"
#include "model/webhook/config.h"
#include "model/webhook/events.h"

namespace relaysim::webhook {

// unavailable: the store failed; nothing was stored and the client should try again (HTTP 503).
enum class IngestStatus : std::uint8_t { created, duplicate, conflict, invalid, unavailable };
inline constexpr auto kIngestStatusNames = names<IngestStatus>({
    {IngestStatus::created, "created"}, {IngestStatus::duplicate, "duplicate"}, {IngestStatus::conflict, "conflict"},
    {IngestStatus::invalid, "invalid"}, {IngestStatus::unavailable, "unavailable"}});
constexpr std::string_view to_string(IngestStatus s) { return kIngestStatusNames[s]; }

struct IngestResult {
  IngestStatus status = IngestStatus::invalid;
  RequestId id = 0;          // created: the new request; duplicate/conflict: the original
  std::string_view problem;  // invalid, unavailable: why (static text)
};

class Ingest {
 public:
  using OnNewWork = InplaceFunction<void(), 16>;
  Ingest(PodId pod, const PlatformConfig& config, Store& store, Clock& clock, Events& events,
         OnNewWork on_new_work = {});

  IngestResult create(std::string_view cxid, std::string_view request_id, std::string_view payload);
  // Manual replay of a terminal request: pending again with a fresh deadline; history is kept.
  ReplayOutcome replay(RequestId id);

 private:
  PodId pod_;
  const PlatformConfig& config_;
  Store& store_;
  Clock& clock_;
  Events& events_;
  OnNewWork on_new_work_;
  std::uint64_t mutant_serial_ = 0;  // test builds only: see mutant::ingest_skips_idempotency
};

}  // namespace relaysim::webhook
