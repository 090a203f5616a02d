// What the live shell's JSON-lines logs share: a record's fields written and read by one visitor
// (a record type lists its fields once, in a `fields(self, io)` function), and a file appended
// to a whole line at a time.
//
// A field is a Time or Duration (Unix nanoseconds; a Time is never before 1970, so two always
// subtract), an enum (by the name its names table gives), a bool, a string, an integer (refused
// when it does not fit, see json_integer.h), a vector of integers, or a vector of a type that has
// its own `fields` (an array of objects). `Names::of<E>()` is the names table of each enum a
// record writes.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <optional>
#include <string_view>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "live/json_integer.h"
#include "model/core/ports.h"
#include "model/core/time.h"

namespace relaysim::live {

namespace json_record_detail {
template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
template <class T>
struct is_integer_vector : std::false_type {};
template <class T>
struct is_integer_vector<std::vector<T>> : std::is_integral<T> {};
}  // namespace json_record_detail

template <class Names>
struct JsonFieldWriter {
  nlohmann::json& out;
  template <class T>
  void operator()(const char* name, const T& v) {
    if constexpr (std::is_same_v<T, Time> || std::is_same_v<T, Duration>) {
      out[name] = to_ns(v);
    } else if constexpr (std::is_enum_v<T>) {
      out[name] = Names::template of<T>()[v];
    } else if constexpr (json_record_detail::is_integer_vector<T>::value) {
      out[name] = v;
    } else if constexpr (json_record_detail::is_vector<T>::value) {
      nlohmann::json items = nlohmann::json::array();
      for (const auto& item : v) {
        nlohmann::json one = nlohmann::json::object();
        JsonFieldWriter w{one};
        T::value_type::fields(item, w);
        items.push_back(std::move(one));
      }
      out[name] = std::move(items);
    } else {
      out[name] = v;
    }
  }
};

template <class Names>
struct JsonFieldReader {
  const nlohmann::json& in;
  std::string problem;  // the first field that could not be read
  template <class T>
  void operator()(const char* name, T& v) {
    if (!problem.empty()) return;
    const auto it = in.find(name);
    if (it == in.end()) {
      problem = std::string("no field '") + name + "'";
      return;
    }
    const nlohmann::json& j = *it;
    bool ok = true;
    if constexpr (std::is_same_v<T, Time> || std::is_same_v<T, Duration>) {
      const std::optional<std::int64_t> ns = json_integer<std::int64_t>(j);
      ok = ns.has_value() && (!std::is_same_v<T, Time> || *ns >= 0);
      if (ok) v = T{Duration{*ns}};
    } else if constexpr (std::is_enum_v<T>) {
      const std::optional<T> e =
          j.is_string() ? Names::template of<T>().parse(j.template get_ref<const std::string&>()) : std::nullopt;
      ok = e.has_value();
      if (ok) v = *e;
    } else if constexpr (std::is_same_v<T, bool>) {
      ok = j.is_boolean();
      if (ok) v = j.template get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      ok = j.is_string();
      if (ok) v = j.template get<std::string>();
    } else if constexpr (json_record_detail::is_integer_vector<T>::value) {
      ok = j.is_array();
      for (std::size_t i = 0; ok && i < j.size(); ++i) {
        const std::optional<typename T::value_type> n = json_integer<typename T::value_type>(j[i]);
        ok = n.has_value();
        if (ok) v.push_back(*n);
      }
    } else if constexpr (json_record_detail::is_vector<T>::value) {
      ok = j.is_array();
      for (std::size_t i = 0; ok && i < j.size(); ++i) {
        if (!j[i].is_object()) {
          ok = false;
          break;
        }
        typename T::value_type item{};
        JsonFieldReader r{j[i], {}};
        T::value_type::fields(item, r);
        if (!r.problem.empty()) {
          problem = std::string("field '") + name + "', item " + std::to_string(i) + ": " + r.problem;
          return;
        }
        v.push_back(std::move(item));
      }
    } else {
      const std::optional<T> n = json_integer<T>(j);
      ok = n.has_value();
      if (ok) v = *n;
    }
    if (!ok) problem = std::string("field '") + name + "' is not a valid value: " + j.dump();
  }
};

// An event log's line: {"event": the record's kind by name, ...the kind's fields}. `Record` has
// a `kind` (an enum whose names Names::of gives) and a static `fields(self, io)`.
template <class Names, class Record>
std::string write_event_line(const Record& r) {
  nlohmann::json out = nlohmann::json::object();
  out["event"] = Names::template of<decltype(r.kind)>()[r.kind];
  JsonFieldWriter<Names> w{out};
  Record::fields(r, w);
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A record of `kind` that process `pod` logs at `at`, its other fields to be filled in.
template <class Record>
Record event_record(decltype(Record::kind) kind, decltype(Record::pod) pod, Time at) {
  Record r;
  r.kind = kind;
  r.pod = pod;
  r.at = at;
  return r;
}

// Reads a line write_event_line wrote; nullopt with `problem` set (naming the field) when it is
// not a record.
template <class Names, class Record>
std::optional<Record> read_event_line(std::string_view line, std::string& problem) {
  const nlohmann::json in = nlohmann::json::parse(line, nullptr, false);
  if (in.is_discarded() || !in.is_object()) {
    problem = "not a JSON object";
    return std::nullopt;
  }
  using Kind = decltype(Record::kind);
  const auto& kinds = Names::template of<Kind>();
  const auto kind = in.find("event");
  const std::optional<Kind> k =
      kind != in.end() && kind->is_string() ? kinds.parse(kind->template get_ref<const std::string&>()) : std::nullopt;
  if (!k) {
    problem = "no known 'event' (one of";
    for (int i = 0; i < kinds.count; ++i) problem += std::string(i == 0 ? " " : ", ") + std::string(kinds[static_cast<Kind>(i)]);
    problem += ")";
    return std::nullopt;
  }
  Record r;
  r.kind = *k;
  JsonFieldReader<Names> reader{in, {}};
  Record::fields(r, reader);
  if (!reader.problem.empty()) {
    problem = std::string(kinds[*k]) + ": " + reader.problem;
    return std::nullopt;
  }
  return r;
}

// Reading logs other programs (or other runs) wrote: every problem is an std::invalid_argument
// that names the file and line ("file:N").

// Calls `line(text, where)` for each non-empty line of `path`, `where` being "path:N"; `what`
// names the option the path came from.
template <class F>
void each_line(const std::string& path, const char* what, F&& line);
// `text` as a JSON object.
nlohmann::json parse_object(const std::string& text, const std::string& where);

// The field `name` of `j` as a T (an integer only when it fits).
template <class T>
T field(const nlohmann::json& j, const char* name, const std::string& where) {
  const auto it = j.find(name);
  if (it == j.end()) throw std::invalid_argument(where + ": no field '" + name + "'");
  auto bad = [&] { return std::invalid_argument(where + ": field '" + name + "' is not a valid value: " + it->dump()); };
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const std::optional<T> n = json_integer<T>(*it);
    if (!n) throw bad();
    return *n;
  } else {
    try {
      return it->template get<T>();
    } catch (const nlohmann::json::exception&) {
      throw bad();
    }
  }
}

// A Unix time in nanoseconds, on the world's clock (`shift`: the world's start). Nothing of the
// run happens before the world starts: a process started earlier would be judged against a world
// that was not there yet.
Time world_time(const nlohmann::json& j, const char* name, Duration shift, const std::string& where);
// The same for a time read already.
Time world_time(Time unix_time, const char* name, Duration shift, const std::string& where);

// The world a log's first line, `{"world": {"scenario", "seed", "system", "started_ns", ...}}`,
// names (`world`, its object), checked against the scenario the judge was given: that scenario,
// with its seed (the world's draws), served as `system` ("webhook" when the line names none:
// `whose` says it to the user, "the SMS gateway's"). Returns when the world started: Unix time,
// a real run's.
Duration world_started(const nlohmann::json& world, std::string_view scenario, std::uint64_t seed, std::string_view system,
                       std::string_view whose, const std::string& where);

// A process's lives in its event log, as the judge checks them: a life runs from `started` to
// `stopped`, or to the next `started` (the process was killed and started again). Within a life
// every record comes after `started`, no record's own time is before it (one clock, which never
// goes back), each is written no earlier than the one before it, and nothing but `started`
// follows `stopped`.
class LogLife {
 public:
  // The next log: one process's, restarted any number of times.
  void next_log() {
    up_ = false;
    stopped_ = false;
  }
  // A `started` record, at `at`, written at `logged`: a new life.
  void start(Time at, Time logged) {
    up_ = true;
    stopped_ = false;
    started_at_ = at;
    last_logged_ = logged;
  }
  // Why a record other than `started`, at `at`, written at `logged`, cannot come here; empty
  // when it can. A `stopped` one (`stops`) ends the life.
  std::string check(Time at, Time logged, bool stops) {
    if (!up_) {
      return stopped_ ? "a record after the process logged 'stopped'" : "a record before the process logged 'started'";
    }
    if (at < started_at_) return "its time is before its process started";
    if (logged < last_logged_) return "it was written before the line logged before it";
    last_logged_ = logged;
    if (stops) {
      up_ = false;
      stopped_ = true;
    }
    return {};
  }

