#include "sim/webhook/spec.h"

#include <algorithm>

#include "sim/scenario/units.h"
#include "sim/world/policies.h"
#include "sim/system.h"

namespace relaysim::sim::webhook {

namespace model = relaysim::webhook;

namespace {

const std::vector<std::pair<std::string, model::Verdict>> kVerdicts = {
    {"delivered", model::Verdict::delivered}, {"retry", model::Verdict::retry}, {"terminal", model::Verdict::terminal}};

const Schema<model::RetryPolicy>& retry_schema() {
  static const Schema<model::RetryPolicy> schema = [] {
    Schema<model::RetryPolicy> s(Style::flow,
                                 "Retry timing, in this order: the backoff delay with jitter; `Retry-After` (capped at "
                                 "`retry_after_max`) as a floor; then the clamp to `deadline_at`. No attempt starts "
                                 "after `deadline_at`; a request whose `Retry-After` reaches past its deadline is "
                                 "dead-lettered at the deadline, not attempted early.");
    s.include(&model::RetryPolicy::backoff, backoff_schema());
    s.key("deadline", &model::RetryPolicy::deadline, duration_codec(),
          "the total retry window: `deadline_at = created_at + deadline`");
    s.key("retry_after_max", &model::RetryPolicy::retry_after_max, duration_codec(),
          "the most a `Retry-After` header is honoured");
    return s;
  }();
  return schema;
}

// `classification`: overrides keyed by a status ("404"), a class (4xx), timeout, connect_error or
// dns_error.
Codec<model::ClassificationTable> classification_codec() {
  using model::ClassificationTable;
  using model::Verdict;
  auto verdict_name = [](Verdict v) -> const char* {
    return v == Verdict::delivered ? "delivered" : v == Verdict::terminal ? "terminal" : "retry";
  };
  return {"mapping of result to `delivered` | `retry` | `terminal`",
          [](const Reader& r, const YAML::Node& n, const std::string& path, ClassificationTable& t) {
            const Map m(r, n, path, {});  // any keys: statuses and classes; duplicates are refused
            for (auto it = n.begin(); it != n.end(); ++it) {
              const std::string key = it->first.Scalar();
              const std::string p = m.child(key);
              m.has(key);
              const Verdict v = r.choice(it->second, p, kVerdicts);
              const bool digits = key.size() == 3 && std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
              const bool network = key == "timeout" || key == "connect_error" || key == "dns_error";
              if (network && v == Verdict::delivered) {
                r.fail(it->second, p, "a request that never got an answer cannot be delivered: retry or terminal");
              }
              if (key == "timeout") {
                t.timeout = v;
              } else if (key == "connect_error") {
                t.connect_error = v;
              } else if (key == "dns_error") {
                t.dns_error = v;
              } else if (key.size() == 3 && key[0] >= '1' && key[0] <= '5' && key.substr(1) == "xx") {
                t.by_class[static_cast<std::size_t>(key[0] - '0')] = v;
              } else if (digits && key[0] >= '1' && key[0] <= '5') {
                t.by_status[std::stoi(key)] = v;
              } else {
                r.fail(it->first, p,
                       "expected a status code (\"404\", 100 to 599), a class (4xx), timeout, connect_error or dns_error");
              }
            }
          },
          [verdict_name](YAML::Emitter& e, const ClassificationTable& c, const ClassificationTable& d) {
            e << YAML::Flow << YAML::BeginMap;
            for (std::size_t k = 1; k < c.by_class.size(); ++k) {
              if (c.by_class[k] != d.by_class[k]) {
                e << YAML::Key << std::to_string(k) + "xx" << YAML::Value << verdict_name(c.by_class[k]);
              }
            }
            for (const auto& [status, v] : c.by_status) {
              const auto it = d.by_status.find(status);
              if (it == d.by_status.end() || it->second != v) {
                e << YAML::Key << std::to_string(status) << YAML::Value << verdict_name(v);
              }
            }
            if (c.timeout != d.timeout) e << YAML::Key << "timeout" << YAML::Value << verdict_name(c.timeout);
            if (c.connect_error != d.connect_error) {
              e << YAML::Key << "connect_error" << YAML::Value << verdict_name(c.connect_error);
            }
            if (c.dns_error != d.dns_error) e << YAML::Key << "dns_error" << YAML::Value << verdict_name(c.dns_error);
            e << YAML::EndMap;
          },
          {}};
}

Codec<std::optional<Duration>> retention_codec() {
  return {"`forever` or a duration",
          [](const Reader& r, const YAML::Node& n, const std::string& p, std::optional<Duration>& v) {
            if (r.scalar(n, p, "forever or a duration") == "forever") {
              v.reset();
              return;
            }
            Duration d{};
            if (!parse_duration(n.Scalar(), d)) {
              double seconds = 0;
              if (parse_duration_seconds(n.Scalar(), seconds)) {
                r.fail(n, p, "must be forever or at most 3650d (ten years), got '" + n.Scalar() + "'");
              }
              r.fail(n, p, "expected forever or a duration such as 10m or 1h, got '" + n.Scalar() + "'");
            }
            v = d;
          },
          [](YAML::Emitter& e, const std::optional<Duration>& v, const std::optional<Duration>&) {
            e << (v ? write_duration(*v) : std::string("forever"));
          },
          {}};
}

const Schema<model::PlatformConfig>& url_cache_schema() {
  static const Schema<model::PlatformConfig> schema = [] {
    Schema<model::PlatformConfig> s(Style::flow);
    s.key("ttl", &model::PlatformConfig::url_cache_ttl, duration_codec(),
          "how long a resolved URL is reused (never longer); 0 turns the cache off");
    s.key("max_entries", &model::PlatformConfig::url_cache_max_entries, integer_codec<std::size_t>(1, 100'000'000),
          "entries per pod");
    return s;
  }();
  return schema;
}

// The platform's own validation (model/webhook/config.h): at the key when it is in the file, else
// at the nearest enclosing one.
void check_platform(const Reader&, const Map& m, model::PlatformConfig& p) { m.refuse(model::validate(p)); }


const Schema<ServiceBSpec>& serviceb_schema() {
  static const Schema<UrlChange> change = [] {
    Schema<UrlChange> s(Style::flow);
    s.key("at", &UrlChange::at, time_codec(), "when", opt::required());
    s.key("fraction", &UrlChange::fraction, fraction_codec(), "the share of cxids (chosen by the seed) that get a new URL version");
    return s;
  }();
  static const Schema<ServiceBSpec> schema = [] {
    Schema<ServiceBSpec> s(Style::block, "The external directory that holds each cxid's destination URL.");
    s.key("latency", &ServiceBSpec::latency, latency_codec(), "lookup latency");
    s.key("error_rate", &ServiceBSpec::error_rate, fraction_codec(), "share of lookups that fail outside outages");
    s.key("outages", &ServiceBSpec::outages, list_codec(map_codec(outage_schema()), "list of windows with a mode, below"),
          "when ServiceB is down", opt::shown("none"));
    s.key("url_changes", &ServiceBSpec::url_changes, list_codec(map_codec(change), "list, below"),
          "moments when cxids get new URLs", opt::shown("none"));
    s.key("unknown_cxids", &ServiceBSpec::unknown_cxids, fraction_codec(),
          "share of cxids ServiceB has never heard of: their requests fail with reason `no_url`");
    return s;
  }();
  return schema;
}

const Schema<EndpointGroup>& endpoint_schema() {
  static const Schema<Incident> incident = [] {
    Schema<Incident> s(Style::flow);
    s.include(&Incident::window, window_schema());
    s.key("rate", &Incident::rate, fraction_codec(), "share of requests answered with `status`");
    s.key("status", &Incident::status, integer_codec<int>(300, 599), "the status answered (an error: 300 to 599)");
    s.key("retry_after", &Incident::retry_after, duration_codec(), "a `Retry-After` header sent with it",
          opt::shown("none"));
    return s;
  }();
  static const Schema<EndpointGroup> errors = [] {
    Schema<EndpointGroup> s(Style::flow);
    s.key("rate", &EndpointGroup::error_rate, fraction_codec(), "share of requests answered with `status`",
          opt::required());
    s.key("status", &EndpointGroup::error_status, integer_codec<int>(300, 599), "the status answered (an error: 300 to 599)");
    s.key("retry_after", &EndpointGroup::retry_after, duration_codec(), "a `Retry-After` header sent with it",
          opt::shown("none"));
    return s;
  }();
  static const Schema<EndpointGroup> schema = [] {
    Schema<EndpointGroup> s(Style::flow, "A group of endpoints with one behaviour.");
    s.key("name", &EndpointGroup::name, name_codec(), "the group's name", opt::shown("`group-N`"));
    s.key("count", &EndpointGroup::count, integer_codec<std::uint32_t>(1, kMaxEndpoints), "endpoints in the group");
    s.key("latency", &EndpointGroup::latency, latency_codec(), "time to process and answer");
    s.section("errors", errors, "a steady share of error responses");
    s.key("blackhole", &EndpointGroup::blackhole_rate, fraction_codec(),
          "share of requests accepted and never answered, not processed: a timeout");
    s.key("lost_responses", &EndpointGroup::lost_response_rate, fraction_codec(),
          "share processed whose response never arrives: a timeout after the endpoint did the work");
    s.key("dns_failures", &EndpointGroup::dns_failure_rate, fraction_codec(), "share whose host does not resolve");
    s.key("down", &EndpointGroup::down, list_codec(map_codec(window_schema()), "list of windows"),
          "when connections are refused; `{at: 0s}` is down for ever", opt::shown("none"));
    s.key("incidents", &EndpointGroup::incidents, list_codec(map_codec(incident), "list, below"),
          "error episodes, such as a 429 storm", opt::shown("none"));
    return s;
  }();
  return schema;
}

const Schema<WebhookSpec>& world_schema() {
  static const Schema<WebhookSpec> schema = [] {
    Schema<WebhookSpec> s(Style::block, "The world around the platform: ServiceB and the endpoints.");
    s.key("cxids", &WebhookSpec::cxids, integer_codec<std::uint32_t>(1, kMaxCxids),
          "tenants (cxids `cx0`, `cx1`, ...); cxid i delivers to endpoint i mod the number of endpoints, so there "
          "must be enough of them to reach every group",
          opt::shown("one per endpoint"));
    s.key("serviceb", &WebhookSpec::serviceb, map_codec(serviceb_schema()), "the URL directory");
    s.key("endpoints", &WebhookSpec::endpoints, list_codec(map_codec(endpoint_schema()), "list of groups, below"),
          "the receivers of webhooks, in groups (at least one, at most " + std::to_string(kMaxGroups) + "; at most " +
              std::to_string(kMaxEndpoints) + " endpoints in all)",
          opt::required());
    s.check([](const Reader& r, const Map& m, WebhookSpec& w) {
      if (w.endpoints.empty()) r.fail(m["endpoints"], m.child("endpoints"), "needs at least one endpoint group");
      if (w.endpoints.size() > kMaxGroups) {
        r.fail(m["endpoints"][kMaxGroups], m.child("endpoints") + "[" + std::to_string(kMaxGroups) + "]",
               "is one endpoint group more than the " + std::to_string(kMaxGroups) + " a world may have");
      }
      std::uint64_t total = 0;
      for (std::size_t i = 0; i < w.endpoints.size(); ++i) {
        total += w.endpoints[i].count;
        if (total > kMaxEndpoints) {
          r.fail(m["endpoints"][i], m.child("endpoints") + "[" + std::to_string(i) + "].count",
                 "brings the endpoints to " + std::to_string(total) + ", more than the " +
                     std::to_string(kMaxEndpoints) + " a world may have");
        }
        if (w.endpoints[i].name.empty()) w.endpoints[i].name = "group-" + std::to_string(i);
      }
      unique_names(r, m, "endpoints", w.endpoints, [](const EndpointGroup& g) -> const std::string& { return g.name; },
                   "endpoint group");
      // Cxid i delivers to endpoint i mod the endpoints: with fewer cxids than endpoints, the
      // groups past the last cxid would never get a request, and what they test would not happen.
      std::uint64_t first = 0;
      for (const EndpointGroup& g : w.endpoints) {
        if (w.cxids != 0 && first >= w.cxids) {
          r.fail(m["cxids"], m.child("cxids"),
                 std::to_string(w.cxids) + " cxids reach only the first " + std::to_string(w.cxids) +
                     " endpoints (cxid i delivers to endpoint i), so group '" + g.name +
                     "' would never get a request; give at least " + std::to_string(first + 1) +
                     " cxids, or leave cxids out for one per endpoint");
        }
        first += g.count;
      }
    });
    return s;
  }();
  return schema;
}

const Schema<LoadSegment>& load_schema() {
  static const Schema<LoadSegment> schema = [] {
    Schema<LoadSegment> s(Style::flow,
                          "A segment of the clients' load: a rate from `from` to `to`, or a burst at `at`. Calls go round "
                          "robin to the pods that are up; a call when no pod is up is rejected (not acknowledged).");
    s.include(&LoadSegment::arrivals, arrival_schema());
    s.key("duplicates", &LoadSegment::duplicates, fraction_codec(),
          "share of calls that repeat an earlier call exactly (must be answered with the original request)");
    s.key("conflicts", &LoadSegment::conflicts, fraction_codec(),
          "share that repeat an earlier key with another payload (must be refused as a conflict)");
    s.key("shared_ids", &LoadSegment::shared_ids, fraction_codec(),
          "share that reuse an earlier call's request_id under another cxid: a new key (must be stored as a new request)");
    s.key("tenant_skew", &LoadSegment::tenant_skew, number_codec(0, 10),
          "how new calls spread over the cxids: 0 evenly; s > 0 by Zipf's law, the k-th busiest tenant getting calls in "
          "proportion to 1 / k^s (1: the classic skew, where the busiest of 20,000 tenants gets about a tenth of the calls); which cxids "
          "are the busy ones is a fixed shuffle, not their order");
    s.check([](const Reader& r, const Map& m, LoadSegment& l) {
      if (l.duplicates + l.conflicts + l.shared_ids > 1.0) {
        const char* last = m.has("shared_ids") ? "shared_ids" : m.has("conflicts") ? "conflicts" : "duplicates";
        r.fail(m[last], m.child(last), "duplicates + conflicts + shared_ids must not exceed 100%");
      }
    });
    return s;
  }();
  return schema;
}

const Schema<ReplayBatch>& replay_schema() {
  static const Schema<ReplayBatch> schema = [] {
    Schema<ReplayBatch> s(Style::flow,
                          "A batch of manual replays: at `at`, `count` requests whose tenants were told they failed or were "
                          "dead-lettered, picked at random from the latest " + std::to_string(kReplayNoticesKept) +
                              " of those notices (one may come up again), are replayed through a pod that is up (none up: "
                              "that replay is lost). A replayed request is pending again with a fresh deadline.");
    s.key("at", &ReplayBatch::at, time_codec(), "when", opt::required());
    s.key("count", &ReplayBatch::count, integer_codec<std::uint32_t>(1, 1'000'000), "replays in the batch");
    return s;
  }();
  return schema;
}

}  // namespace

const Schema<model::PlatformConfig>& platform_schema() {
  using model::PlatformConfig;
  static const Schema<PlatformConfig> schema = [] {
    Schema<PlatformConfig> s(Style::block, "The platform's policies: what is under test.");
    s.key("pods", &PlatformConfig::pods, integer_codec(PlatformConfig::kPods),
          "platform pods, named `pod-0`, `pod-1`, ...");
    s.key("concurrency_per_pod", &PlatformConfig::concurrency_per_pod, integer_codec(PlatformConfig::kConcurrencyPerPod),
          "requests a pod works on at once");
    s.key("lease", &PlatformConfig::lease, duration_codec(),
          "how long a claim lasts; must be longer than `lookup_timeout + http_timeout`, or a second pod could start a "
          "duplicate delivery while the first attempt is still in flight (the scenario is refused)");
    s.key("allow_unsafe_lease", &PlatformConfig::allow_unsafe_lease, flag_codec(),
          "`true` skips the lease check above, to reproduce the duplicate-delivery bug on purpose");
    s.key("lookup_timeout", &PlatformConfig::lookup_timeout, duration_codec(), "timeout of one ServiceB lookup");
    s.key("http_timeout", &PlatformConfig::http_timeout, duration_codec(), "timeout of one delivery attempt");
    s.key("retry", &PlatformConfig::retry, map_codec(retry_schema()), "the delivery retry policy");
    s.key("dependency_backoff", &PlatformConfig::dependency_backoff, map_codec(backoff_schema()),
          "how requests blocked on ServiceB are deferred; deferrals are not attempts and still end at the deadline. While a pod's breaker is open its blocked requests wait for the breaker, whatever their backoff says");
    s.section("url_cache", url_cache_schema(), "the per-pod cache of ServiceB's answers");
    s.key("serviceb_breaker", &PlatformConfig::serviceb_breaker, map_codec(breaker_schema()),
          "the circuit breaker around ServiceB, per pod");
    s.key("store_retry", &PlatformConfig::store_retry, duration_codec(),
          "after a store call fails (busy, full, an I/O error), how long a pod leaves the store alone before it "
          "asks again (at least " + write_duration(model::kMinRetryInterval) + ")");
    s.key("classification", &PlatformConfig::classification, classification_codec(),
          "overrides of how results are classified. Default: 2xx delivered; 408, 425, 429 and 5xx retry; 410 terminal "
          "(reason `gone`); other 4xx terminal (reason `client_error`); 1xx and 3xx retry (a redirect is not "
          "followed); timeouts, refused connections and DNS errors retry. A status beats a class; a terminal "
          "verdict for anything but a 4xx has reason `rejected`",
          opt::shown("see meaning"));
    s.key("max_payload_bytes", &PlatformConfig::max_payload_bytes, integer_codec<std::size_t>(model::kMinPayloadLimit, 64u << 20),
          "the largest payload ingest accepts");
    s.key("retention", &PlatformConfig::retention, retention_codec(),
          "how long a finished request and its idempotency key stay in the in-memory store; a create repeated after "
          "that makes a new request. Long runs set it so memory follows the open requests; the oracle forgets "
          "finished requests after the same time. The SQLite store keeps everything (and so does the oracle then)");
    s.check(check_platform);
    return s;
  }();
  return schema;
}

const Schema<WebhookSpec>& spec_schema() {
  static const Schema<WebhookSpec> schema = [] {
    Schema<WebhookSpec> s(Style::block, "The webhook platform's section: its policies, its world and its load.");
    s.key("platform", &WebhookSpec::platform, map_codec(platform_schema()), "the platform's policies");
    s.section("world", world_schema(), "ServiceB and the endpoints (required)");
    s.last().required = true;
    s.last().always_write = true;
    s.key("load", &WebhookSpec::load, list_codec(map_codec(load_schema()), "list of segments, below"),
          "the clients", opt::shown("no load"));
    s.key("replays", &WebhookSpec::replays, list_codec(map_codec(replay_schema()), "list of batches, below"),
          "an operator's manual replays of failed and dead-lettered requests", opt::shown("none"));
    return s;
  }();
  return schema;
}

const WebhookSpec& spec_of(const Scenario& s) {
  const auto* w = dynamic_cast<const WebhookSpec*>(&s.spec());
  RELAYSIM_ASSERT(w != nullptr, "a scenario of the webhook system");
  return *w;
}

WebhookSpec& spec_of(Scenario& s) {
  auto* w = dynamic_cast<WebhookSpec*>(&s.spec());
  RELAYSIM_ASSERT(w != nullptr, "a scenario of the webhook system");
  return *w;
}

Scenario make_scenario() {
  Scenario s;
  s.system = find_system("webhook");
  RELAYSIM_ASSERT(s.system != nullptr, "the webhook system is registered");
  s.set_spec(std::make_unique<WebhookSpec>());
  return s;
}

}  // namespace relaysim::sim::webhook
