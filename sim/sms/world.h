// World: the simulated universe one SMS scenario runs in — the providers, Redis, the back office
// and its businesses, the gateway's pods (each a real sms::Node wired to simulated ports), the
// clients and the pod crashes. The Store is the gateway's shared database and outlives every pod.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/core/slot_pool.h"
#include "model/sms/backoffice.h"
#include "model/sms/jwt_codec.h"
#include "model/sms/node.h"
#include "model/sms/store.h"
#include "sim/kernel/kernel.h"
#include "sim/sms/directory.h"
#include "sim/sms/pod_store.h"
#include "sim/sms/providers.h"
#include "sim/sms/spec.h"
#include "sim/sms/truth.h"
#include "sim/world/arrivals.h"
#include "sim/world/kv.h"
#include "sim/world/process.h"

namespace relaysim::sim::sms {

class World;

// One pod of the gateway: its Node while it is up, and the simulated ports the node runs on. The
// ports answer only the incarnation that asked.
class Pod final : public relaysim::sms::Providers, public KeyValue {
 public:
  Pod(World& world, Process& process);

  std::size_t count() const override;
  void submit(ProviderId provider, const relaysim::sms::Submit& submit, Duration timeout,
              relaysim::sms::SubmitCallback done) override;
  void limit(std::string_view key, const LimiterSpec& spec, LimitOp op, std::uint32_t cost, std::uint64_t member,
             Duration timeout, LimitCallback done) override;

  relaysim::sms::Node* node() { return node_.get(); }

 private:
  friend class World;
  struct KvCall {
    LimitCallback done;
    std::uint32_t generation = 0;
  };
  World& world_;
  Process& process_;
  Rng rng_;
  std::uint32_t generation_ = 0;  // bumped at each crash: answers owed to an older one are dropped
  SlotPool<KvCall> kv_calls_;
  std::unique_ptr<PodStore> store_;  // the pod's handle on the shared store, for store faults
  std::unique_ptr<relaysim::sms::Node> node_;
};

// The events an SMS world emits: the model's, the world's ground truth, the processes', Redis's.
struct SmsBuses {
  relaysim::sms::Events model;
  WorldEvents world;
  ProcessEvents processes;
};

class World final : private ProcessHost {
 public:
  // `db`: the SQLite store's database (store faults fail it in the middle of a write); nullptr
  // for the in-memory store.
  World(const Scenario& scenario, Kernel& kernel, relaysim::sms::Store& store, Db* db, SmsBuses& buses);
  ~World() override;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  const SmsSpec& spec() const { return spec_; }
  SimKv& kv() { return kv_; }
  relaysim::sms::BackOffice& back_office() { return back_office_; }
  // How many of the pods up have `provider` ejected from their routing at `now`.
  std::uint32_t ejected_by(ProviderId provider, Time now) const;
  // Business index i is business id i + 1.
  static relaysim::sms::BusinessId business_id(std::uint32_t index) { return index + 1; }

 private:
  friend class Pod;
  struct Call {
    std::uint64_t key = 0;
    std::uint32_t segment = 0;
    std::uint32_t serial = 0;  // bumped at each use, so a late answer to an earlier use is ignored
    std::uint32_t retries_left = 0;
    Time send_at{};
    MessageId resend_of = 0;
    TokenKind token = TokenKind::good;      // what the client asks for (a retry asks again)
    TokenKind presented = TokenKind::good;  // what it presented this time (presented_kind)
    bool repeat = false;
    bool answered = false;
  };
  struct Recent {
    std::uint64_t key = 0;
    std::uint32_t segment = 0;
    Time send_at{};
    MessageId resend_of = 0;
  };

  void start(Process& p) override;
  void stop(Process& p) override;
  void arrive(std::uint32_t segment);
  void start_campaign(std::uint32_t segment);
  void admin(const AdminEvent& e);
  // The node of the next pod up (round robin), or null, told to the world as a rejected call.
  relaysim::sms::Node* pod_for_client();
  void opt_out();
  void call(std::uint64_t key, std::uint32_t segment, Time send_at, TokenKind token, std::uint32_t retries, bool repeat,
            MessageId resend_of);
  void answered(std::uint32_t slot, std::uint32_t serial, const relaysim::sms::SendAnswer& a);
  void timed_out(std::uint32_t slot);
  void deliver_receipt(MessageId id, ProviderId provider, bool delivered);
  const std::string& token_for(std::uint32_t business, TokenKind kind);
  // What the token a client presents for `kind` is in truth now: a good token past its expiry
  // (its renewal refused while the business was revoked, or a lifetime shorter than the
  // claims' whole seconds can hold) is an expired one, and the platform must refuse it.
  TokenKind presented_kind(std::uint32_t business, TokenKind kind) const;

  const Scenario& scenario_;
  const SmsSpec& spec_;
  Kernel& kernel_;
  relaysim::sms::Store& store_;
  SmsBuses& buses_;
  std::vector<relaysim::sms::BusinessPolicy> policies_;
  relaysim::sms::LibjwtCodec codec_;
  relaysim::sms::BackOffice back_office_;
  SimProviders providers_;
  SimKv kv_;
  SimDirectory directory_;
  StoreFaults store_faults_;
  Rng rng_;
  Arrivals arrivals_;
  Processes processes_;
  std::vector<std::unique_ptr<Pod>> pods_;
  // Per business: its tokens by kind, and when the good one was issued.
  std::vector<std::array<std::string, kTokenKindCount>> tokens_;
  std::vector<Time> token_issued_;
  std::vector<std::int64_t> token_expires_s_;  // the good token's expiry claim, in seconds
  std::vector<relaysim::sms::TokenClaims> token_claims_;  // the good token's claims
  std::vector<std::int64_t> expired_at_s_;  // the second the expired token was signed to expire in
  // Per business: whether it was ever approved (its clients have a token, and call, only then —
  // after a revocation they go on calling with the token they have), and the messages its clients
  // were told had failed, which a `resend` segment resends (each once).
  std::vector<bool> granted_;
  std::vector<std::vector<MessageId>> failed_;
  SlotPool<Call> calls_;
  std::vector<Recent> recent_;
  std::size_t recent_next_ = 0;
  std::array<std::uint64_t, relaysim::sms::kKindCount> next_key_{1, 1, 1, 1, 1};  // per kind
  // Scratch for building a request's messages (the store copies what it keeps).
  std::vector<std::string> ids_;
  std::vector<relaysim::sms::NewMessage> messages_;
};

}  // namespace relaysim::sim::sms