 private:
  bool up_ = false;
  bool stopped_ = false;
  Time started_at_{};
  Time last_logged_{};
};

// A log file appended to, each call's text in one write(2): a process killed later loses nothing
// it logged, and a kill cannot leave half a line for the restarted process to write after (stdio
// would split a line longer than its buffer into two writes).
class LineFile {
 public:
  // Appends to `path`; throws std::invalid_argument naming `option` when it cannot be opened.
  LineFile(const std::string& path, const char* option);
  ~LineFile();
  LineFile(const LineFile&) = delete;
  LineFile& operator=(const LineFile&) = delete;

  void append(const std::string& lines);
  // Every line so far reached the file (none was lost to a full disk or an I/O error).
  bool intact() const { return intact_; }

 private:
  int fd_;
  bool intact_ = true;
};

// A process's event log as the process writes it (`serve --events`): each record stamped with
// when its line is written (`logged`) and appended whole, and the `started` and `stopped` lines
// of its lives. `Record` is a log's line: a `kind` whose enum has `started` and `stopped`, a
// `pod`, `at` and `logged`; `write_record` gives its line.
template <class Record>
class EventLogFile {
 public:
  using Pod = decltype(Record::pod);
  // Appends to `path`; throws std::invalid_argument when it cannot be opened.
  EventLogFile(const std::string& path, Pod pod, const Clock& clock, std::string (*write_record)(const Record&))
      : file_(path, "--events"), pod_(pod), clock_(clock), write_record_(write_record) {}

