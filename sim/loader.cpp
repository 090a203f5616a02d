#include "sim/loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <tuple>

#include "model/core/assert.h"
#include "sim/scenario/expect.h"
#include "sim/scenario/units.h"
#include "sim/system.h"

namespace relaysim::sim {

namespace {

std::vector<std::string> system_names() {
  std::vector<std::string> out;
  for (const System* s : systems()) out.emplace_back(s->name());
  return out;
}

// One item of `faults:`: a pod crash, a pod pause or a store fault.
struct FaultItem {
  Time at{};
  std::optional<std::uint32_t> crash;  // the pod
  std::optional<std::uint32_t> pause;  // the pod
  Duration restart_after = kForever;
  bool during_write = false;
  std::optional<StoreFailure> store;
  Duration length = kForever;
  bool operator==(const FaultItem&) const = default;
};

// `crash: pod-N` and `pause: pod-N`.
Schema<FaultItem>::Key pod_key(const char* name, const char* meaning, std::optional<std::uint32_t> FaultItem::*member) {
  Schema<FaultItem>::Key k;
  k.name = name;
  k.kind = "`pod-N`";
  k.meaning = meaning;
  k.default_text = "(or another kind)";
  k.read = [member](const Reader& r, const YAML::Node& n, const std::string& p, FaultItem& f) {
    const std::string text = r.scalar(n, p, "a pod name such as pod-0");
    const bool digits = text.size() > 4 && text.size() <= 14 && text.rfind("pod-", 0) == 0 &&
                        text.find_first_not_of("0123456789", 4) == std::string::npos &&
                        (text.size() == 5 || text[4] != '0');
    if (!digits) r.fail(n, p, "expected a pod name such as pod-0 or pod-12, got '" + text + "'");
    f.*member = static_cast<std::uint32_t>(std::min<unsigned long long>(std::stoull(text.substr(4)), UINT32_MAX));
  };
  k.differs = [member](const FaultItem& f, const FaultItem&) { return (f.*member).has_value(); };
  k.emit = [member](YAML::Emitter& e, const FaultItem& f, const FaultItem&) {
    RELAYSIM_ASSERT((f.*member).has_value(), "a pod is written only for a fault that names one");
    e << "pod-" + std::to_string(*(f.*member));
  };
  return k;
}

// `store: busy | full | io`.
Schema<FaultItem>::Key store_key() {
  Schema<FaultItem>::Key store;
  store.name = "store";
  store.kind = "`busy` | `full` | `io`";
  store.meaning = "how the store fails";
  store.default_text = "(or another kind)";
  store.read = [](const Reader& r, const YAML::Node& n, const std::string& p, FaultItem& f) {
    f.store = r.choice<StoreFailure>(n, p, {{"busy", StoreFailure::busy}, {"full", StoreFailure::full}, {"io", StoreFailure::io}});
  };
  store.differs = [](const FaultItem& f, const FaultItem&) { return f.store.has_value(); };
  store.emit = [](YAML::Emitter& e, const FaultItem& f, const FaultItem&) {
    RELAYSIM_ASSERT(f.store.has_value(), "a store failure is written only for a store fault");
    e << std::string(to_string(*f.store));
  };
  return store;
}

// The rules between a fault's keys: one kind of fault, and the keys of that kind.
void check_fault(const Reader& r, const Map& m, FaultItem& f) {
  const int kinds = int{f.crash.has_value()} + int{f.store.has_value()} + int{f.pause.has_value()};
  if (kinds != 1) {
    r.fail(m.node(), m.path(),
           "a fault is one of a pod crash (`crash: pod-N`), a pod pause (`pause: pod-N`) or a store fault (`store: busy`)");
  }
  for (const char* k : {"restart_after", "during_write"}) {
    if (!f.crash && m.has(k)) r.fail(m[k], m.child(k), std::string("`") + k + "` belongs to crashes");
  }
  if (f.crash && m.has("for")) r.fail(m["for"], m.child("for"), "`for` belongs to store faults and pauses; a crash lasts until `restart_after`");
  if (f.pause && !m.has("for")) r.fail(m.node(), m.path(), "a pause needs `for`: how long the pod stops");
  if (f.length <= Duration::zero()) r.fail(m["for"], m.child("for"), "must be positive");
}

const Schema<FaultItem>& fault_schema() {
  static const Schema<FaultItem> schema = [] {
    Schema<FaultItem> s(Style::flow,
                        "Each item is a pod crash (`crash`) or a store fault (`store`). A crash drops everything the "
                        "pod held in memory — its caches, its breaker, its work in flight — but not the store; what "
                        "it already sent still reaches its endpoint, and its leased work is rescued by other pods "
                        "when the leases expire. A store fault makes store calls fail: `busy` and `io` fail every "
                        "call, `full` every write (reads still work); the platform must survive it and lose nothing "
                        "it acknowledged.");
    s.key("at", &FaultItem::at, time_codec(), "when it happens", opt::required());
    s.add(pod_key("crash", "the pod that crashes, counted from 0", &FaultItem::crash));
    s.add(pod_key("pause", "the pod that stops for `for` without dying (a long GC pause): nothing it scheduled runs and no answer reaches it until it resumes, believing what it believed before; its load balancer sends it no new calls meanwhile (it fails the health check)", &FaultItem::pause));
    s.key("restart_after", &FaultItem::restart_after, duration_codec(), "how long until the pod starts again",
          opt::shown("never"));
    s.key("during_write", &FaultItem::during_write, flag_codec(),
          "the pod dies in the middle of its first store write at or after `at`, which must roll back whole");
    s.add(store_key());
    s.key("for", &FaultItem::length, duration_codec(), "how long a store fault or a pause lasts",
          opt::shown("forever (a pause: required)"));
    s.check(check_fault);
    return s;
  }();
  return schema;
}

// `faults:`: read as one list, kept as the crashes and the store faults.
Schema<Scenario>::Key faults_key() {
  Schema<Scenario>::Key k;
  k.name = "faults";
  k.kind = "list of faults, below";
  k.meaning = "pod crashes, pod pauses and store faults";
  k.default_text = "none";
  k.read = [](const Reader& r, const YAML::Node& n, const std::string& path, Scenario& s) {
    s.crashes.clear();
    s.pauses.clear();
    s.store_faults.clear();
    const std::uint32_t pods = s.spec().processes();
    RELAYSIM_ASSERT(pods >= 1, "a platform has at least one pod");
    each(r, n, path, [&](const YAML::Node& item, const std::string& p) {
      FaultItem f;
      fault_schema().read(r, item, p, f);
      for (const auto& [pod, key] : {std::pair{f.crash, "crash"}, std::pair{f.pause, "pause"}}) {
        if (pod && *pod >= pods) {
          r.fail(item[key], p + "." + key,
                 "expected a pod name pod-0 .. pod-" + std::to_string(pods - 1) + " (the platform has " +
                     std::to_string(pods) + " pods), got '" + item[key].Scalar() + "'");
        }
      }
      if (f.crash) {
        s.crashes.push_back({f.at, *f.crash, f.restart_after, f.during_write});
      } else if (f.pause) {
        s.pauses.push_back({f.at, *f.pause, f.length});
      } else {
        s.store_faults.push_back({Window{f.at, f.length}, *f.store});
      }
    });
  };
  k.differs = [](const Scenario& s, const Scenario&) {
    return !s.crashes.empty() || !s.pauses.empty() || !s.store_faults.empty();
  };
  k.emit = [](YAML::Emitter& e, const Scenario& s, const Scenario&) {
    e << YAML::BeginSeq;
    for (const CrashFault& c : s.crashes) {
      fault_schema().emit(e, FaultItem{c.at, c.pod, std::nullopt, c.restart_after, c.during_write, std::nullopt, kForever}, FaultItem{});
    }
    for (const PauseFault& p : s.pauses) {
      fault_schema().emit(e, FaultItem{p.at, std::nullopt, p.pod, kForever, false, std::nullopt, p.length}, FaultItem{});
    }
    for (const StoreFault& f : s.store_faults) {
      fault_schema().emit(e, FaultItem{f.window.at, std::nullopt, std::nullopt, kForever, false, f.failure, f.window.length}, FaultItem{});
    }
    e << YAML::EndSeq;
  };
  k.document = [](std::vector<DocTable>& out, const std::string& path, const Scenario&) {
    fault_schema().document(out, path + "[]", FaultItem{});
  };
  return k;
}

const Schema<OracleOptions>& oracle_schema() {
  static const Schema<OracleOptions> schema = [] {
    Schema<OracleOptions> s(Style::flow);
    s.key("terminal_slack", &OracleOptions::terminal_slack, duration_codec(),
          "extra time allowed past a request's deadline bound before \"still not finished\" is a violation (the "
          "system's section of the docs says what the bound is)",
          opt::shown("the system's own"));
    return s;
  }();
  return schema;
}

// `expect:`: metric -> comparison, checked against the system's metric table.
Schema<Scenario>::Key expect_key() {
  Schema<Scenario>::Key k;
  k.name = "expect";
  k.kind = "mapping of metric names to comparisons";
  k.meaning = "what the run must show, beyond the invariants (`relaysim metrics` lists the metrics)";
  k.default_text = "none";
  k.read = [](const Reader& r, const YAML::Node& n, const std::string& path, Scenario& s) {
    const Map m(r, n, path, {});
    s.expect.clear();
    // Each metric once: latency_p99_s and latency_p99.0_s are one metric, and two expectations of
    // it could contradict each other unseen.
    std::map<std::tuple<std::size_t, std::size_t, double>, std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string name = it->first.Scalar();
      const std::string key = m.child(name);
      std::string unknown;
      const std::optional<MetricRef> ref = resolve_metric(s, name, unknown);
      if (!ref) r.fail(it->first, key, unknown);
      if (const auto [at, fresh] = seen.emplace(std::tuple(ref->group, ref->index, ref->parameter), name); !fresh) {
        r.fail(it->first, key, "names the same metric as " + at->second + ", given earlier");
      }
      if (it->second.IsNull()) r.fail(it->second, key, "has no value (give it a comparison, or leave the key out)");
      const std::string text = r.scalar(it->second, key, "a comparison such as 0, \"< 0.1%\" or \">= 1\"");
      Expectation e;
      e.metric = ref->index;
      e.parameter = ref->parameter;
      e.group = ref->group;
      e.name = name;
      if (const auto problem = parse_comparison(text, metric_info(*s.system, *ref).unit, e.op, e.value)) {
        r.fail(it->second, key, name + " " + *problem);
      }
      std::string_view rest = text;
      while (!rest.empty() && std::string_view("<>=! ").find(rest.front()) != std::string_view::npos) rest.remove_prefix(1);
      e.text = std::string(to_string(e.op)) + " " + std::string(rest);
      s.expect.push_back(std::move(e));
    }
  };
  k.differs = [](const Scenario& s, const Scenario&) { return !s.expect.empty(); };
  k.emit = [](YAML::Emitter& e, const Scenario& s, const Scenario&) {
    e << YAML::BeginMap;
    for (const Expectation& x : s.expect) e << YAML::Key << x.name << YAML::Value << YAML::DoubleQuoted << x.text;
    e << YAML::EndMap;
  };
  return k;
}

Schema<Scenario>::Key system_key() {
  Schema<Scenario>::Key k;
  k.name = "system";
  std::string names;
  for (const auto& n : system_names()) names += (names.empty() ? "" : " | ") + ("`" + n + "`");
  k.kind = names;
  k.meaning = "the system under test; its section is the key of the same name";
  k.required = true;
  k.always_write = true;
  k.read = [](const Reader& r, const YAML::Node& n, const std::string& path, Scenario& s) {
    const std::string name = r.scalar(n, path, "a system name");
    s.system = find_system(name);
    if (s.system == nullptr) {
      std::string all;
      for (const auto& c : system_names()) all += (all.empty() ? "" : ", ") + c;
      r.fail(n, path, "no system is named '" + name + "'" + Reader::suggestion(name, system_names()) +
                          " (the systems: " + all + ")");
    }
  };
  k.differs = [](const Scenario&, const Scenario&) { return true; };
  k.emit = [](YAML::Emitter& e, const Scenario& s, const Scenario&) {
    RELAYSIM_ASSERT(s.system != nullptr, "a scenario names its system");
    e << std::string(s.system->name());
  };
  return k;
}

}  // namespace

