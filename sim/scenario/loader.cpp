#include "sim/scenario/loader.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/scenario/expect.h"
#include "sim/scenario/units.h"

namespace relaysim::sim {

using webhook::Verdict;

ScenarioError::ScenarioError(std::string file, int line, int column, std::string key, std::string problem)
    : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) + ":" + std::to_string(column) : "") + ": " +
                         (key.empty() ? "" : key + ": ") + problem),
      file_(std::move(file)), line_(line), column_(column), key_(std::move(key)), problem_(std::move(problem)) {}

namespace {

// Where we are: the file, and the dotted key path of the node being read.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& path, const std::string& problem) const {
    const YAML::Mark m = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
    throw ScenarioError(file_, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, path, problem);
  }
  [[noreturn]] void fail_mark(const YAML::Mark& m, const std::string& path, const std::string& problem) const {
    throw ScenarioError(file_, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, path, problem);
  }

  std::string scalar(const YAML::Node& n, const std::string& path, const char* expected) const {
    if (!n.IsScalar()) fail(n, path, std::string("expected ") + expected);
    return n.Scalar();
  }
  Duration duration(const YAML::Node& n, const std::string& path) const {
    Duration d{};
    if (!parse_duration(scalar(n, path, "a duration"), d)) {
      fail(n, path, "expected a duration such as 250ms, 30s, 15m, 2h or 1d, got '" + n.Scalar() + "'");
    }
    return d;
  }
  Time time(const YAML::Node& n, const std::string& path) const { return Time{} + duration(n, path); }
  double rate(const YAML::Node& n, const std::string& path) const {
    double r = 0;
    if (!parse_rate(scalar(n, path, "a rate"), r)) {
      fail(n, path, "expected a rate such as 800/s, 30/min or 100/h, got '" + n.Scalar() + "'");
    }
    return r;
  }
  double fraction(const YAML::Node& n, const std::string& path) const {
    double f = 0;
    if (!parse_fraction(scalar(n, path, "a fraction"), f)) {
      fail(n, path, "expected a fraction between 0% and 100% (or 0 to 1), got '" + n.Scalar() + "'");
    }
    return f;
  }
  double number(const YAML::Node& n, const std::string& path, double lo, double hi) const {
    const std::string s = scalar(n, path, "a number");
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size()) fail(n, path, "expected a number, got '" + s + "'");
    if (v < lo || v > hi) {
      std::ostringstream o;
      o << "must be between " << lo << " and " << hi << ", got " << s;
      fail(n, path, o.str());
    }
    return v;
  }
  std::uint64_t integer(const YAML::Node& n, const std::string& path, std::uint64_t lo, std::uint64_t hi) const {
    const std::string s = scalar(n, path, "a whole number");
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      if (!s.empty() && s[0] != '-') v = std::stoull(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size()) fail(n, path, "expected a whole number, got '" + s + "'");
    if (v < lo || v > hi) {
      fail(n, path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + s);
    }
    return v;
  }
  template <class E>
  E choice(const YAML::Node& n, const std::string& path, std::initializer_list<std::pair<const char*, E>> options) const {
    const std::string s = scalar(n, path, "a name");
    std::string names;
    for (const auto& [name, value] : options) {
      if (s == name) return value;
      names += names.empty() ? "" : ", ";
      names += name;
    }
    fail(n, path, "expected one of " + names + ", got '" + s + "'");
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// A YAML mapping read key by key. finish() rejects every key nobody asked for, suggesting the
// closest known key when one is near.
class Map {
 public:
  Map(const Reader& r, const YAML::Node& node, std::string path, std::vector<std::string> known)
      : r_(r), node_(node), path_(std::move(path)), known_(std::move(known)) {
    if (!node.IsMap()) r.fail(node, path_.empty() ? "(top level)" : path_, "expected a mapping of keys to values");
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string k = it->first.Scalar();
      if (!seen.insert(k).second) r.fail(it->first, child(k), "the key appears twice");
    }
  }
  std::string child(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  // The value at `key`, or an undefined node when absent.
  YAML::Node operator[](const std::string& key) const {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.Scalar() == key) return it->second;
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }
  bool has(const std::string& key) const { return (*this)[key].IsDefined() && !(*this)[key].IsNull(); }
  YAML::Node required(const std::string& key) const {
    if (!(*this)[key].IsDefined()) r_.fail(node_, child(key), "is required but missing");
    return (*this)[key];
  }
  void check_keys() const {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const std::string k = it->first.Scalar();
      if (std::find(known_.begin(), known_.end(), k) != known_.end()) continue;
      std::string best;
      std::size_t best_d = SIZE_MAX;
      for (const auto& candidate : known_) {
        const std::size_t d = edit_distance(k, candidate);
        if (d < best_d) {
          best_d = d;
          best = candidate;
        }
      }
      std::string problem = "unknown key";
      if (best_d <= std::max<std::size_t>(2, k.size() / 3)) problem += "; did you mean '" + best + "'?";
      std::string all;
      for (const auto& c : known_) all += (all.empty() ? "" : ", ") + c;
      problem += " (expected one of: " + all + ")";
      r_.fail(it->first, child(k), problem);
    }
  }

 private:
  const Reader& r_;
  YAML::Node node_;
  std::string path_;
  std::vector<std::string> known_;
};

