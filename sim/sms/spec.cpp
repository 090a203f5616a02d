#include "sim/sms/spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <variant>

#include "model/sms/filter.h"

#include "sim/system.h"
#include "sim/world/policies.h"

namespace relaysim::sim::sms {

namespace {

using model::BusinessPolicy;
using model::PlatformConfig;
using model::RetryPolicy;
using model::RoutingConfig;
using model::SyncAsyncConfig;

const Schema<RetryPolicy>& retry_schema() {
  static const Schema<RetryPolicy> schema = [] {
    Schema<RetryPolicy> s(Style::flow,
                          "A business's retry policy: the backoff between submits of one message, how many submits "
                          "it gets, when to raise an alert, and whether a retry waits in the store (any pod sends it) "
                          "or in the memory of the pod that tried, while its claim lasts.");
    s.include(&RetryPolicy::backoff, backoff_schema());
    s.key("max_attempts", &RetryPolicy::max_attempts, integer_codec(RetryPolicy::kMaxAttempts),
          "submits a message gets in all; then it fails as `exhausted`");
    s.key("alert_after", &RetryPolicy::alert_after, integer_codec(RetryPolicy::kAlertAfter),
          "raise one alert when a message's submits reach this many (0: never)");
    s.key("cross_process", &RetryPolicy::cross_process, flag_codec(),
          "`true`: every retry is stored with its due time and any pod sends it; `false`: the pod that tried "
          "retries from memory while its claim lasts, and only later retries go through the store");
    return s;
  }();
  return schema;
}

}  // namespace

const Schema<BusinessPolicy>& policy_schema() {
  static const Schema<BusinessPolicy> schema = [] {
    Schema<BusinessPolicy> s(Style::flow);
    s.key("retry", &BusinessPolicy::retry, map_codec(retry_schema()), "its retry policy");
    s.key("limit", &BusinessPolicy::limit, optional_codec(limiter_schema()),
          "its submits across the cluster, shared through Redis (with the platform limit's `when_down`, `timeout` "
          "and `breaker`)",
          opt::shown("none"));
    return s;
  }();
  return schema;
}

namespace {

const Schema<BusinessSpec>& business_schema() {
  static const Schema<BusinessSpec> schema = [] {
    Schema<BusinessSpec> s(Style::flow,
                           "A business of the gateway. It applies for its resources and is approved at the start of "
                           "the run; its clients send with a token the back office issued it.");
    s.key("name", &BusinessSpec::name, name_codec(), "its name", opt::required());
    s.key("quota", &BusinessSpec::quota, integer_codec<std::uint64_t>(0, 1'000'000'000'000),
          "messages per quota period (platform.quota_period)");
    s.key("senders", &BusinessSpec::senders, list_codec(name_codec()), "the sender names it applies for");
    s.key("templates", &BusinessSpec::templates, list_codec(integer_codec<std::uint32_t>(1, 1'000'000'000)),
          "the template ids it applies for");
    s.include(&BusinessSpec::policy, policy_schema());
    s.key("approved", &BusinessSpec::approved, flag_codec(),
          "`false`: it applies at the start and its clients wait for an `approve` admin event");
    s.check([](const Reader& r, const Map& m, BusinessSpec& b) {
      if (b.senders.empty()) r.fail(m["senders"], m.child("senders"), "needs at least one sender");
      if (b.templates.empty()) r.fail(m["templates"], m.child("templates"), "needs at least one template");
      m.refuse(model::validate(b.policy));
    });
    return s;
  }();
  return schema;
}

const Schema<ReceiptSpec>& receipt_schema() {
  static const Schema<ReceiptSpec> schema = [] {
    Schema<ReceiptSpec> s(Style::flow, "Delivery receipts, sent back for every message a provider accepted.");
    s.key("delay", &ReceiptSpec::delay, latency_codec(), "from accept to receipt");
    s.key("lost", &ReceiptSpec::lost, fraction_codec(), "share that never come (the message ends `unconfirmed`)");
    s.key("undelivered", &ReceiptSpec::undelivered, fraction_codec(), "share that say the network could not deliver");
    return s;
  }();
  return schema;
}

const Schema<ProviderSpec>& provider_schema() {
  static const Schema<ProviderSpec> schema = [] {
    Schema<ProviderSpec> s(Style::flow, "An SMS provider the gateway submits to.");
    s.key("name", &ProviderSpec::name, name_codec(), "its name", opt::shown("`provider-N`"));
    s.key("latency", &ProviderSpec::latency, latency_codec(), "time to answer a submit");
    s.key("mps", &ProviderSpec::mps, rate_codec(ProviderSpec::kMps),
          "messages per second it takes, a whole number; above it, submits are answered 429 (`throttled`); 0: no limit");
    s.key("error_rate", &ProviderSpec::error_rate, fraction_codec(),
          "share refused before the provider reads them (`unavailable`): certainly not sent, so another may take it");
    s.key("refusal_rate", &ProviderSpec::refusal_rate, fraction_codec(),
          "share refused for good (a bad number, banned content): the message fails");
    s.key("lost_answers", &ProviderSpec::lost_answers, fraction_codec(),
          "share accepted whose answer never arrives: the gateway times out, though the SMS went out");
    s.key("outages", &ProviderSpec::outages, list_codec(map_codec(outage_schema()), "list of windows with a mode"),
          "`error`: every submit refused at once; `timeout`: swallowed, never accepted (the gateway times out)",
          opt::shown("none"));
    s.key("slowdowns", &ProviderSpec::slowdowns, list_codec(map_codec(slowdown_schema()), "list, below"),
          "windows when its latency is multiplied", opt::shown("none"));
    s.key("receipts", &ProviderSpec::receipts, map_codec(receipt_schema()), "its delivery receipts");
    s.check([](const Reader& r, const Map& m, ProviderSpec& p) {
      // One draw decides: refused for now, refused for good, or read; shares past 100% would
      // silently shrink the second.
      if (p.error_rate + p.refusal_rate > 1.0) {
        r.fail(m["refusal_rate"].IsDefined() ? m["refusal_rate"] : m["error_rate"], m.child("refusal_rate"),
               "error_rate + refusal_rate must not exceed 100%");
      }
      // Its throttle counts whole messages a second (sim/sms/providers.cpp): 0.5/s or 2.5/s would
      // silently run as 1/s or 3/s.
      if (p.mps > 0 && (p.mps < 1 || p.mps != std::floor(p.mps))) {
        r.fail(m["mps"], m.child("mps"),
               "must be 0 (no limit) or a whole number of messages a second, at least 1/s");
      }
    });
    return s;
  }();
  return schema;
}

const Schema<RoutingConfig>& routing_schema() {
  static const Schema<EwmaConfig> ewma = [] {
    Schema<EwmaConfig> s(Style::flow);
    s.key("decay", &EwmaConfig::decay, duration_codec(EwmaConfig::kDecay), "ewma: how fast old response times fade");
    s.key("default_rtt", &EwmaConfig::default_rtt, duration_codec(EwmaConfig::kDefaultRtt),
          "ewma: assumed for a provider with no history");
    s.key("failure_penalty", &EwmaConfig::failure_penalty, duration_codec(EwmaConfig::kFailurePenalty),
          "ewma: what a failed submit counts as, so a provider that fails fast does not attract the traffic");
    return s;
  }();
  static const Schema<RoutingConfig> schema = [] {
    Schema<RoutingConfig> s(Style::flow,
                            "Which provider a submit goes to. Every policy skips providers the message already tried "
                            "in its claim and, while another is left, ejected ones; ties go to the first provider.");
    s.key("policy", &RoutingConfig::policy, choice_codec(model::kRoutingPolicyNames),
          "`round_robin`; `ewma`: the lowest peak-EWMA response time; `error_rate`: the lowest failure rate over "
          "`window`, ejecting a provider above `max_error_rate`");
    s.include(&RoutingConfig::ewma, ewma);
    s.key("window", &RoutingConfig::window, duration_codec(), "error_rate: the window failures are counted over");
    s.key("min_calls", &RoutingConfig::min_calls, integer_codec<std::uint32_t>(1, 1'000'000),
          "error_rate: below this many submits in the window a provider is never ejected");
    s.key("max_error_rate", &RoutingConfig::max_error_rate, fraction_codec(), "error_rate: above it, ejected");
    s.key("eject_for", &RoutingConfig::eject_for, duration_codec(), "error_rate: how long an ejection lasts");
    return s;
  }();
  return schema;
}

const std::vector<std::pair<std::string, SyncAsyncConfig::Exit>> kExits = {{"after", SyncAsyncConfig::Exit::after},
                                                                          {"probe", SyncAsyncConfig::Exit::probe}};

const Schema<SyncAsyncConfig>& sync_async_schema() {
  static const Schema<SyncAsyncConfig::Latency> latency = [] {
    Schema<SyncAsyncConfig::Latency> s(Style::flow);
    s.key("over", &SyncAsyncConfig::Latency::over, duration_codec(), "a submit slower than this is slow (0: no rule)");
    s.key("consecutive", &SyncAsyncConfig::Latency::consecutive, integer_codec<std::uint32_t>(0, 1'000'000),
          "enter after this many slow sync submits in a row (0: judge the window's mean instead)");
    s.key("window", &SyncAsyncConfig::Latency::window, duration_codec(), "the window of the mean");
    s.key("min_calls", &SyncAsyncConfig::Latency::min_calls, integer_codec<std::uint32_t>(1, 1'000'000),
          "submits the window needs before its mean counts");
    return s;
  }();
  static const Schema<SyncAsyncConfig::Growth> growth = [] {
    Schema<SyncAsyncConfig::Growth> s(Style::flow);
    s.key("percent", &SyncAsyncConfig::Growth::percent, number_codec(0, 1e6),
          "enter when a second's mean latency is this many percent above the second before (0: no rule)");
    s.key("min_calls", &SyncAsyncConfig::Growth::min_calls, integer_codec<std::uint32_t>(1, 1'000'000),
          "submits each of the two seconds needs");
    return s;
  }();
  static const Schema<SyncAsyncConfig::ErrorRate> errors = [] {
    Schema<SyncAsyncConfig::ErrorRate> s(Style::flow);
    s.key("over", &SyncAsyncConfig::ErrorRate::over, fraction_codec(),
          "enter when more than this share of sync submits failed in the window (0: no rule)");
    s.key("window", &SyncAsyncConfig::ErrorRate::window, duration_codec(), "the window");
    s.key("min_calls", &SyncAsyncConfig::ErrorRate::min_calls, integer_codec<std::uint32_t>(1, 1'000'000),
          "submits the window needs");
    return s;
  }();
  static const Schema<SyncAsyncConfig> schema = [] {
    Schema<SyncAsyncConfig> s(Style::flow,
                              "When a pod stops sending single messages in the client's request and lets its async "
                              "workers send them from the store, and when it goes back. Judged per pod.");
    s.key("enabled", &SyncAsyncConfig::enabled, flag_codec(), "`false`: always sync");
    s.key("latency", &SyncAsyncConfig::latency, map_codec(latency), "the latency rule");
    s.key("growth", &SyncAsyncConfig::growth, map_codec(growth), "the growth rule");
    s.key("error_rate", &SyncAsyncConfig::error_rate, map_codec(errors), "the error-rate rule");
    s.key("exit", &SyncAsyncConfig::exit, choice_codec(kExits),
          "`after`: leave async mode `after` entering it; `probe`: keep every `probe_every`-th send sync and "
          "leave after `min_probes` good ones in a row");
    s.key("after", &SyncAsyncConfig::after, duration_codec(), "exit after");
    s.key("probe_every", &SyncAsyncConfig::probe_every, integer_codec(SyncAsyncConfig::kProbeEvery),
          "exit probe: one send in this many stays sync");
    s.key("min_probes", &SyncAsyncConfig::min_probes, integer_codec(SyncAsyncConfig::kMinProbes),
          "exit probe: good probes in a row that end async mode");
    return s;
  }();
  return schema;
}

// "HH:MM", minutes after midnight, for `signed_offset` false; "+HH:MM" / "-HH:MM", minutes east of
// UTC, for true.
Codec<std::int32_t> clock_codec(bool signed_offset) {
  return {signed_offset ? "UTC offset, -12:00 to +14:00" : "time of day, 00:00 to 23:59",
          [signed_offset](const Reader& r, const YAML::Node& n, const std::string& p, std::int32_t& v) {
            const std::string text = r.scalar(n, p, signed_offset ? "a UTC offset such as +08:00" : "a time such as 21:00");
            std::string_view t = text;
            int sign = 1;
            if (signed_offset) {
              if (t.empty() || (t[0] != '+' && t[0] != '-')) r.fail(n, p, "expected a UTC offset such as +08:00 or -05:00, got '" + text + "'");
              sign = t[0] == '-' ? -1 : 1;
              t.remove_prefix(1);
            }
            const bool shape = t.size() == 5 && t[2] == ':' && std::isdigit(static_cast<unsigned char>(t[0])) &&
                               std::isdigit(static_cast<unsigned char>(t[1])) && std::isdigit(static_cast<unsigned char>(t[3])) &&
                               std::isdigit(static_cast<unsigned char>(t[4]));
            const int hours = shape ? (t[0] - '0') * 10 + (t[1] - '0') : 99;
            const int minutes = shape ? (t[3] - '0') * 10 + (t[4] - '0') : 99;
            const bool in_range = signed_offset ? (hours <= 14 && minutes < 60 && (sign > 0 || hours <= 12))
                                                : (hours < 24 && minutes < 60);
            if (!shape || !in_range) {
              r.fail(n, p, std::string(signed_offset ? "expected a UTC offset from -12:00 to +14:00" : "expected a time of day from 00:00 to 23:59") +
                               ", got '" + text + "'");
            }
            v = sign * (hours * 60 + minutes);
          },
          [signed_offset](YAML::Emitter& e, const std::int32_t& v, const std::int32_t&) {
            const std::int32_t a = v < 0 ? -v : v;
            char buf[32];
            std::snprintf(buf, sizeof buf, "%s%02d:%02d", signed_offset ? (v < 0 ? "-" : "+") : "", static_cast<int>(a / 60 % 100),
                          static_cast<int>(a % 60));
            e << YAML::DoubleQuoted << std::string(buf);
          },
          {}};
}

const Schema<model::MarketingConfig>& marketing_schema() {
  static const Schema<model::QuietHours> quiet = [] {
    Schema<model::QuietHours> s(Style::flow);
    s.key("from", &model::QuietHours::from, clock_codec(false), "quiet from, the recipient's local time");
    s.key("to", &model::QuietHours::to, clock_codec(false), "quiet until (may be past midnight; equal to `from`: never quiet)");
    return s;
  }();
  static const Schema<model::FrequencyCap> cap = [] {
    Schema<model::FrequencyCap> s(Style::flow);
    s.key("count", &model::FrequencyCap::count, integer_codec<std::uint32_t>(0, 1'000'000),
          "marketing messages one recipient may get in any `per` (0: no cap)");
    s.key("per", &model::FrequencyCap::per, duration_codec(), "the rolling window");
    return s;
  }();
  static const Schema<model::MarketingConfig> schema = [] {
    Schema<model::MarketingConfig> s(Style::flow,
                                     "Marketing's rules, judged before every submit of a marketing message: opt-outs, "
                                     "the recipient's quiet hours (deferred to their end), the frequency cap "
                                     "(suppressed); and how campaigns are expanded.");
    s.key("quiet_hours", &model::MarketingConfig::quiet_hours, map_codec(quiet), "no marketing in these local hours");
    s.key("frequency_cap", &model::MarketingConfig::cap, map_codec(cap), "per-recipient cap");
    s.key("chunk", &model::MarketingConfig::chunk, integer_codec(model::MarketingConfig::kChunk),
          "directory users a campaign's chunk reads; its messages are accepted in one transaction");
    s.key("every", &model::MarketingConfig::every, duration_codec(), "how often a campaign's next chunk is expanded");
    return s;
  }();
  return schema;
}

const Schema<DirectorySpec>& directory_schema() {
  static const Schema<DirectorySpec> schema = [] {
    Schema<DirectorySpec> s(Style::block,
                            "The user directory campaigns choose from. Each user's attributes are drawn from the seed; "
                            "numbers run from +4470000000000 up.");
    s.key("users", &DirectorySpec::users, integer_codec<std::uint64_t>(0, 1'000'000'000), "users in it");
    s.key("regions", &DirectorySpec::regions, list_codec(name_codec()),
          "region names (at most 64); each user is in one, at random");
    s.key("tags", &DirectorySpec::tags, list_codec(name_codec()), "tag names (at most 64)");
    s.key("utc_offsets", &DirectorySpec::utc_offsets, list_codec(clock_codec(true)),
          "the users' time zones; each user has one, at random");
    s.key("tag_share", &DirectorySpec::tag_share, fraction_codec(), "each tag's share of users");
    s.key("opt_in", &DirectorySpec::opt_in, fraction_codec(), "share who consented to marketing at sign-up (`opt_in`)");
    s.key("opted_out", &DirectorySpec::opted_out, fraction_codec(), "share who had opted out before the run");
    s.key("active_within", &DirectorySpec::active_within, duration_codec(),
          "users were last active at a random time this long before the run");
    s.key("opt_outs", &DirectorySpec::opt_outs, map_codec(arrival_schema()),
          "users (at random) opting out during the run: a rate from `from` to `to`, or a burst", opt::shown("none"));
    s.check([](const Reader& r, const Map& m, DirectorySpec& d) {
      if (d.regions.empty()) r.fail(m["regions"], m.child("regions"), "needs at least one region");
      if (d.regions.size() > relaysim::sms::kMaxDirectoryNames) r.fail(m["regions"], m.child("regions"), "at most 64 regions");
      if (d.tags.size() > relaysim::sms::kMaxDirectoryNames) r.fail(m["tags"], m.child("tags"), "at most 64 tags");
      if (d.utc_offsets.empty()) r.fail(m["utc_offsets"], m.child("utc_offsets"), "needs at least one offset");
      const auto itself = [](const std::string& name) -> const std::string& { return name; };
      unique_names(r, m, "regions", d.regions, itself, "region");
      unique_names(r, m, "tags", d.tags, itself, "tag");
    });
    return s;
  }();
  return schema;
}

const Schema<AdminEvent>& admin_schema() {
  static const Schema<AdminEvent> schema = [] {
    Schema<AdminEvent> s(Style::flow,
                         "What the back office's admin does, and when: `approve` a business's application (or "
                         "approve it again after a revocation: a new grant), `revoke` its grant (every token issued "
                         "so far is refused from then on), `query` its quota and its latest message's status (the "
                         "oracle checks the answers).");
    s.key("at", &AdminEvent::at, time_codec(), "when", opt::required());
    s.key("action", &AdminEvent::action,
          choice_codec<AdminAction>({{"approve", AdminAction::approve}, {"revoke", AdminAction::revoke}, {"query", AdminAction::query}}),
          "what", opt::required());
    s.key("business", &AdminEvent::business, name_codec(), "whose", opt::required());
    return s;
  }();
  return schema;
}

}  // namespace

const Schema<PlatformConfig>& platform_schema() {
  static const Schema<PlatformConfig> schema = [] {
    Schema<PlatformConfig> s(Style::block, "The gateway's policies: what is under test.");
    s.key("pods", &PlatformConfig::pods, integer_codec(PlatformConfig::kPods), "gateway pods, named `pod-0`, ...");
    s.key("concurrency_per_pod", &PlatformConfig::concurrency_per_pod, integer_codec(PlatformConfig::kConcurrencyPerPod),
          "messages a pod's async workers submit at once");
    s.key("send_timeout", &PlatformConfig::send_timeout, duration_codec(),
          "one submit's timeout; past it the outcome is ambiguous (`unknown`)");
    s.key("lease", &PlatformConfig::lease, duration_codec(),
          "how long a claim lasts; must be longer than send_timeout × providers, or a second pod could send a message "
          "whose submits are still in flight");
    s.key("receipt_timeout", &PlatformConfig::receipt_timeout, duration_codec(),
          "how long a receipt may take; a submitted message with none by then ends `unconfirmed`");
    s.key("validity", &PlatformConfig::validity, duration_codec(),
          "how long after its send_at a message may still go out; then it fails as `expired`");
    s.key("on_unknown", &PlatformConfig::on_unknown, choice_codec(model::kOnUnknownNames),
          "a message whose submit timed out: `resend` it later on the same provider (a duplicate SMS is possible, "
          "and attributed), or `fail` it");
    s.key("store_retry", &PlatformConfig::store_retry, duration_codec(),
          "after a store call fails, how long a pod leaves the store alone (at least " +
              write_duration(kMinRetryInterval) + ")");
    s.key("quota_period", &PlatformConfig::quota_period, duration_codec(),
          "quotas are per period of this length from the start of the run");
    s.key("token_lifetime", &PlatformConfig::token_lifetime, duration_codec(PlatformConfig::kTokenLifetime),
          "how long a token is valid");
    s.key("routing", &PlatformConfig::routing, map_codec(routing_schema()), "provider choice and failover");
    s.key("sync_to_async", &PlatformConfig::sync_to_async, map_codec(sync_async_schema()), "the sync-to-async switch");
    s.key("limit", &PlatformConfig::cluster_limit, optional_codec(shared_limit_schema()),
          "the whole cluster's submits, shared through Redis", opt::shown("none"));
    s.key("marketing", &PlatformConfig::marketing, map_codec(marketing_schema()), "marketing's rules");
    return s;
  }();
  return schema;
}

namespace {

const Schema<LoadSegment>& load_schema() {
  static const Schema<LoadSegment> schema = [] {
    Schema<LoadSegment> s(Style::flow,
                          "A segment of the clients' load: a rate from `from` to `to`, or a burst at `at`. Calls go "
                          "round robin to the pods that are up.");
    s.key("business", &LoadSegment::business, name_codec(), "the business whose clients call", opt::required());
    s.key("kind", &LoadSegment::kind, choice_codec(model::kKindNames),
          "`single`: one message; `bulk`: `size` messages in one request; `scheduled`: one message to go out `lead` "
          "after the call; `marketing`: a campaign to the directory users `filter` chooses, from `lead` after the "
          "call; `resend`: a resend of one of the business's messages its client was told had failed (none known: "
          "no call)");
    s.include(&LoadSegment::arrivals, arrival_schema());
    s.key("size", &LoadSegment::size, integer_codec<std::uint32_t>(1, 100'000), "bulk: messages per request");
    s.key("lead", &LoadSegment::lead, duration_codec(), "scheduled: how far ahead send_at is");
    s.key("client_timeout", &LoadSegment::client_timeout, duration_codec(),
          "how long a client waits for its answer before it repeats the request");
    s.key("retries", &LoadSegment::retries, integer_codec<std::uint32_t>(0, 100),
          "times a client repeats a timed-out request, with the same key");
    s.key("duplicates", &LoadSegment::duplicates, fraction_codec(),
          "share of calls that repeat an earlier request exactly (must be answered with the first one's outcome)");
    s.key("bad_tokens", &LoadSegment::bad_tokens, fraction_codec(),
          "share of calls whose token is forged, expired or names a template the business was not granted (must be "
          "refused)");
    s.key("recipients", &LoadSegment::recipients, integer_codec<std::uint64_t>(1, 10'000'000'000),
          "distinct phone numbers the segment sends to");
    s.key("filter", &LoadSegment::filter, text_codec(),
          "marketing: the campaign's filter over the directory, e.g. `region in [north, east] and tags has vip and "
          "last_active < 30d` (docs/design/sms.md has the grammar)");
    return s;
  }();
  return schema;
}

// A marketing segment's filter must parse against the directory's names; an error points at the
// character it is about when the filter is written on one line.
void check_filter(const Reader& r, const YAML::Node& node, const std::string& path, const std::string& filter,
                  const DirectorySpec& directory) {
  const relaysim::sms::Vocabulary vocabulary{directory.regions, directory.tags};
  auto parsed = relaysim::sms::Filter::parse(filter, vocabulary);
  const auto* e = std::get_if<relaysim::sms::FilterError>(&parsed);
  if (e == nullptr) return;
  const std::string problem = e->message + " (at character " + std::to_string(e->column()) + " of the filter)";
  if (!node.IsDefined()) r.fail(node, path, problem);
  YAML::Mark mark = node.Mark();
  if (filter.find('\n') == std::string::npos) {
    const int quote = node.Tag() == "!" ? 1 : 0;  // a quoted scalar's mark is at its opening quote
    mark.column += quote + static_cast<int>(e->offset);
  }
  r.fail_mark(mark, path, problem);
}

}  // namespace

std::vector<model::BusinessPolicy> SmsSpec::policies() const {
  std::vector<model::BusinessPolicy> out;
  for (const BusinessSpec& b : businesses) out.push_back(b.policy);
  return out;
}

const Schema<SmsSpec>& spec_schema() {
  static const Schema<SmsSpec> schema = [] {
    Schema<SmsSpec> s(Style::block, "The SMS gateway's section: its policies, businesses, providers, Redis and load.");
    s.key("platform", &SmsSpec::platform, map_codec(platform_schema()), "the gateway's policies");
    s.key("businesses", &SmsSpec::businesses, list_codec(map_codec(business_schema()), "list, below"),
          "the businesses that send (at least one)", opt::required());
    s.key("providers", &SmsSpec::providers, list_codec(map_codec(provider_schema()), "list, below"),
          "the providers, in routing order (1 to 64)", opt::required());
    s.key("redis", &SmsSpec::redis, map_codec(kv_schema()), "the key-value store shared limits live in");
    s.key("directory", &SmsSpec::directory, map_codec(directory_schema()), "the user directory campaigns choose from",
          opt::shown("none"));
    s.key("admin", &SmsSpec::admin, list_codec(map_codec(admin_schema()), "list, below"),
          "the back office's timed actions", opt::shown("none"));
    s.key("load", &SmsSpec::load, list_codec(map_codec(load_schema()), "list of segments, below"), "the clients",
          opt::shown("no load"));
    s.check([](const Reader& r, const Map& m, SmsSpec& spec) {
      if (spec.businesses.empty()) r.fail(m["businesses"], m.child("businesses"), "needs at least one business");
      if (spec.providers.empty()) r.fail(m["providers"], m.child("providers"), "needs at least one provider");
      if (spec.providers.size() > model::kMaxProviders) {
        r.fail(m["providers"], m.child("providers"), "at most 64 providers");
      }
      for (std::size_t i = 0; i < spec.providers.size(); ++i) {
        if (spec.providers[i].name.empty()) spec.providers[i].name = "provider-" + std::to_string(i);
      }
      unique_names(r, m, "providers", spec.providers, [](const ProviderSpec& p) -> const std::string& { return p.name; }, "provider");
      unique_names(r, m, "businesses", spec.businesses, [](const BusinessSpec& b) -> const std::string& { return b.name; }, "business");
      // A business named by a load segment or an admin event: its index.
      auto business_named = [&](const std::string& name, const char* list, std::size_t i) {
        const auto it = std::find_if(spec.businesses.begin(), spec.businesses.end(),
                                     [&](const BusinessSpec& b) { return b.name == name; });
        if (it == spec.businesses.end()) {
          std::string known;
          for (const BusinessSpec& b : spec.businesses) known += (known.empty() ? "" : ", ") + b.name;
          r.fail(m[list][i]["business"], m.child(list) + "[" + std::to_string(i) + "].business",
                 "no business is named '" + name + "' (businesses: " + known + ")");
        }
        return static_cast<std::uint32_t>(it - spec.businesses.begin());
      };
      for (std::size_t i = 0; i < spec.admin.size(); ++i) {
        spec.admin[i].business_index = business_named(spec.admin[i].business, "admin", i);
      }
      for (std::size_t i = 0; i < spec.load.size(); ++i) {
        LoadSegment& l = spec.load[i];
        l.business_index = business_named(l.business, "load", i);
        if (l.kind == model::Kind::marketing && spec.directory.users == 0) {
          r.fail(m["load"][i]["kind"], m.child("load") + "[" + std::to_string(i) + "].kind",
                 "a marketing segment needs users in the directory (directory.users)");
        }
        if (l.kind == model::Kind::marketing) check_filter(r, m["load"][i]["filter"], m.child("load") + "[" + std::to_string(i) + "].filter", l.filter, spec.directory);
        // A key the segment's kind never reads is a mistake the run would not show.
        const auto only_for = [&](const char* key, bool read) {
          if (!read && m["load"][i].IsMap() && m["load"][i][key].IsDefined()) {
            r.fail(m["load"][i][key], m.child("load") + "[" + std::to_string(i) + "]." + key,
                   "is not read by a " + std::string(to_string(l.kind)) + " segment (size: bulk; lead: scheduled and "
                   "marketing; filter: marketing)");
          }
        };
        only_for("size", l.kind == model::Kind::bulk);
        only_for("lead", l.kind == model::Kind::scheduled || l.kind == model::Kind::marketing);
        only_for("filter", l.kind == model::Kind::marketing);
      }
      m.refuse(model::validate(spec.platform, spec.providers.size()), "platform");
    });
    return s;
  }();
  return schema;
}

const SmsSpec& spec_of(const Scenario& s) {
  const auto* w = dynamic_cast<const SmsSpec*>(&s.spec());
  RELAYSIM_ASSERT(w != nullptr, "a scenario of the SMS system");
  return *w;
}

SmsSpec& spec_of(Scenario& s) {
  auto* w = dynamic_cast<SmsSpec*>(&s.spec());
  RELAYSIM_ASSERT(w != nullptr, "a scenario of the SMS system");
  return *w;
}

}  // namespace relaysim::sim::sms