const Schema<Scenario>& scenario_schema() {
  static const Schema<Scenario> schema = [] {
    Schema<Scenario> s(Style::block,
                       "A scenario file holds exactly one YAML document of UTF-8 text (no control characters besides "
                       "tabs and line ends), of at most " + std::to_string(kMaxScenarioBytes >> 20) + " MiB and " +
                           std::to_string(kMaxValues) +
                           " values once YAML aliases are expanded; YAML tags (`!!binary`), merge keys (`<<`) and "
                           "directives (`%YAML`) are not used.\n\n"
                           "The top level is the same for every system. Besides these keys, the system's own section "
                           "is the key named by `system` (`webhook:`), below.");
    s.key("name", &Scenario::name, name_codec(), "the scenario's name, shown in reports", opt::required());
    s.key("description", &Scenario::description, text_codec(), "free text", opt::shown("none"));
    s.key("seed", &Scenario::seed, integer_codec<std::uint64_t>(0, UINT64_MAX),
          "the root seed; every component draws from its own stream derived from it", opt::always());
    s.key("duration", &Scenario::duration, duration_codec(),
          "virtual time to simulate (at most 3650d); the run stops early when nothing is left to do", opt::required());
    s.key("warmup", &Scenario::warmup, duration_codec(),
          "virtual time at the start that every metric, the groups and `expect:` leave out, so they measure the steady "
          "state and not the ramp from an empty system (the metric `settle_time_s` suggests a value); invariants are "
          "still checked over the whole run");
    s.add(system_key());
    s.key("store", &Scenario::store, choice_codec(kStoreKindNames),
          "where the platform keeps its durable state: in memory, or in SQLite (in memory unless `--sqlite-path`)");
    s.add(faults_key());
    s.add(expect_key());
    s.key("oracle", &Scenario::oracle, map_codec(oracle_schema()), "options of the invariant checkers");
    s.check([](const Reader& r, const Map& m, Scenario& sc) {
      if (sc.duration <= Duration::zero()) r.fail(m["duration"], "duration", "must be positive");
      if (sc.warmup < Duration::zero() || sc.warmup >= sc.duration) {
        r.fail(m.has("warmup") ? m["warmup"] : m["duration"], "warmup", "must be shorter than the duration (" + write_duration(sc.duration) + ")");
      }
    });
    return s;
  }();
  return schema;
}

