// The strict YAML reader every scenario section is read with.
//
// Every problem is a ScenarioError naming the file, line, column, the dotted key path and what was
// expected; a misspelt key gets a did-you-mean. Nothing is guessed and nothing is ignored: an
// unknown key, a key given twice, a key with no value, a wrong type, a bad unit, a value outside
// its range, a time after the end of the run are all errors.
#pragma once

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/core/assert.h"
#include "model/core/config_error.h"
#include "model/core/time.h"

namespace relaysim::sim {

class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(std::string file, int line, int column, std::string key, std::string problem);
  const std::string& file() const { return file_; }
  int line() const { return line_; }      // 1-based; 0 when unknown
  int column() const { return column_; }  // 1-based; 0 when unknown
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string key_;
  std::string problem_;
};

// Where we are: the file, and what the run is known to be so far (its duration, once read).
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& path, const std::string& problem) const;
  [[noreturn]] void fail_mark(const YAML::Mark& m, const std::string& path, const std::string& problem) const;
  const std::string& file() const { return file_; }

  // The run's duration: a time at or after it would never happen. Unset (zero) while the top
  // level has not read it; then any time up to kMaxDuration is accepted.
  Duration run_duration() const { return run_duration_; }
  void set_run_duration(Duration d) {
    RELAYSIM_ASSERT(d > Duration::zero(), "a run lasts some time");
    run_duration_ = d;
  }

  // Scalars. Each fails with what was expected, the text it got, and the allowed range.
  std::string scalar(const YAML::Node& n, const std::string& path, std::string_view expected) const;
  Duration duration(const YAML::Node& n, const std::string& path) const;
  // A moment of the run, as a duration since its start; it must come before the run's end.
  Time time(const YAML::Node& n, const std::string& path) const;
  double rate(const YAML::Node& n, const std::string& path) const;  // per second
  double fraction(const YAML::Node& n, const std::string& path) const;
  double number(const YAML::Node& n, const std::string& path, double lo, double hi) const;
  std::uint64_t integer(const YAML::Node& n, const std::string& path, std::uint64_t lo, std::uint64_t hi) const;
  bool flag(const YAML::Node& n, const std::string& path) const;
  template <class E>
  E choice(const YAML::Node& n, const std::string& path, const std::vector<std::pair<std::string, E>>& options) const {
    const std::string s = scalar(n, path, "a name");
    for (const auto& [name, value] : options) {
      if (s == name) return value;
    }
    std::string names;
    for (const auto& [name, value] : options) names += (names.empty() ? "" : ", ") + name;
    fail(n, path, "expected one of " + names + ", got '" + s + "'" + suggestion(s, names_of(options)));
  }

  // "; did you mean 'x'?" when one of `known` is close to `word`, else "".
  static std::string suggestion(std::string_view word, const std::vector<std::string>& known);

 private:
  template <class E>
  static std::vector<std::string> names_of(const std::vector<std::pair<std::string, E>>& options) {
    std::vector<std::string> out;
    for (const auto& o : options) out.push_back(o.first);
    return out;
  }
  std::string file_;
  Duration run_duration_{};
};

// Rates a scenario may name: none at all (0), or at least one call in kMaxDuration and at most one
// per nanosecond (the clock's resolution).
inline constexpr double kMaxRatePerSecond = 1e9;

// A YAML mapping read key by key. The constructor rejects anything but a mapping, keys that are
// not plain names, and keys given twice; check_keys() rejects every key nobody asked for,
// suggesting the closest known key.
class Map {
 public:
  Map(const Reader& r, const YAML::Node& node, std::string path, std::vector<std::string> known);

  const std::string& path() const { return path_; }
  std::string child(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const YAML::Node& node() const { return node_; }
  // The value at `key`, or an undefined node when absent.
  YAML::Node operator[](const std::string& key) const;
  // Present (with a value: a key given with no value is an error here).
  bool has(const std::string& key) const;
  YAML::Node required(const std::string& key) const;
  void check_keys() const;
  // Fails at the key `dotted` ("platform.retry.initial") below this mapping when the file has it,
  // else at the nearest enclosing key it has: for a system's own validation, which names keys
  // whether or not the file wrote them.
  [[noreturn]] void fail_at(const std::string& dotted, const std::string& problem) const;
  // Fails at the first problem a model's validate() found in the section at `section` below this
  // mapping ("" for this mapping itself); returns when there are none. The model names keys
  // relative to the section it validates (model/core/config_error.h).
  void refuse(const std::vector<ConfigError>& problems, const std::string& section = "") const;

 private:
  const Reader& r_;
  YAML::Node node_;
  std::string path_;
  std::vector<std::string> known_;
};

// Fails at the second of two items of the list `list` of `m` that have one name (`name_of(item)`;
// `what`: "provider"): a name is how a report, a metric (latency_p99_s[NAME]) or another key
// finds its item, so two alike would be one.
template <class T, class F>
void unique_names(const Reader& r, const Map& m, const std::string& list, const std::vector<T>& items, F&& name_of,
                  const std::string& what) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (name_of(items[j]) != name_of(items[i])) continue;
      const YAML::Node item = m[list][i];
      const bool keyed = item.IsMap() && item["name"].IsDefined();
      r.fail(keyed ? item["name"] : item, m.child(list) + "[" + std::to_string(i) + "]" + (keyed ? ".name" : ""),
             "names " + what + " '" + std::string(name_of(items[i])) + "' a second time (item " + std::to_string(j) + " has it)");
    }
  }
}

// Calls f(item, path) for each item of a YAML list.
template <class F>
void each(const Reader& r, const YAML::Node& n, const std::string& path, F&& f) {
  if (!n.IsSequence()) r.fail(n, path, "expected a list");
  for (std::size_t i = 0; i < n.size(); ++i) f(n[i], path + "[" + std::to_string(i) + "]");
}

// The most values (scalars, lists, mappings) a scenario may hold, aliases expanded.
inline constexpr std::size_t kMaxValues = 100'000;

// Parses scenario text into YAML: exactly one document, valid UTF-8, no deeper than a sane limit,
// no more than kMaxValues values. Throws ScenarioError.
YAML::Node parse_yaml(std::string_view text, const std::string& file);

}  // namespace relaysim::sim
