// Store: the durable state of the webhook platform, shared by every pod.
//
// Promises (the contract tests in tests/webhook/store_contract_test.cpp hold both implementations to
// them):
//  - Request ids are handed out in increasing order, from 1, and never reused.
//  - create() is idempotent on (cxid, request_id): a repeat with the same payload returns the
//    original id (duplicate), a repeat with another payload is a conflict and changes nothing.
//    A request is durable when create() returns.
//  - claim_due() hands out the earliest due active request — pending or blocked whose due_at has
//    come, or in_flight whose lease has expired (a rescue) — marks it in_flight under a fresh,
//    strictly increasing claim token and a lease, and returns it. Ties go to the lower id.
//  - complete() applies only while the request is in_flight under the same token (fencing): a
//    claimant that lost its lease changes nothing. An attempt given to it is appended, never
//    rewritten.
//  - claim_expired() is claim_due() for the expired: the pending or blocked request whose
//    deadline_at passed longest ago. Claimants take these first and dead-letter them at once, so
//    expiry never waits behind a backlog of due work.
//  - claim_due(..., Claimable::unblocked) and next_due(Claimable::unblocked) do the same leaving out
//    blocked requests: a pod whose ServiceB breaker refuses every lookup takes only work it can
//    move, and the blocked requests cost nothing until it may ask ServiceB again.
//  - next_due() is the earliest time claim_due() could return something, found without a scan.
//  - next_expiry() is the earliest deadline_at of a waiting request (claim_expired() takes it just
//    after), found without a scan.
//  - replay() puts a terminal request back to pending with a new deadline; its history is kept.
//  - complete() with Completion::notify (a failed or dead-lettered end) also puts a Notice in the
//    outbox, in the same write: the failure and its tenant's notice are durable together.
//  - claim_notice() hands out the oldest notice not claimed, or whose claim's lease has expired,
//    counting the claim in its `sends` and leasing it until now + lease. notice_sent() removes it
//    (a second call, or one for a notice already gone, changes nothing). next_notice() is the
//    earliest time claim_notice() could return something; notices() lists the outbox, oldest
//    first.
//  - with_status() lists the ids of requests in one status, in increasing order, from after `after`
//    (a page of an operator's listing: the dead letters).
// Every method is synchronous. A failed call (busy, disk full, I/O) throws StoreError and changes
// nothing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "model/core/names.h"
#include "model/core/time.h"
#include "model/store/store_error.h"
#include "model/webhook/types.h"

namespace relaysim::webhook {

struct NewRequest {
  std::string_view cxid;
  std::string_view request_id;
  std::string_view payload;
  Time created_at{};
  Time deadline_at{};
};

enum class CreateOutcome : std::uint8_t { created, duplicate, conflict };
inline constexpr auto kCreateOutcomeNames = names<CreateOutcome>({
    {CreateOutcome::created, "created"}, {CreateOutcome::duplicate, "duplicate"},
    {CreateOutcome::conflict, "conflict"}});
constexpr std::string_view to_string(CreateOutcome o) { return kCreateOutcomeNames[o]; }

struct CreateResult {
  CreateOutcome outcome = CreateOutcome::created;
  RequestId id = 0;  // the new or the original request
};

enum class ReplayOutcome : std::uint8_t { replayed, not_found, not_terminal, unavailable };
inline constexpr auto kReplayOutcomeNames = names<ReplayOutcome>({
    {ReplayOutcome::replayed, "replayed"}, {ReplayOutcome::not_found, "not_found"},
    {ReplayOutcome::not_terminal, "not_terminal"}, {ReplayOutcome::unavailable, "unavailable"}});
constexpr std::string_view to_string(ReplayOutcome o) { return kReplayOutcomeNames[o]; }

// The store's calls, to say which one failed.
enum class StoreOp : std::uint8_t { create, claim, complete, next_due, replay, notice };
inline constexpr auto kStoreOpNames = names<StoreOp>({
    {StoreOp::create, "create"}, {StoreOp::claim, "claim"}, {StoreOp::complete, "complete"},
    {StoreOp::next_due, "next_due"}, {StoreOp::replay, "replay"}, {StoreOp::notice, "notice"}});
constexpr std::string_view to_string(StoreOp op) { return kStoreOpNames[op]; }

// Which waiting requests claim_due and next_due consider: all of them (pending, blocked, and in
// flight past the lease), or all but the blocked ones.
enum class Claimable : std::uint8_t { all, unblocked };

struct StoreCounts {
  std::array<std::uint64_t, kStatusCount> by_status{};
  std::uint64_t attempts = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  virtual CreateResult create(const NewRequest& request) = 0;
  // Fills `out` (reusing its strings' capacity) and returns true, or returns false.
  virtual bool claim_due(Time now, PodId pod, Duration lease, RequestRow& out, Claimable which = Claimable::all) = 0;
  virtual bool claim_expired(Time now, PodId pod, Duration lease, RequestRow& out) = 0;
  virtual bool complete(RequestId id, ClaimToken token, const Completion& completion) = 0;
  virtual std::optional<Time> next_due(Claimable which = Claimable::all) = 0;
  virtual std::optional<Time> next_expiry() = 0;
  virtual ReplayOutcome replay(RequestId id, Time now, Time new_deadline) = 0;
  virtual bool claim_notice(Time now, Duration lease, Notice& out) = 0;
  virtual void notice_sent(NoticeId id) = 0;
  virtual std::optional<Time> next_notice() = 0;
  virtual std::vector<Notice> notices() = 0;

  virtual std::optional<RequestRow> get(RequestId id) = 0;
  virtual std::vector<AttemptRow> attempts(RequestId id) = 0;
  virtual StoreCounts counts() = 0;
  virtual std::vector<RequestId> with_status(Status status, RequestId after, std::size_t limit) = 0;
  // How long after it finishes a request is forgotten (get, replay and a create of its key no
  // longer find it); std::nullopt: never.
  virtual std::optional<Duration> retention() const { return std::nullopt; }
};

}  // namespace relaysim::webhook