namespace {

Scenario read_scenario(const Reader& reader, const YAML::Node& root) {
  Reader r = reader;
  Scenario s;
  s.file = r.file();
  const Schema<Scenario>& schema = scenario_schema();
  std::vector<std::string> known = schema.names();
  for (const auto& n : system_names()) known.push_back(n);
  const Map m(r, root, "", known);
  for (const char* legacy : {"platform", "world", "load"}) {
    if (m[legacy].IsDefined()) {
      r.fail(m[legacy], legacy,
             "belongs in the system's section now: write `system: webhook` and indent platform, world and load "
             "under a `webhook:` key (docs/scenario-format.md)");
    }
  }
  m.check_keys();
  bool section_read = false;
  auto read_section = [&] {
    section_read = true;
    RELAYSIM_ASSERT(s.system != nullptr, "the system is read before its section");
    const std::string name(s.system->name());
    for (const auto& other : system_names()) {
      if (other != name && m[other].IsDefined()) {
        r.fail(m[other], other, "is the section of the " + other + " system; this scenario's system is " + name);
      }
    }
    s.set_spec(s.system->read(r, m.required(name), name));
  };
  for (const auto& k : schema.keys()) {
    if (k.name == kSectionBefore) read_section();
    if (k.required) {
      k.read(r, m.required(k.name), k.name, s);
    } else if (m.has(k.name)) {
      k.read(r, m[k.name], k.name, s);
    }
    if (k.name == "duration") {
      if (s.duration <= Duration::zero()) r.fail(m["duration"], "duration", "must be positive");
      r.set_run_duration(s.duration);
    }
  }
  if (!section_read) read_section();
  for (const auto& c : schema.checks()) c(r, m, s);
  return s;
}

}  // namespace