LatencySpec read_latency(const Reader& r, const YAML::Node& n, const std::string& path) {
  Map m(r, n, path, {"p50", "p99"});
  m.check_keys();
  LatencySpec l;
  l.p50 = r.duration(m.required("p50"), m.child("p50"));
  l.p99 = m.has("p99") ? r.duration(m["p99"], m.child("p99")) : l.p50;
  if (l.p99 < l.p50) r.fail(m["p99"], m.child("p99"), "must not be below p50");
  if (l.p50 <= Duration::zero()) r.fail(m["p50"], m.child("p50"), "must be positive");
  return l;
}

Window read_window(const Reader& r, const Map& m) {
  Window w;
  w.at = r.time(m.required("at"), m.child("at"));
  if (m.has("for")) w.length = r.duration(m["for"], m.child("for"));
  return w;
}

template <class F>
void each(const Reader& r, const YAML::Node& n, const std::string& path, F&& f) {
  if (!n.IsSequence()) r.fail(n, path, "expected a list");
  for (std::size_t i = 0; i < n.size(); ++i) f(n[i], path + "[" + std::to_string(i) + "]");
}

void read_backoff(const Reader& r, const Map& m, BackoffPolicy& b) {
  if (m.has("backoff")) {
    b.kind = r.choice<BackoffKind>(m["backoff"], m.child("backoff"),
                                   {{"exponential", BackoffKind::exponential}, {"fixed", BackoffKind::fixed}});
  }
  if (m.has("initial")) b.initial = r.duration(m["initial"], m.child("initial"));
  if (m.has("multiplier")) b.multiplier = r.number(m["multiplier"], m.child("multiplier"), 1.0, 100.0);
  if (m.has("max_interval")) b.max_interval = r.duration(m["max_interval"], m.child("max_interval"));
  if (m.has("jitter")) {
    b.jitter = r.choice<Jitter>(m["jitter"], m.child("jitter"),
                                {{"none", Jitter::none}, {"full", Jitter::full}, {"equal", Jitter::equal},
                                 {"decorrelated", Jitter::decorrelated}});
  }
}

