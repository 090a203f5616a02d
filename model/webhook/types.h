// The webhook domain's nouns: a Request (one client call to deliver a JSON payload to a cxid's
// URL), its Attempts (append-only), and the Status/Reason pair that says where it stands.
//
// The life of a request is kRequestLifecycle below: pending and blocked (waiting on ServiceB)
// are claimed into in_flight, a completion leaves in_flight, and only a replay leaves a terminal
// state (delivered, failed, dead_lettered).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/core/http.h"
#include "model/core/lifecycle.h"
#include "model/core/names.h"
#include "model/core/time.h"

namespace relaysim::webhook {

using RequestId = std::uint64_t;
using ClaimToken = std::uint64_t;
using PodId = std::uint32_t;
using NoticeId = std::uint64_t;

enum class Status : std::uint8_t { pending, blocked, in_flight, delivered, failed, dead_lettered };

enum class Reason : std::uint8_t {
  none,         // not terminal
  ok,           // delivered: 2xx
  client_error, // failed: a 4xx classified terminal
  gone,         // failed: 410, the endpoint is gone
  rejected,     // failed: another status classified terminal by configuration
  no_url,       // failed: ServiceB does not know the cxid
  deadline,     // dead_lettered: the deadline passed before delivery
  forbidden_address,  // failed: the URL points at an address the platform may not call
  bad_url,      // failed: the URL cannot be called at all (credentials, another scheme, a control character)
};

constexpr bool is_terminal(Status s) { return s >= Status::delivered; }
inline constexpr auto kStatusNames = names<Status>({
    {Status::pending, "pending"}, {Status::blocked, "blocked_on_dependency"}, {Status::in_flight, "in_flight"},
    {Status::delivered, "delivered"}, {Status::failed, "failed"}, {Status::dead_lettered, "dead_lettered"}});
constexpr std::string_view to_string(Status s) { return kStatusNames[s]; }
inline constexpr int kStatusCount = kStatusNames.count;
inline constexpr auto kReasonNames = names<Reason>({
    {Reason::none, "none"}, {Reason::ok, "ok"}, {Reason::client_error, "client_error"}, {Reason::gone, "gone"},
    {Reason::rejected, "rejected"}, {Reason::no_url, "no_url"}, {Reason::deadline, "deadline"},
    {Reason::forbidden_address, "forbidden_address"}, {Reason::bad_url, "bad_url"}});
constexpr std::string_view to_string(Reason r) { return kReasonNames[r]; }
inline constexpr int kReasonCount = kReasonNames.count;

// The life of a request (model/core/lifecycle.h): the stores make only these moves, and the
// oracle holds every run to them (W-lifecycle).
inline constexpr Move<Status> kRequestLifecycle[] = {
    {std::nullopt, Status::pending, "created"},
    {Status::pending, Status::in_flight, "claimed when due"},
    {Status::blocked, Status::in_flight, "claimed when due"},
    {Status::in_flight, Status::in_flight, "rescued: the claim's lease expired"},
    {Status::in_flight, Status::pending, "a retry planned"},
    {Status::in_flight, Status::blocked, "deferred: no URL to be had"},
    {Status::in_flight, Status::delivered, "2xx"},
    {Status::in_flight, Status::failed, "a terminal verdict, or no URL"},
    {Status::in_flight, Status::dead_lettered, "the deadline passed"},
    {Status::delivered, Status::pending, "replayed"},
    {Status::failed, Status::pending, "replayed"},
    {Status::dead_lettered, Status::pending, "replayed"},
};

// A stored request. Strings are owned; stores reuse a caller's RequestRow to avoid allocation.
struct RequestRow {
  RequestId id = 0;
  std::string cxid;
  std::string request_id;
  std::string payload;
  Time created_at{};
  Time deadline_at{};
  Status status = Status::pending;
  Reason reason = Reason::none;
  std::uint32_t attempts = 0;   // HTTP attempts made
  std::uint32_t deferrals = 0;  // times deferred because ServiceB could not answer
  std::uint32_t replays = 0;
  Time due_at{};                // pending/blocked: next claim time; in_flight: lease expiry
  Time not_before{};            // earliest next attempt allowed by Retry-After
  Duration last_delay{};        // last backoff delay (decorrelated jitter needs it)
  PodId lease_owner = 0;
  ClaimToken claim_token = 0;
  Time terminal_at{};
};

// One HTTP attempt, as recorded in the append-only attempts table.
struct AttemptRow {
  RequestId request = 0;
  std::uint32_t number = 0;  // 1-based
  PodId pod = 0;
  ClaimToken claim_token = 0;
  Time started_at{};
  Time finished_at{};
  std::string resolved_url;
  std::uint64_t serviceb_version = 0;
  NetError error = NetError::none;
  int http_status = 0;
  std::string detail;  // why nothing was sent, in words (HttpResult::detail); empty otherwise
};

// The fenced state change a claimant applies when it is done with a claim.
struct Completion {
  const AttemptRow* attempt = nullptr;  // the HTTP attempt made under this claim, if any
  Status status = Status::pending;      // anything but in_flight
  Reason reason = Reason::none;
  Time at{};                            // when the claimant completed
  Time due_at{};                        // pending/blocked: when to claim again
  Time not_before{};
  Duration last_delay{};
  bool notify = false;                  // a failed or dead-lettered end its tenant must hear of (a Notice)
};

// A failure's notice to its tenant, in the store's outbox from the commit of the failure until it
// has been sent. It is sent at least once: a sender that dies after sending and before the
// notice was removed leaves it to be sent again (with `sends` above 1).
struct Notice {
  NoticeId id = 0;            // increasing, never reused
  RequestId request = 0;
  std::uint32_t life = 0;     // the request's replays when it ended so (its first life is 0)
  std::uint32_t sends = 0;    // claims of it so far, this one included
  Status status = Status::failed;  // failed or dead_lettered
  Reason reason = Reason::none;
  Time at{};                  // when the request ended
};

// The header that carries a request's stable id to its endpoint (Standard Webhooks).
inline constexpr std::string_view kWebhookIdHeader = "webhook-id";
// The webhook-id header value: stable for a request across attempts, pods and replays.
std::string webhook_id_for(RequestId id);
// Inverse of webhook_id_for; 0 when `header` is not one of ours.
RequestId request_id_from_webhook_id(std::string_view header);

}  // namespace relaysim::webhook