  Pod pod() const { return pod_; }
  void write(Record& r) {
    r.logged = clock_.now();
    std::string line = write_record_(r);
    line += '\n';
    file_.append(line);
  }
  void started(Time at) {
    Record r = event_record<Record>(decltype(Record::kind)::started, pod_, at);
    write(r);
  }
  void stopped(Time at) {
    Record r = event_record<Record>(decltype(Record::kind)::stopped, pod_, at);
    write(r);
  }
  // Every line so far reached the file (none was lost to a full disk or an I/O error).
  bool intact() const { return file_.intact(); }

 private:
  LineFile file_;
  Pod pod_;
  const Clock& clock_;
  std::string (*write_record_)(const Record&);
};

template <class F>
void each_line(const std::string& path, const char* what, F&& line) {
  if (std::filesystem::is_directory(path)) throw std::invalid_argument(std::string(what) + ": " + path + " is a directory");
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(std::string(what) + ": cannot open " + path);
  std::string text;
  for (std::size_t n = 1; std::getline(in, text); ++n) {
    if (text.empty()) continue;
    line(text, path + ":" + std::to_string(n));
  }
}

// Reads a run's event logs (`serve --events`), one file per serve process, each restart appended
// to it: every line read by `read` (a record, or nullopt with the problem), looked at by
// `check(record, where)` (which throws what the judge refuses), held to a `Checker` (what a real
// process writes: the system's LogChecker, next_log() per file), and handed to `keep(record,
// where)` (which puts it on the judge's clock). Refuses an empty file, a pod that logs in two and a file
// that holds two pods' lines.
// A `Log` has `path` and `records`, each file's in the order written.
template <class Log, class Checker, class Read, class Check, class Keep>
std::vector<Log> read_event_logs(const std::vector<std::string>& paths, Read&& read, Check&& check, Keep&& keep) {
  std::vector<Log> logs;
  Checker checker;
  std::unordered_map<std::uint64_t, std::size_t> pods;  // the log each pod's records came from (one file given twice is two)
  for (const std::string& path : paths) {
    checker.next_log();
    Log log{path, {}};
    each_line(path, "--events", [&](const std::string& text, const std::string& where) {
      std::string problem;
      auto r = read(text, problem);
      if (!r) throw std::invalid_argument(where + ": " + problem);
      check(*r, where);
      if (const std::string why = checker.check(*r, where); !why.empty()) {
        throw std::invalid_argument(where + ": " + why + ": no real run writes this log");
      }
      const auto [it, fresh] = pods.try_emplace(r->pod, logs.size());
      if (!fresh && it->second != logs.size()) {
        throw std::invalid_argument(where + ": pod " + std::to_string(r->pod) + " also logged in " + logs[it->second].path +
                                    ": each process of a run has a pod number of its own (serve --pod)");
      }
      // One file, one process: two processes appending to one file interleave their lives, and
      // the judge would take each one's start for the other's restart.
      if (!log.records.empty() && log.records.front().pod != r->pod) {
        throw std::invalid_argument(where + ": pod " + std::to_string(r->pod) + " in the log of pod " +
                                    std::to_string(log.records.front().pod) +
                                    ": give each serve process its own --events file");
      }
      keep(*r, where);
      log.records.push_back(std::move(*r));
    });
    if (log.records.empty()) throw std::invalid_argument("--events: " + path + " is empty: no serve process wrote it");
    logs.push_back(std::move(log));
  }
  return logs;
}

}  // namespace relaysim::live