Override parse_override(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw ScenarioError("--set", 0, 0, "", "expected key.path=value, got '" + std::string(text) + "'");
  }
  Override o{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
  if (o.path.front() == '.' || o.path.back() == '.' || o.path.find("..") != std::string::npos) {
    throw ScenarioError("--set", 0, 0, o.path, "a key path is keys and indices joined by dots: webhook.platform.pods");
  }
  return o;
}

std::string to_string(const Override& o) { return o.path + "=" + o.value; }

namespace {

// Sets `o` in the document `root`, making the mappings its path passes through.
// How an error names the override `o` of `file`.
std::string named(const Override& o, const std::string& file) { return file + " (" + o.origin + " " + to_string(o) + ")"; }

void apply(YAML::Node& root, const Override& o, const std::string& file) {
  RELAYSIM_ASSERT(!o.path.empty(), "an override names a key");
  const std::string where = named(o, file);
  YAML::Node value;
  try {
    value = YAML::Load(o.value);
  } catch (const YAML::Exception& e) {
    throw ScenarioError(where, 0, 0, o.path, "the value is not YAML: " + e.msg);
  }
  if (!value.IsDefined() || value.IsNull()) value = YAML::Node(o.value);  // "" and "~" stay as written
  YAML::Node cur;
  cur.reset(root);
  std::string done;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = o.path.find('.', start);
    const std::string key = o.path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool last = dot == std::string::npos;
    YAML::Node next;
    if (cur.IsSequence()) {
      std::size_t index = 0;
      const bool number = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos && key.size() < 10;
      if (number) index = std::stoul(key);
      if (!number || index >= cur.size()) {
        throw ScenarioError(where, 0, 0, done, "is a list of " + std::to_string(cur.size()) + " item(s); '" + key +
                                                   "' is not one of its indices, which count from 0");
      }
      next.reset(cur[index]);
    } else if (cur.IsMap() || cur.IsNull() || !cur.IsDefined()) {
      if (!cur.IsMap()) cur = YAML::Node(YAML::NodeType::Map);
      next.reset(cur[key]);
    } else {
      throw ScenarioError(where, 0, 0, done, "is a single value, so it has no '" + key + "' inside");
    }
    done += (done.empty() ? "" : ".") + key;
    if (last) {
      next = value;
      return;
    }
    cur.reset(next);
    start = dot + 1;
  }
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& file, const std::vector<Override>& overrides) {
  YAML::Node root = parse_yaml(text, file);
  for (const Override& o : overrides) apply(root, o, file);
  const Reader r(file);
  try {
    try {
      return read_scenario(r, root);
    } catch (const YAML::Exception& e) {
      r.fail_mark(e.mark, "", e.msg);
    }
  } catch (const ScenarioError& e) {
    // A value an override put there is not the file's: name the override instead, the last one
    // that set the key or a mapping around it (a line and column would count in its own text).
    // A rule between keys that names a key around the override's, without a line in the file,
    // is laid at the override's door too.
    if (e.key().empty()) throw;
    // An override's path names a list's item by its index between dots (endpoints.0.count); an
    // error's key, in brackets (endpoints[0].count).
    const auto as_key = [](const std::string& path) {
      std::string out;
      std::size_t start = 0;
      while (start <= path.size()) {
        const std::size_t dot = std::min(path.find('.', start), path.size());
        const std::string part = path.substr(start, dot - start);
        const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
        out += index ? "[" + part + "]" : (out.empty() ? "" : ".") + part;
        start = dot + 1;
      }
      return out;
    };
    const auto under = [&as_key](const std::string& key, const std::string& path) {
      const std::string p = as_key(path);
      return key == p || key.rfind(p + ".", 0) == 0 || key.rfind(p + "[", 0) == 0;
    };
    for (auto o = overrides.rbegin(); o != overrides.rend(); ++o) {
      const bool inside = under(e.key(), o->path) || (e.line() == 0 && as_key(o->path).rfind(e.key() + ".", 0) == 0);
      if (!inside) continue;
      const std::string at = e.line() > 0 && !under(e.key(), o->path)
                                 ? std::string()
                                 : (e.line() == 1 && e.column() > 1 ? " (at column " + std::to_string(e.column()) + " of the value)" : "");
      throw ScenarioError(named(*o, file), 0, 0, e.key(), e.problem() + at);
    }
    // A rule between keys, found at a line of the file, that overrides took part in: say which.
    std::string given;
    for (const Override& o : overrides) {
      if (as_key(o.path).rfind(e.key() + ".", 0) == 0) given += (given.empty() ? "" : ", ") + o.origin + " " + to_string(o);
    }
    if (!given.empty()) throw ScenarioError(e.file(), e.line(), e.column(), e.key(), e.problem() + " (given " + given + ")");
    throw;
  }
}

Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides) {
  const ScenarioText t = read_scenario_file(path);
  return parse_scenario(t.text, t.name, overrides);
}

