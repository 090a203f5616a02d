// PodStore: one SMS pod's handle on the gateway's shared store, through which the scenario's store
// faults reach the real store code (sim/world/store_faults.h).
//
// The faults are applied by a StoreGuard (sim/world/store_guard.h, which says what they do); this
// class only says how many statements each call writes on SQLite — never more than it does, so a
// crash in the middle of a write always lands inside its transaction and rolls it back, as the
// in-memory store's failing the call whole does.
#pragma once

#include "model/sms/store.h"
#include "sim/world/store_guard.h"

namespace relaysim::sim::sms {

class PodStore final : public GuardedStore<relaysim::sms::Store> {
 public:
  using GuardedStore::GuardedStore;

  using MessageId = relaysim::sms::MessageId;
  relaysim::sms::AcceptResult accept(const relaysim::sms::AcceptRequest& request) override;
  std::optional<relaysim::sms::Status> claim_due(Time now, relaysim::sms::PodId pod, Duration lease,
                                                 relaysim::sms::MessageRow& out) override;
  bool complete(MessageId id, relaysim::sms::ClaimToken token, const relaysim::sms::Completion& completion) override;
  relaysim::sms::ReceiptOutcome receipt(MessageId id, bool delivered, Time at) override;
  std::optional<Time> next_due() override;

  relaysim::sms::BusinessId add_business(const relaysim::sms::BusinessRow& row) override;
  void put_business(const relaysim::sms::BusinessRow& row) override;
  bool move_business(relaysim::sms::BusinessId id, relaysim::sms::GrantState from, relaysim::sms::GrantState to,
                     bool new_epoch) override;
  std::optional<relaysim::sms::BusinessRow> business(relaysim::sms::BusinessId id) override;
  std::uint64_t quota_used(relaysim::sms::BusinessId id, std::uint32_t period) override;

  std::optional<relaysim::sms::MessageRow> get(MessageId id) override;
  std::optional<MessageId> find(relaysim::sms::BusinessId business, std::string_view biz_type,
                                std::string_view biz_id) override;
  std::vector<relaysim::sms::StatusChange> history(MessageId id) override;
  std::vector<MessageId> messages(const relaysim::sms::MessageQuery& query) override;
  relaysim::sms::StoreCounts counts() override { return store_.counts(); }

  relaysim::sms::CampaignStart start_campaign(const relaysim::sms::NewCampaign& campaign) override;
  bool claim_campaign(Time now, relaysim::sms::PodId pod, Duration lease, relaysim::sms::CampaignRow& out) override;
  bool advance_campaign(relaysim::sms::CampaignId id, relaysim::sms::ClaimToken token,
                        const relaysim::sms::CampaignProgress& progress) override;
  std::optional<Time> next_campaign_due() override;
  std::optional<relaysim::sms::CampaignRow> campaign(relaysim::sms::CampaignId id) override;
  bool take_cap(relaysim::sms::Recipient recipient, MessageId id, Time now,
                const relaysim::sms::FrequencyCap& cap) override;
  // The judge's read, after a run: not a pod's call, so no fault is drawn for it.
  std::vector<relaysim::sms::CapPlaceRow> cap_places() override { return store_.cap_places(); }
};

}  // namespace relaysim::sim::sms
