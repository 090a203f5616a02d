// The SMS gateway's section of a scenario (`sms:`): the gateway's policies, its businesses, the
// providers and the key-value store around it, and its clients' load.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/sms/config.h"
#include "model/sms/types.h"
#include "sim/scenario/scenario.h"
#include "sim/sms/directory.h"
#include "sim/scenario/schema.h"
#include "sim/world/arrivals.h"
#include "sim/world/distribution.h"
#include "sim/world/kv.h"

namespace relaysim::sim::sms {

namespace model = relaysim::sms;

// A business of the gateway: applied for and approved at the start of the run.
struct BusinessSpec {
  std::string name;
  std::uint64_t quota = 100'000;  // messages per quota period
  std::vector<std::string> senders{"main"};
  std::vector<std::uint32_t> templates{1};
  model::BusinessPolicy policy{};
  bool approved = true;  // false: it applies at the start and waits for an `approve` admin event
  bool operator==(const BusinessSpec&) const = default;
};

struct ReceiptSpec {
  LatencySpec delay{std::chrono::seconds(5), std::chrono::seconds(60)};
  double lost = 0.0;         // share of accepted messages whose receipt never comes
  double undelivered = 0.0;  // share whose receipt says undelivered
  bool operator==(const ReceiptSpec&) const = default;
};

struct ProviderSpec {
  std::string name;
  LatencySpec latency{std::chrono::milliseconds(100), std::chrono::milliseconds(500)};
  double mps = 0.0;           // messages per second it takes; above it, 429 (throttled). 0: no limit
  // mps becomes a token bucket of a second's worth (sim/sms/providers.cpp): at most the most a
  // limiter counts in a window.
  static constexpr Bounds<double> kMps{0.0, static_cast<double>(LimiterSpec::kLimit.hi)};
  double error_rate = 0.0;    // share refused before reading (503, unavailable): another may take it
  double refusal_rate = 0.0;  // share refused for good (a bad number): failed
  double lost_answers = 0.0;  // share accepted whose answer never arrives: a timeout, and it went out
  std::vector<Outage> outages;  // error: refused at once; timeout: swallowed (not accepted), a timeout
  std::vector<Slowdown> slowdowns;
  ReceiptSpec receipts{};
  bool operator==(const ProviderSpec&) const = default;
};

// One segment of the clients' load.
struct LoadSegment {
  std::string business;            // its name
  std::uint32_t business_index = 0;  // resolved when read: index into businesses
  model::Kind kind = model::Kind::single;  // single, bulk, scheduled, marketing or resend
  ArrivalSpec arrivals;
  std::uint32_t size = 1;          // bulk: messages per request
  Duration lead{};                 // scheduled: send_at = call time + lead
  Duration client_timeout = std::chrono::seconds(10);
  std::uint32_t retries = 1;       // times a client repeats a request that timed out (same key)
  double duplicates = 0.0;         // share of calls that repeat an earlier request exactly
  double bad_tokens = 0.0;         // share of calls with a forged, expired or foreign-scoped token
  std::uint64_t recipients = 1'000'000;  // distinct phone numbers the segment sends to
  std::string filter = "all";      // marketing: which directory users each campaign chooses
  bool operator==(const LoadSegment&) const = default;
};

// What an admin does at a moment of the run.
enum class AdminAction : std::uint8_t { approve, revoke, query };

struct AdminEvent {
  Time at{};
  AdminAction action = AdminAction::query;
  std::string business;
  std::uint32_t business_index = 0;  // resolved when read
  bool operator==(const AdminEvent&) const = default;
};

struct SmsSpec final : SystemSpec {
  model::PlatformConfig platform{};
  std::vector<BusinessSpec> businesses;
  std::vector<ProviderSpec> providers;
  KvSpec redis{};
  DirectorySpec directory{};
  std::vector<LoadSegment> load;
  std::vector<AdminEvent> admin;

  std::unique_ptr<SystemSpec> clone() const override { return std::make_unique<SmsSpec>(*this); }
  std::uint32_t processes() const override { return platform.pods; }
  // Business b's policy at b - 1, as the nodes take them.
  std::vector<model::BusinessPolicy> policies() const;
  bool operator==(const SmsSpec& o) const {
    return platform == o.platform && businesses == o.businesses && providers == o.providers && redis == o.redis &&
           directory == o.directory && load == o.load && admin == o.admin;
  }
};

const Schema<SmsSpec>& spec_schema();
// The sections a live gateway's configuration reads as a scenario does (live/sms/config.h): the
// platform's policies, and a business's own.
const Schema<model::PlatformConfig>& platform_schema();
const Schema<model::BusinessPolicy>& policy_schema();

const SmsSpec& spec_of(const Scenario& s);
SmsSpec& spec_of(Scenario& s);

}  // namespace relaysim::sim::sms
