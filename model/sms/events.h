// Events: what the SMS gateway's model tells its observers (see model/core/events.h). The model
// works with no sink attached; the simulator's oracle, metrics and fingerprint attach here. Each
// event's `mix` says what of it counts towards a run's fingerprint.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "model/core/events.h"
#include "model/resilience/shared_limiter.h"
#include "model/sms/auth.h"
#include "model/sms/filter.h"
#include "model/sms/store.h"
#include "model/sms/submit.h"
#include "model/sms/sync_async.h"
#include "model/sms/types.h"

namespace relaysim::sms {

// A send request as a client makes it: its token, the resources it uses, and its messages (one
// for a single send, many for a bulk one).
struct SendRequest {
  std::string_view token;
  std::string_view sender;
  std::uint32_t template_id = 0;
  std::span<const NewMessage> messages;
};

// How a send request was answered.
struct SendAnswer {
  AuthFault fault = AuthFault::none;            // not none: refused before the store was asked
  AcceptOutcome outcome = AcceptOutcome::accepted;
  Answer answer = Answer::pending;              // the first message's, as answer_for says
  MessageId first = 0;
  std::uint64_t quota_left = 0;
  bool unavailable = false;                     // the store failed: nothing was accepted
  SendPath path = SendPath::async;              // how an accepted single message was sent
  // Whether the request was taken (accepted now, or a duplicate of one that was).
  bool taken() const {
    return fault == AuthFault::none && !unavailable &&
           (outcome == AcceptOutcome::accepted || outcome == AcceptOutcome::duplicate);
  }
};

// A marketing campaign as a client asks for it: a template to every directory user its filter
// (model/sms/filter.h) chooses, from `send_at`.
struct CampaignRequest {
  std::string_view token;
  std::string_view sender;
  std::uint32_t template_id = 0;
  std::string_view biz_type;
  std::string_view biz_id;
  std::string_view filter;
  std::uint64_t content = 0;
  std::uint16_t segments = 1;
  Time send_at{};
};

// How a campaign request was answered (always at once: its messages are made later).
struct CampaignAnswer {
  AuthFault fault = AuthFault::none;
  std::optional<FilterError> filter_error;   // the filter does not parse: nothing was stored
  AcceptOutcome outcome = AcceptOutcome::accepted;
  CampaignId id = 0;
  bool unavailable = false;
  bool taken() const {
    return fault == AuthFault::none && !filter_error && !unavailable &&
           (outcome == AcceptOutcome::accepted || outcome == AcceptOutcome::duplicate);
  }
};

struct CampaignAnswered {
  PodId pod;
  const CampaignRequest& request;
  const CampaignAnswer& answer;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(30);
    fp.mix(answer.id);
    fp.mix(static_cast<std::uint64_t>(answer.fault) << 16 | static_cast<std::uint64_t>(answer.outcome) << 8 |
           (answer.filter_error ? 2U : 0U) | (answer.unavailable ? 1U : 0U));
    fp.mix(at);
  }
};

// A pod expanded one chunk of a campaign: directory users [from, to) were read, `chosen` passed
// the filter, `skipped` of those had opted out, and the rest were offered to the store as one
// request, which said `outcome` (ids from `first` when accepted); `quiet` of them were scheduled
// for the end of their recipient's quiet hours.
struct CampaignExpanded {
  PodId pod;
  const CampaignRow& row;   // as claimed
  std::uint64_t from;
  std::uint64_t to;
  std::uint64_t chosen;
  std::uint64_t skipped;
  std::uint64_t quiet;
  std::span<const NewMessage> messages;
  AcceptOutcome outcome;
  MessageId first;
  CampaignState state;      // after this chunk
  bool applied;             // the progress was recorded (false: fenced off, or the store failed)
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(31);
    fp.mix(row.id);
    fp.mix(to);
    fp.mix(first);
    fp.mix(static_cast<std::uint64_t>(outcome) << 8 | static_cast<std::uint64_t>(state) << 1 | (applied ? 1U : 0U));
    fp.mix(at);
  }
};

// A marketing message met its recipient's quiet hours and waits for their end.
struct MarketingDeferred {
  PodId pod;
  MessageId message;
  Recipient recipient;
  Time until;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(32);
    fp.mix(message);
    fp.mix(until);
  }
};

// A marketing message about to be submitted holds a place in its recipient's frequency cap: one
// the store gave it now, or one it holds still from an earlier submit in the window (the store's
// place keeps that earlier time). Not in the fingerprint: it follows from the run.
struct CapTaken {
  PodId pod;
  MessageId message;
  ClaimToken claim;  // the claim it was taken under
  Recipient recipient;
  Time at;
};

