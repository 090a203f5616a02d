// The SMS gateway's own ports (model/core/ports.h has time and timers; model/resilience/kv.h the
// key-value store its shared limits live in): the providers it submits messages to.
//
// A provider's delivery receipts come back the other way: the shell hands each to a node
// (Node::receipt), as a provider's callback reaches whichever pod the load balancer picks.
#pragma once

#include <cstdint>

#include "model/core/function.h"
#include "model/core/time.h"
#include "model/sms/submit.h"
#include "model/sms/types.h"

namespace relaysim::sms {

// One submit of a message to a provider. The gateway's message id is the provider's client
// reference, so a receipt names the message (and a provider that dedups on it can).
struct Submit {
  MessageId id = 0;
  Recipient recipient = 0;
  std::uint32_t template_id = 0;
  std::uint64_t content = 0;
  std::uint16_t segments = 1;
  std::uint16_t attempt = 0;  // this message's submits so far, this one included
};

using SubmitCallback = InplaceFunction<void(SubmitClass), 32>;

class Providers {
 public:
  virtual ~Providers() = default;
  virtual std::size_t count() const = 0;
  // Submits to `provider`; `done` is called exactly once, never inline, with what the gateway
  // learnt: `timeout` when no answer came within `timeout`.
  virtual void submit(ProviderId provider, const Submit& submit, Duration timeout, SubmitCallback done) = 0;
};

}  // namespace relaysim::sms