void read_platform(const Reader& r, const YAML::Node& n, webhook::PlatformConfig& p) {
  Map m(r, n, "platform",
        {"pods", "concurrency_per_pod", "lease", "allow_unsafe_lease", "lookup_timeout", "http_timeout", "retry", "dependency_backoff",
         "url_cache", "serviceb_breaker", "classification", "max_payload_bytes", "retention"});
  m.check_keys();
  if (m.has("pods")) p.pods = static_cast<std::uint32_t>(r.integer(m["pods"], m.child("pods"), 1, 1024));
  if (m.has("concurrency_per_pod")) {
    p.concurrency_per_pod =
        static_cast<std::uint32_t>(r.integer(m["concurrency_per_pod"], m.child("concurrency_per_pod"), 1, 100000));
  }
  if (m.has("lease")) p.lease = r.duration(m["lease"], m.child("lease"));
  if (m.has("allow_unsafe_lease")) {
    p.allow_unsafe_lease = r.choice<bool>(m["allow_unsafe_lease"], m.child("allow_unsafe_lease"),
                                          {{"true", true}, {"false", false}});
  }
  if (m.has("lookup_timeout")) p.lookup_timeout = r.duration(m["lookup_timeout"], m.child("lookup_timeout"));
  if (m.has("http_timeout")) p.http_timeout = r.duration(m["http_timeout"], m.child("http_timeout"));
  if (m.has("retry")) {
    Map rm(r, m["retry"], "platform.retry",
           {"backoff", "initial", "multiplier", "max_interval", "jitter", "deadline", "retry_after_max"});
    rm.check_keys();
    read_backoff(r, rm, p.retry.backoff);
    if (rm.has("deadline")) p.retry.deadline = r.duration(rm["deadline"], rm.child("deadline"));
    if (rm.has("retry_after_max")) p.retry.retry_after_max = r.duration(rm["retry_after_max"], rm.child("retry_after_max"));
  }
  if (m.has("dependency_backoff")) {
    Map dm(r, m["dependency_backoff"], "platform.dependency_backoff",
           {"backoff", "initial", "multiplier", "max_interval", "jitter"});
    dm.check_keys();
    read_backoff(r, dm, p.dependency_backoff);
  }
  if (m.has("url_cache")) {
    Map cm(r, m["url_cache"], "platform.url_cache", {"ttl", "max_entries"});
    cm.check_keys();
    if (cm.has("ttl")) p.url_cache_ttl = r.duration(cm["ttl"], cm.child("ttl"));
    if (cm.has("max_entries")) {
      p.url_cache_max_entries = r.integer(cm["max_entries"], cm.child("max_entries"), 1, 100'000'000);
    }
  }
  if (m.has("serviceb_breaker")) {
    Map bm(r, m["serviceb_breaker"], "platform.serviceb_breaker",
           {"window", "min_calls", "failure_rate", "open_for", "half_open_probes"});
    bm.check_keys();
    BreakerConfig& b = p.serviceb_breaker;
    if (bm.has("window")) b.window = r.duration(bm["window"], bm.child("window"));
    if (bm.has("min_calls")) b.min_calls = static_cast<std::uint32_t>(r.integer(bm["min_calls"], bm.child("min_calls"), 1, 1'000'000));
    if (bm.has("failure_rate")) b.failure_rate = r.fraction(bm["failure_rate"], bm.child("failure_rate"));
    if (bm.has("open_for")) b.open_for = r.duration(bm["open_for"], bm.child("open_for"));
    if (bm.has("half_open_probes")) {
      b.half_open_probes = static_cast<std::uint32_t>(r.integer(bm["half_open_probes"], bm.child("half_open_probes"), 1, 10'000));
    }
  }
  if (m.has("classification")) {
    const YAML::Node cn = m["classification"];
    if (!cn.IsMap()) r.fail(cn, "platform.classification", "expected a mapping such as {\"404\": retry, 3xx: terminal}");
    for (auto it = cn.begin(); it != cn.end(); ++it) {
      const std::string key = it->first.Scalar();
      const std::string path = "platform.classification." + key;
      const Verdict v = r.choice<Verdict>(it->second, path,
                                          {{"delivered", Verdict::delivered}, {"retry", Verdict::retry},
                                           {"terminal", Verdict::terminal}});
      auto& t = p.classification;
      if (key == "timeout") t.timeout = v;
      else if (key == "connect_error") t.connect_error = v;
      else if (key == "dns_error") t.dns_error = v;
      else if (key.size() == 3 && key[0] >= '1' && key[0] <= '5' && key.substr(1) == "xx") {
        t.by_class[static_cast<std::size_t>(key[0] - '0')] = v;
      } else if (key.size() == 3 && std::all_of(key.begin(), key.end(), ::isdigit) && key[0] >= '1' && key[0] <= '5') {
        t.by_status[std::stoi(key)] = v;
      } else {
        r.fail(it->first, path, "expected a status code (\"404\"), a class (4xx), timeout, connect_error or dns_error");
      }
    }
  }
  if (m.has("retention")) {
    const YAML::Node rn = m["retention"];
    const std::string text = r.scalar(rn, m.child("retention"), "forever or a duration");
    Duration d{};
    if (text != "forever") {
      if (!parse_duration(text, d)) {
        r.fail(rn, m.child("retention"), "expected forever or a duration such as 10m or 1h, got '" + text + "'");
      }
      p.retention = d;
    }
  }
  if (m.has("max_payload_bytes")) {
    p.max_payload_bytes = r.integer(m["max_payload_bytes"], m.child("max_payload_bytes"), 2, 64u << 20);
  }
}

void read_world(const Reader& r, const YAML::Node& n, Scenario& s) {
  Map m(r, n, "world", {"cxids", "serviceb", "endpoints"});
  m.check_keys();
  if (m.has("serviceb")) {
    Map sm(r, m["serviceb"], "world.serviceb", {"latency", "error_rate", "outages", "url_changes", "unknown_cxids"});
    sm.check_keys();
    ServiceBSpec& b = s.serviceb;
    if (sm.has("latency")) b.latency = read_latency(r, sm["latency"], sm.child("latency"));
    if (sm.has("error_rate")) b.error_rate = r.fraction(sm["error_rate"], sm.child("error_rate"));
    if (sm.has("unknown_cxids")) b.unknown_cxids = r.fraction(sm["unknown_cxids"], sm.child("unknown_cxids"));
    if (sm.has("outages")) {
      each(r, sm["outages"], sm.child("outages"), [&](const YAML::Node& o, const std::string& path) {
        Map om(r, o, path, {"at", "for", "mode"});
        om.check_keys();
        ServiceBOutage out;
        out.window = read_window(r, om);
        if (om.has("mode")) {
          out.mode = r.choice<OutageMode>(om["mode"], om.child("mode"),
                                          {{"error", OutageMode::error}, {"timeout", OutageMode::timeout}});
        }
        b.outages.push_back(out);
      });
    }
    if (sm.has("url_changes")) {
      each(r, sm["url_changes"], sm.child("url_changes"), [&](const YAML::Node& o, const std::string& path) {
        Map um(r, o, path, {"at", "fraction"});
        um.check_keys();
        UrlChange c;
        c.at = r.time(um.required("at"), um.child("at"));
        if (um.has("fraction")) c.fraction = r.fraction(um["fraction"], um.child("fraction"));
        b.url_changes.push_back(c);
      });
    }
  }
  each(r, m.required("endpoints"), "world.endpoints", [&](const YAML::Node& e, const std::string& path) {
    Map em(r, e, path,
           {"name", "count", "latency", "errors", "retry_after", "blackhole", "lost_responses", "dns_failures", "down",
            "incidents"});
    em.check_keys();
    EndpointGroup g;
    g.name = em.has("name") ? r.scalar(em["name"], em.child("name"), "a name") : "group-" + std::to_string(s.endpoints.size());
    if (em.has("count")) g.count = static_cast<std::uint32_t>(r.integer(em["count"], em.child("count"), 1, 10'000'000));
    if (em.has("latency")) g.latency = read_latency(r, em["latency"], em.child("latency"));
    if (em.has("retry_after")) g.retry_after = r.duration(em["retry_after"], em.child("retry_after"));
    if (em.has("errors")) {
      Map xm(r, em["errors"], em.child("errors"), {"rate", "status", "retry_after"});
      xm.check_keys();
      g.error_rate = r.fraction(xm.required("rate"), xm.child("rate"));
      if (xm.has("status")) g.error_status = static_cast<int>(r.integer(xm["status"], xm.child("status"), 100, 599));
      if (xm.has("retry_after")) g.retry_after = r.duration(xm["retry_after"], xm.child("retry_after"));
    }
    if (em.has("blackhole")) g.blackhole_rate = r.fraction(em["blackhole"], em.child("blackhole"));
    if (em.has("lost_responses")) g.lost_response_rate = r.fraction(em["lost_responses"], em.child("lost_responses"));
    if (em.has("dns_failures")) g.dns_failure_rate = r.fraction(em["dns_failures"], em.child("dns_failures"));
    if (em.has("down")) {
      each(r, em["down"], em.child("down"), [&](const YAML::Node& d, const std::string& dpath) {
        Map dm(r, d, dpath, {"at", "for"});
        dm.check_keys();
        g.down.push_back(read_window(r, dm));
      });
    }
    if (em.has("incidents")) {
      each(r, em["incidents"], em.child("incidents"), [&](const YAML::Node& d, const std::string& ipath) {
        Map im(r, d, ipath, {"at", "for", "rate", "status", "retry_after"});
        im.check_keys();
        Incident inc;
        inc.window = read_window(r, im);
        if (im.has("rate")) inc.rate = r.fraction(im["rate"], im.child("rate"));
        if (im.has("status")) inc.status = static_cast<int>(r.integer(im["status"], im.child("status"), 100, 599));
        if (im.has("retry_after")) inc.retry_after = r.duration(im["retry_after"], im.child("retry_after"));
        g.incidents.push_back(inc);
      });
    }
    s.endpoints.push_back(std::move(g));
  });
  if (s.endpoints.empty()) r.fail(m["endpoints"], "world.endpoints", "needs at least one endpoint group");
  if (m.has("cxids")) s.cxids = static_cast<std::uint32_t>(r.integer(m["cxids"], m.child("cxids"), 1, 100'000'000));
}

void read_load(const Reader& r, const YAML::Node& n, Scenario& s) {
  each(r, n, "load", [&](const YAML::Node& l, const std::string& path) {
    Map lm(r, l, path, {"rate", "from", "to", "arrival", "duplicates", "conflicts", "burst", "at"});
    lm.check_keys();
    LoadSegment seg;
    if (lm.has("burst")) {
      seg.burst = r.integer(lm["burst"], lm.child("burst"), 1, 100'000'000);
      seg.from = r.time(lm.required("at"), lm.child("at"));
      if (lm.has("rate")) r.fail(lm["rate"], lm.child("rate"), "a burst has no rate: it is `burst: N` at `at:`");
    } else {
      if (lm.has("at")) r.fail(lm["at"], lm.child("at"), "`at` belongs to bursts; a rate runs `from` .. `to`");
      seg.rate_per_s = r.rate(lm.required("rate"), lm.child("rate"));
      if (lm.has("from")) seg.from = r.time(lm["from"], lm.child("from"));
      seg.to = lm.has("to") ? r.time(lm["to"], lm.child("to")) : Time{} + s.duration;
      if (seg.to <= seg.from) r.fail(lm["to"], lm.child("to"), "must be after `from`");
    }
    if (lm.has("arrival")) {
      seg.arrival = r.choice<Arrival>(lm["arrival"], lm.child("arrival"),
                                      {{"poisson", Arrival::poisson}, {"constant", Arrival::constant}});
    }
    if (lm.has("duplicates")) seg.duplicates = r.fraction(lm["duplicates"], lm.child("duplicates"));
    if (lm.has("conflicts")) seg.conflicts = r.fraction(lm["conflicts"], lm.child("conflicts"));
    if (seg.duplicates + seg.conflicts > 1.0) {
      r.fail(lm["conflicts"], lm.child("conflicts"), "duplicates + conflicts must not exceed 100%");
    }
    s.load.push_back(seg);
  });
}

void read_faults(const Reader& r, const YAML::Node& n, Scenario& s) {
  each(r, n, "faults", [&](const YAML::Node& f, const std::string& path) {
    Map fm(r, f, path, {"at", "crash", "restart_after"});
    fm.check_keys();
    CrashFault c;
    c.at = r.time(fm.required("at"), fm.child("at"));
    const YAML::Node target = fm.required("crash");
    const std::string name = r.scalar(target, fm.child("crash"), "a pod name such as pod-0");
    std::size_t used = 0;
    unsigned long index = 0;
    bool ok = name.rfind("pod-", 0) == 0 && name.size() > 4;
    if (ok) {
      try {
        index = std::stoul(name.substr(4), &used);
      } catch (const std::exception&) {
        ok = false;
      }
      ok = ok && used == name.size() - 4;
    }
    if (!ok || index >= s.platform.pods) {
      r.fail(target, fm.child("crash"),
             "expected a pod name pod-0 .. pod-" + std::to_string(s.platform.pods - 1) + ", got '" + name + "'");
    }
    c.pod = static_cast<std::uint32_t>(index);
    if (fm.has("restart_after")) c.restart_after = r.duration(fm["restart_after"], fm.child("restart_after"));
    s.crashes.push_back(c);
  });
}

void read_expect(const Reader& r, const YAML::Node& n, Scenario& s) {
  if (!n.IsMap()) r.fail(n, "expect", "expected a mapping of metric names to comparisons, such as lost: 0");
  std::vector<std::string> names;
  for (const auto& mi : metric_catalog()) names.emplace_back(mi.name);
  Map m(r, n, "expect", names);
  m.check_keys();
  for (auto it = n.begin(); it != n.end(); ++it) {
    Expectation e;
    e.metric = it->first.Scalar();
    const std::string text = r.scalar(it->second, "expect." + e.metric, "a comparison such as 0, \"< 0.1%\" or \">= 1\"");
    if (!parse_comparison(text, e.op, e.value, e.percent)) {
      r.fail(it->second, "expect." + e.metric,
             "expected a comparison such as 0, \"< 0.1%\", \">= 1\" or \"!= 0\", got '" + text + "'");
    }
    e.text = e.metric + " " + text;
    if (text.find_first_of("<>=!") == std::string::npos) e.text = e.metric + " == " + text;
    s.expect.push_back(std::move(e));
  }
}

Scenario read_scenario(const Reader& r, const YAML::Node& root) {
  Scenario s;
  s.file = r.file();
  Map m(r, root, "", {"name", "description", "seed", "duration", "store", "platform", "world", "load", "faults", "expect", "oracle"});
  m.check_keys();
  s.name = r.scalar(m.required("name"), "name", "a name");
  if (m.has("description")) s.description = r.scalar(m["description"], "description", "text");
  if (m.has("seed")) s.seed = r.integer(m["seed"], "seed", 0, UINT64_MAX);
  s.duration = r.duration(m.required("duration"), "duration");
  if (s.duration <= Duration::zero()) r.fail(m["duration"], "duration", "must be positive");
  if (m.has("store")) {
    s.store = r.choice<StoreKind>(m["store"], "store", {{"memory", StoreKind::memory}, {"sqlite", StoreKind::sqlite}});
  }
  if (m.has("platform")) read_platform(r, m["platform"], s.platform);
  for (const auto& e : webhook::validate(s.platform)) {
    // Point at the key when it is in the file, else at the platform block.
    YAML::Node at = m["platform"];
    std::string rest = e.key.substr(std::string("platform.").size());
    YAML::Node cur = at;
    std::size_t pos = 0;
    while (cur.IsDefined() && cur.IsMap() && pos != std::string::npos) {
      const std::size_t dot = rest.find('.', pos);
      const std::string part = rest.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
      YAML::Node next = cur[part];
      if (!next.IsDefined()) break;
      cur = next;
      pos = dot == std::string::npos ? std::string::npos : dot + 1;
    }
    r.fail(cur.IsDefined() ? cur : root, e.key, e.message);
  }
  read_world(r, m.required("world"), s);
  if (m.has("load")) read_load(r, m["load"], s);
  if (m.has("faults")) read_faults(r, m["faults"], s);
  if (m.has("expect")) read_expect(r, m["expect"], s);
  if (m.has("oracle")) {
    Map om(r, m["oracle"], "oracle", {"terminal_slack"});
    om.check_keys();
    if (om.has("terminal_slack")) s.terminal_slack = r.duration(om["terminal_slack"], om.child("terminal_slack"));
  }
  return s;
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& file) {
  const Reader r(file);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    r.fail_mark(e.mark, "", "not valid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) throw ScenarioError(file, 1, 1, "", "the file is empty");
  try {
    return read_scenario(r, root);
  } catch (const YAML::Exception& e) {
    r.fail_mark(e.mark, "", e.msg);
  }
}

Scenario load_scenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, 0, 0, "", std::string("cannot open the file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scenario(text.str(), path);
}

}  // namespace relaysim::sim
