#include "sim/sms/oracle.h"

#include "model/core/assert.h"

namespace relaysim::sim::sms {

using namespace relaysim::sms;

namespace {

std::uint64_t ledger_key(std::uint32_t business, std::uint32_t period) {
  return static_cast<std::uint64_t>(business) << 32 | period;
}

void key_text(std::string& out, BusinessId b, std::string_view type, std::string_view id) {
  out.assign(std::to_string(b));
  out += '/';
  out += type;
  out += '/';
  out += id;
}

}  // namespace

std::string_view to_string(DuplicateCause c) {
  switch (c) {
    case DuplicateCause::answer_lost: return "answer_lost";
    case DuplicateCause::rescued: return "rescued";
    case DuplicateCause::store_failure: return "store_failure";
    case DuplicateCause::unexplained: return "unexplained";
  }
  return "?";
}

Oracle::Oracle(const SmsSpec& spec, Ledger& ledger) : spec_(spec), ledger_(ledger) {}

Oracle::Message* Oracle::find(MessageId id) {
  return id >= 1 && id <= messages_.size() ? &messages_[id - 1] : nullptr;
}

void Oracle::violate(Invariant i, Time at, MessageId id, std::string what) {
  ledger_.violate(index(i), at, id == 0 ? std::string() : "message " + std::to_string(id), std::move(what));
}

void Oracle::on(const Accepted& e) {
  const AcceptRequest& req = e.request;
  const AcceptResult& r = e.result;
  if (r.outcome == AcceptOutcome::duplicate) {
    const NewMessage& m = req.messages[0];
    key_text(scratch_, req.business, m.biz_type, m.biz_id);
    const auto it = keys_.find(scratch_);
    if (it == keys_.end()) {
      violate(Invariant::dedup, req.now, r.first, "a request was answered as a repeat of a key never accepted");
    } else if (it->second != r.first) {
      violate(Invariant::dedup, req.now, r.first,
              "a repeated request was answered with message " + std::to_string(r.first) + ", not the first one (" +
                  std::to_string(it->second) + ")");
    }
    return;
  }
  if (r.outcome != AcceptOutcome::accepted) return;
  for (std::size_t i = 0; i < req.messages.size(); ++i) {
    const NewMessage& m = req.messages[i];
    const MessageId id = r.first + i;
    RELAYSIM_ASSERT(id == messages_.size() + 1, "message ids are handed out in order");
    messages_.push_back(Message{req.business, req.period, m.send_at});
    key_text(scratch_, req.business, m.biz_type, m.biz_id);
    const auto [it, inserted] = keys_.emplace(scratch_, id);
    if (!inserted) {
      violate(Invariant::dedup, req.now, id,
              "accepted key " + scratch_ + " a second time (first as message " + std::to_string(it->second) + ")");
    }
  }
  std::uint64_t& used = charged_[ledger_key(req.business, req.period)];
  used += req.messages.size();
  const BusinessSpec* b = req.business >= 1 && req.business <= spec_.businesses.size() ? &spec_.businesses[req.business - 1] : nullptr;
  if (b != nullptr && used > b->quota) {
    violate(Invariant::quota, req.now, r.first,
            "business '" + b->name + "' holds " + std::to_string(used) + " quota units, over its quota of " +
                std::to_string(b->quota));
  }
}

void Oracle::on(const Claimed& e) {
  Message* m = find(e.row.id);
  if (m == nullptr) return;
  m->claim_pinned = kNoProvider;
  m->rescued = e.prior == Status::in_flight;
}

void Oracle::on(const SubmitStarted& e) {
  Message* m = find(e.row.id);
  if (m == nullptr) return;
  if (e.at < m->send_at) {
    violate(Invariant::schedule, e.at, e.row.id,
            "submitted at " + format_time(e.at) + ", before its send_at " + format_time(m->send_at));
  }
  if (m->accepted) {
    violate(Invariant::failover, e.at, e.row.id, "submitted again after a provider's certain accept was recorded");
  }
  const ProviderId pinned = m->claim_pinned != kNoProvider ? m->claim_pinned : m->pinned;
  if (pinned != kNoProvider && e.provider != pinned) {
    violate(Invariant::failover, e.at, e.row.id,
            "submitted to provider " + std::to_string(e.provider) + " after an ambiguous outcome at provider " +
                std::to_string(pinned) + ", which may have sent it");
  }
}

void Oracle::on(const SubmitFinished& e) {
  Message* m = find(e.message);
  if (m != nullptr && is_ambiguous(e.outcome)) m->claim_pinned = e.provider;
}

void Oracle::finalise(Message& m, MessageId id, Status s, Time at) {
  if (m.final_status != kOpen) {
    violate(Invariant::final, at, id,
            "became " + std::string(to_string(s)) + " after it had ended " +
                std::string(to_string(static_cast<Status>(m.final_status))));
    return;
  }
  m.final_status = static_cast<std::uint8_t>(s);
}

void Oracle::on(const Completed& e) {
  Message* m = find(e.row.id);
  if (m == nullptr) return;
  if (!e.applied) {
    if (e.failed) m->store_failed = true;
    return;
  }
  const Completion& c = e.completion;
  m->accepted = m->accepted || c.accepted;
  if (c.status == Status::unknown) m->pinned = c.provider != kNoProvider ? c.provider : m->pinned;
  if (!is_final(c.status)) return;
  finalise(*m, e.row.id, c.status, c.at);
  if (m->charged && relaysim::sms::refunds(c.status, m->accepted)) {
    m->charged = false;
    ++refunds_;
    std::uint64_t& used = charged_[ledger_key(m->business, m->period)];
    RELAYSIM_ASSERT(used > 0, "a refund follows a charge");
    --used;
  }
}

void Oracle::on(const ReceiptReceived& e) {
  Message* m = find(e.message);
  if (m == nullptr || e.outcome != ReceiptOutcome::applied) return;
  m->accepted = true;
  finalise(*m, e.message, e.delivered ? Status::delivered : Status::undelivered, e.at);
}

void Oracle::on(const ClientAnswered& e) {
  const AcceptOutcome o = e.answer.outcome;
  if (!e.repeat && e.answer.fault == AuthFault::none && !e.answer.unavailable &&
      (o == AcceptOutcome::duplicate || o == AcceptOutcome::conflict)) {
    violate(Invariant::dedup, e.at, e.answer.first,
            "new request " + key_text(e.key) + " was answered as a " + std::string(to_string(o)) + " of message " +
                std::to_string(e.answer.first));
  }
  const bool refused = e.answer.fault != AuthFault::none;
  if (e.token == TokenKind::good && refused) {
    violate(Invariant::scope, e.at, 0,
            "a good token of request " + key_text(e.key) + " was refused as " +
                std::string(to_string(e.answer.fault)));
  } else if (e.token != TokenKind::good && !refused) {
    violate(Invariant::scope, e.at, e.answer.first,
            "a " + std::string(to_string(e.token)) + " token of request " + key_text(e.key) +
                " was let through");
  }
}

void Oracle::on(const ProviderSubmitted& e) {
  if (!sms::sent(e.fate)) return;
  ++sent_;
  Message* m = find(e.message);
  if (m == nullptr) return;
  if (++m->sends > 1) {
    DuplicateCause cause = DuplicateCause::unexplained;
    if (m->unseen_send) {
      cause = DuplicateCause::answer_lost;
    } else if (m->rescued) {
      cause = DuplicateCause::rescued;
    } else if (m->store_failed) {
      cause = DuplicateCause::store_failure;
    }
    ++duplicates_[static_cast<std::size_t>(cause)];
    if (cause == DuplicateCause::unexplained) {
      violate(Invariant::dup, e.at, e.message,
              "provider " + std::to_string(e.provider) + " sent it again (" + std::to_string(m->sends) +
                  " times) with no ambiguous outcome to explain it");
    }
  }
  if (e.fate != Fate::accepted) m->unseen_send = true;
}

void Oracle::finish(Time end, Store& store) {
  // Every accepted message is still in the store (ids are never reused, nothing is deleted).
  std::uint64_t stored = 0;
  for (const std::uint64_t n : store.counts().by_status) stored += n;
  if (stored < messages_.size()) {
    lost_ = messages_.size() - stored;
    violate(Invariant::final, end, 0,
            std::to_string(lost_) + " accepted messages are missing from the store (" + std::to_string(stored) +
                " of " + std::to_string(messages_.size()) + " kept)");
  }
  // The store holds exactly the quota one charge per message, less refunds, comes to.
  for (const auto& [key, used] : charged_) {
    const auto business = static_cast<BusinessId>(key >> 32);
    const auto period = static_cast<std::uint32_t>(key);
    const std::uint64_t held = store.quota_used(business, period);
    if (held != used) {
      violate(Invariant::quota, end, 0,
              "business " + std::to_string(business) + " holds " + std::to_string(held) + " quota units in period " +
                  std::to_string(period) + ", but its messages account for " + std::to_string(used) +
                  " (one charge each, less refunds)");
    }
  }
}

}  // namespace relaysim::sim::sms
