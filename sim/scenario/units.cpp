#include "sim/scenario/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <vector>

namespace relaysim::sim {

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

namespace {

// Splits "12.5ms" into 12.5 and "ms".
bool number_and_unit(std::string_view s, double& number, std::string_view& unit) {
  s = trim_blanks(s);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec != std::errc{} || end == s.data() || !std::isfinite(number)) return false;
  unit = trim_blanks(std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end)));
  return true;
}
}  // namespace

static bool duration_unit(std::string_view unit, double& ns_per) {
  if (unit == "ns") ns_per = 1;
  else if (unit == "us") ns_per = 1e3;
  else if (unit == "ms") ns_per = 1e6;
  else if (unit == "s") ns_per = 1e9;
  else if (unit == "m" || unit == "min") ns_per = 60e9;
  else if (unit == "h") ns_per = 3600e9;
  else if (unit == "d") ns_per = 86400e9;
  else return false;
  return true;
}

// The duration in nanoseconds, as a double (exact for every duration a run can use).
static bool parse_duration_ns(std::string_view text, double& ns) {
  std::string_view s = trim_blanks(text);
  if (s == "0") {
    ns = 0;
    return true;
  }
  // One or more number+unit parts, largest first by convention: "250ms", "1h30m", "2m30.5s".
  double total_ns = 0;
  bool any = false;
  double last_unit = 0;  // each part's unit must be smaller than the one before
  while (!s.empty()) {
    double n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc{} || end == s.data() || !std::isfinite(n) || n < 0) return false;
    s.remove_prefix(static_cast<std::size_t>(end - s.data()));
    s = trim_blanks(s);  // "10 ms" reads like "10ms"
    std::size_t unit_len = 0;
    while (unit_len < s.size() && std::isalpha(static_cast<unsigned char>(s[unit_len])) != 0) ++unit_len;
    double ns_per = 0;
    if (!duration_unit(s.substr(0, unit_len), ns_per)) return false;
    if (any && ns_per >= last_unit) return false;
    last_unit = ns_per;
    s = trim_blanks(s.substr(unit_len));
    total_ns += n * ns_per;
    any = true;
  }
  if (!any || !std::isfinite(total_ns)) return false;
  ns = total_ns;
  return true;
}

bool parse_duration_seconds(std::string_view text, double& seconds) {
  double ns = 0;
  if (!parse_duration_ns(text, ns)) return false;
  seconds = ns / 1e9;
  return true;
}

bool parse_duration(std::string_view text, Duration& out) {
  double ns = 0;
  if (!parse_duration_ns(text, ns) || ns > static_cast<double>(kMaxDuration.count())) return false;
  out = Duration{static_cast<std::int64_t>(std::llround(ns))};
  return true;
}

bool parse_rate(std::string_view text, double& per_second) {
  double n = 0;
  std::string_view unit;
  if (!number_and_unit(text, n, unit) || n < 0) return false;
  if (unit == "/s") per_second = n;
  else if (unit == "/ms") per_second = n * 1e3;
  else if (unit == "/min" || unit == "/m") per_second = n / 60.0;
  else if (unit == "/h") per_second = n / 3600.0;
  else if (unit == "/d") per_second = n / 86400.0;
  else return false;
  return true;
}

bool parse_fraction(std::string_view text, double& out) {
  double n = 0;
  std::string_view unit;
  if (!number_and_unit(text, n, unit)) return false;
  if (unit == "%") n /= 100.0;
  else if (!unit.empty()) return false;
  if (n < 0.0 || n > 1.0) return false;
  out = n;
  return true;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace relaysim::sim