// A send request was answered (at once, or after a synchronous submit).
struct Answered {
  PodId pod;
  const SendAnswer& answer;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(20);
    fp.mix(answer.first);
    fp.mix(static_cast<std::uint64_t>(answer.fault) << 16 | static_cast<std::uint64_t>(answer.outcome) << 8 |
           static_cast<std::uint64_t>(answer.answer) << 1 | (answer.unavailable ? 1 : 0));
    fp.mix(at);
  }
};

// The store accepted a request's messages (ids request.first onwards).
struct Accepted {
  PodId pod;
  const AcceptRequest& request;
  const AcceptResult& result;
  SendPath path;
};

// A message was claimed (by a worker, or at accept for a synchronous send); `prior` is the status
// it had: a claim of anything but pending is the compensation scan at work.
struct Claimed {
  PodId pod;
  const MessageRow& row;
  Status prior;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(21);
    fp.mix(row.id);
    fp.mix(static_cast<std::uint64_t>(prior) << 32 | pod);
  }
};

// A shared limit decided on a message's submit (each submit takes 1).
struct LimitDecided {
  PodId pod;
  MessageId message;
  BusinessId business;  // 0: the cluster's limit
  const SharedLimitConfig& limit;
  std::uint64_t member;  // the call's name (message and attempt)
  const SharedDecision& decision;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(22);
    fp.mix(message);
    fp.mix(static_cast<std::uint64_t>(business) << 8 | static_cast<std::uint64_t>(decision.via) << 1 |
           (decision.admitted ? 1 : 0));
  }
};

struct SubmitStarted {
  PodId pod;
  const MessageRow& row;
  ProviderId provider;
  std::uint16_t attempt;  // the message's submits so far, this one included
  SendPath path;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(23);
    fp.mix(row.id);
    fp.mix(static_cast<std::uint64_t>(provider) << 16 | attempt);
    fp.mix(at);
  }
};

struct SubmitFinished {
  PodId pod;
  MessageId message;
  ProviderId provider;
  SubmitClass outcome;
  Duration latency;
  SendPath path;
  Decision decision;
  Time at;
  ClaimToken claim = 0;  // the claim it was made under (not in the fingerprint: it follows from the run)
  void mix(Fingerprint& fp) const {
    fp.mix(24);
    fp.mix(message);
    fp.mix(static_cast<std::uint64_t>(outcome) << 8 | static_cast<std::uint64_t>(decision.step));
    fp.mix(at);
  }
};

// A claim ended. `applied` is false when the claim had been fenced off (stale token) or the store
// failed (`failed`): the message then stays in flight until its lease expires.
struct Completed {
  PodId pod;
  const MessageRow& row;
  const Completion& completion;
  bool applied;
  bool failed = false;
  void mix(Fingerprint& fp) const {
    fp.mix(25);
    fp.mix(row.id);
    fp.mix(static_cast<std::uint64_t>(completion.status) << 16 | static_cast<std::uint64_t>(completion.reason) << 8 |
           (failed ? 2U : 0U) | (applied ? 1U : 0U));
    fp.mix(completion.at);
    fp.mix(completion.due_at);
  }
};

// A pod's sync-to-async switch changed mode.
struct ModeChanged {
  PodId pod;
  ModeChange change;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(26);
    fp.mix(static_cast<std::uint64_t>(pod) << 16 | static_cast<std::uint64_t>(change.rule) << 1 | (change.entered ? 1 : 0));
    fp.mix(at);
  }
};

// A message's submits reached its business's alert threshold (once per message).
struct RetryAlert {
  PodId pod;
  MessageId message;
  std::uint16_t attempts;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(27);
    fp.mix(message);
  }
};

// A provider's delivery receipt reached a pod.
struct ReceiptReceived {
  PodId pod;
  MessageId message;
  ProviderId provider;
  bool delivered;
  ReceiptOutcome outcome;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(28);
    fp.mix(message);
    fp.mix(static_cast<std::uint64_t>(outcome) << 1 | (delivered ? 1 : 0));
    fp.mix(at);
  }
};

// A store call failed (busy, full, an I/O error): it changed nothing.
struct StoreFailed {
  PodId pod;
  StoreOp op;
  StoreFailure failure;
  Time at;
  void mix(Fingerprint& fp) const {
    fp.mix(29);
    fp.mix(static_cast<std::uint64_t>(pod) << 16 | static_cast<std::uint64_t>(op) << 8 | static_cast<std::uint64_t>(failure));
    fp.mix(at);
  }
};

using Events = EventBus<Answered, Accepted, Claimed, LimitDecided, SubmitStarted, SubmitFinished, Completed, ModeChanged,
                        RetryAlert, ReceiptReceived, StoreFailed, CampaignAnswered, CampaignExpanded, MarketingDeferred,
                        CapTaken>;

}  // namespace relaysim::sms