ScenarioText read_scenario_file(const std::string& path) {
  // A regular file, or a pipe ("-" is standard input; <(...) and FIFOs work too), read to at most
  // kMaxScenarioBytes: a device such as /dev/zero would never end.
  const bool standard_input = path == "-";
  const std::string name = standard_input ? "(standard input)" : path;
  struct stat st {};
  if ((standard_input ? ::fstat(STDIN_FILENO, &st) : ::stat(path.c_str(), &st)) != 0) {
    throw ScenarioError(name, 0, 0, "", std::string("cannot open the file: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) throw ScenarioError(name, 0, 0, "", "is a directory, not a scenario file");
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    const char* what = S_ISCHR(st.st_mode) ? "a character device" : S_ISSOCK(st.st_mode) ? "a socket" : "not a regular file";
    throw ScenarioError(name, 0, 0, "", std::string("is ") + what + ", not a scenario file or a pipe");
  }
  const auto too_long = [&](std::uint64_t bytes, bool at_least) {
    return ScenarioError(name, 0, 0, "",
                         "is " + std::string(at_least ? "more than " : "") + std::to_string(bytes) +
                             " bytes long; a scenario file is at most " + std::to_string(kMaxScenarioBytes >> 20) +
                             " MiB (" + std::to_string(kMaxScenarioBytes) + " bytes)");
  };
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > kMaxScenarioBytes) {
    throw too_long(static_cast<std::uint64_t>(st.st_size), false);
  }
  const int fd = standard_input ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ScenarioError(name, 0, 0, "", std::string("cannot open the file: ") + std::strerror(errno));
  std::string text;
  char buffer[65536];
  int error = 0;
  while (text.size() <= kMaxScenarioBytes) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  if (!standard_input) ::close(fd);
  if (error != 0) throw ScenarioError(name, 0, 0, "", std::string("cannot read the file: ") + std::strerror(error));
  if (text.size() > kMaxScenarioBytes) throw too_long(kMaxScenarioBytes, true);
  return {name, std::move(text)};
}

std::vector<DocTable> scenario_reference() {
  std::vector<DocTable> out;
  scenario_schema().document(out, "", Scenario{});
  for (const System* s : systems()) s->document(out);
  return out;
}

}  // namespace relaysim::sim
