#include "model/sms/types.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "model/sms/mutants.h"
#include "model/sms/store.h"

namespace relaysim::sms {

void add_bulk_index(std::string& key, std::size_t i) {
  key += kBulkSeparator;
  key += std::to_string(i);
}

void add_campaign_recipient(std::string& key, Recipient recipient) {
  key += kCampaignSeparator;
  key += std::to_string(recipient);
}

bool names_a_key_twice(std::span<const NewMessage> messages) {
  if (messages.size() < 2) return false;
  const bool id_alone = planted(mutant::dedup_on_biz_id_alone);
  std::vector<std::pair<std::string_view, std::string_view>> keys;
  keys.reserve(messages.size());
  for (const NewMessage& m : messages) keys.emplace_back(m.biz_id, id_alone ? std::string_view{} : m.biz_type);
  std::sort(keys.begin(), keys.end());
  return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
}

bool quota_short(std::size_t wanted, std::uint64_t left) {
  return wanted > left || (planted(mutant::quota_refuses_last_unit) && wanted == left);
}

bool cap_full(std::uint64_t held, std::uint32_t count) {
  const std::uint64_t room = std::uint64_t{count} + (planted(mutant::cap_takes_one_more) ? 1U : 0U);
  return held >= room || (planted(mutant::cap_refuses_last_place) && held + 1 == count);
}

CampaignStart judge_campaign(const NewCampaign& c, const BusinessRow* business, const CampaignRow* existing) {
  CampaignStart start;
  if (business == nullptr) {
    start.outcome = AcceptOutcome::unknown_business;
  } else if (business->state != GrantState::approved || business->epoch != c.epoch) {
    start.outcome = AcceptOutcome::revoked;
  } else if (existing != nullptr) {
    const bool same = existing->filter == c.filter && existing->template_id == c.template_id &&
                      existing->content == c.content && existing->send_at == c.send_at;
    start.outcome = same ? AcceptOutcome::duplicate : AcceptOutcome::conflict;
    start.id = existing->id;
  }
  return start;
}

}  // namespace relaysim::sms
