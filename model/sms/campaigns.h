// Campaigns: the expansion of marketing campaigns, a chunk of directory users at a time.
//
// The store keeps each campaign a client started (model/sms/ingest.h); whichever pod claims one
// expands its next chunk: the filter chooses, users who opted out are skipped, and the chunk's
// messages are accepted in one transaction (charged then), scheduled past their recipient's
// quiet hours. A chunk re-expanded after a crash is a duplicate and changes nothing; a chunk the
// quota cannot take whole stops the campaign. The messages are then the dispatcher's, like any
// other.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/sms/filter.h"
#include "model/sms/pod.h"

namespace relaysim::sms {

class Campaigns {
 public:
  explicit Campaigns(Pod& pod) : pod_(pod) {}
  Campaigns(const Campaigns&) = delete;
  Campaigns& operator=(const Campaigns&) = delete;

  // Expands every campaign due now by one chunk. The store is asked about campaigns once a
  // `marketing.every`, not at every call: most calls follow a message's completion, and
  // campaigns are few.
  void expand();
  // A campaign was just started: the store is asked at once.
  void look_now(Time now) { next_look_ = now; }
  // When expand() would next find a campaign due, as the store last said; none when no campaign
  // was due. A wake before it would find expand() holding off, and wake again at once.
  std::optional<Time> next_look() const;

 private:
  // What expanding one chunk found, for its CampaignExpanded event.
  struct ChunkTally {
    std::uint64_t chosen = 0;  // users the filter chose
    std::uint64_t quiet = 0;   // messages scheduled past their recipient's quiet hours
    AcceptOutcome outcome = AcceptOutcome::accepted;
    MessageId first = 0;
  };
  // Expands the claimed campaign_ by one chunk: reads it, accepts its messages, and advances the
  // campaign under its claim.
  void expand_chunk(Time now);
  std::size_t read_chunk(const Filter& filter, Time now, CampaignProgress& p, ChunkTally& t);
  bool accept_chunk(Time now, CampaignProgress& p, ChunkTally& t);
  const Filter* filter_of(const CampaignRow& campaign);

  Pod& pod_;
  // Scratch reused chunk after chunk, and the filters of the campaigns this pod has expanded
  // (few at a time).
  CampaignRow campaign_;
  std::vector<UserRecord> users_;
  std::vector<std::string> keys_;
  std::vector<NewMessage> chunk_;
  std::vector<std::pair<CampaignId, Filter>> filters_;
  Time next_look_{};           // when to ask the store for campaigns next
  std::optional<Time> due_;    // the earliest campaign due, as last read
};

}  // namespace relaysim::sms
