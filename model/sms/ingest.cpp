#include "model/sms/ingest.h"

#include <utility>

#include "model/core/assert.h"

namespace relaysim::sms {

namespace {

// A sync send waits for its first outcome; bulk, scheduled and marketing sends are stored and
// sent by the workers.
bool may_go_sync(const SendRequest& r, Time now) {
  if (r.messages.size() != 1) return false;
  const NewMessage& m = r.messages[0];
  return m.send_at <= now && (m.kind == Kind::single || m.kind == Kind::resend);
}

}  // namespace

void Ingest::send(const SendRequest& request, AnswerCallback done) {
  RELAYSIM_ASSERT(!request.messages.empty(), "a send request carries at least one message");
  const Time now = pod_.clock.now();
  SendAnswer a;
  auto reply = [&] {
    pod_.events.emit(Answered{pod_.id, a, now});
    done(a);
  };
  const AuthResult auth = auth_.check(request.token, SendScope{request.sender, request.template_id});
  if (auth.fault != AuthFault::none) {
    a.fault = auth.fault;
    a.answer = Answer::failure;
    reply();
    return;
  }
  const SendPath path = may_go_sync(request, now) ? mode_.route(now) : SendPath::async;
  const AcceptRequest accept{auth.business, auth.epoch, now, quota_period(now, pod_.config.quota_period),
                             request.messages, path == SendPath::async ? PodId{0} : pod_.id, pod_.config.lease};
  AcceptResult r;
  try {
    r = pod_.store.accept(accept);
  } catch (const StoreError& e) {
    pod_.store_failed(StoreOp::accept, e.failure());
    a.unavailable = true;
    a.answer = Answer::failure;
    reply();
    return;
  }
  pod_.events.emit(Accepted{pod_.id, accept, r, path});
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
    dispatcher_.nudge();  // persist, then send at once: the workers take it now if they have room
    return;
  }
  dispatcher_.send_sync(request.messages[0], accept, r, path, a, std::move(done));
}

CampaignAnswer Ingest::campaign(const CampaignRequest& request) {
  const Time now = pod_.clock.now();
  CampaignAnswer a;
  auto reply = [&] {
    pod_.events.emit(CampaignAnswered{pod_.id, request, a, now});
    return a;
  };
  const AuthResult auth = auth_.check(request.token, SendScope{request.sender, request.template_id});
  if (auth.fault != AuthFault::none) {
    a.fault = auth.fault;
    return reply();
  }
  if (auto parsed = Filter::parse(request.filter, pod_.directory.vocabulary()); auto* e = std::get_if<FilterError>(&parsed)) {
    a.filter_error = std::move(*e);
    return reply();
  }
  const NewCampaign c{auth.business,   auth.epoch,      request.biz_type, request.biz_id, request.filter,
                      request.template_id, request.content, request.segments, now,            request.send_at};
  CampaignStart started;
  try {
    started = pod_.store.start_campaign(c);
  } catch (const StoreError& e) {
    pod_.store_failed(StoreOp::campaign, e.failure());
    a.unavailable = true;
    return reply();
  }
  a.outcome = started.outcome;
  a.id = started.id;
  reply();
  if (started.outcome == AcceptOutcome::accepted) {
    campaigns_.look_now(now);
    dispatcher_.nudge();  // expand its first chunk now
  }
  return a;
}

}  // namespace relaysim::sms
