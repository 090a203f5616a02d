#include "sim/report/metric.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "model/core/time.h"

namespace relaysim::sim {

bool is_family(std::string_view name) { return name.find("{q}") != std::string_view::npos; }

std::optional<MetricRef> find_metric(std::span<const MetricInfo> table, std::string_view name) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    const std::string_view m = table[i].name;
    const std::size_t q = m.find("{q}");
    if (q == std::string_view::npos) {
      if (m == name) return MetricRef{i, 0};
      continue;
    }
    const std::string_view prefix = m.substr(0, q);
    const std::string_view suffix = m.substr(q + 3);
    if (name.size() <= prefix.size() + suffix.size() || name.substr(0, prefix.size()) != prefix ||
        name.substr(name.size() - suffix.size()) != suffix) {
      continue;
    }
    const std::string_view number = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    // Written plainly: 50, 99.9 or 0.5; not 050, 5e1, .5 or 5. (one metric, one spelling).
    const std::size_t dot = number.find('.');
    const std::string_view whole = number.substr(0, dot);
    const std::string_view fraction = dot == std::string_view::npos ? std::string_view("0") : number.substr(dot + 1);
    auto digits = [](std::string_view d) { return !d.empty() && d.find_first_not_of("0123456789") == std::string_view::npos; };
    if (!digits(whole) || !digits(fraction) || (whole.size() > 1 && whole[0] == '0')) continue;
    double v = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc{} || end != number.data() + number.size() || !(v > 0 && v <= 100)) continue;
    // latency_p50.0_s is the metric the table also names latency_p50_s: one metric, one ref.
    char shortest[32];
    const auto written = std::to_chars(shortest, shortest + sizeof shortest, v);  // the shortest exact form
    const std::string canonical = std::string(prefix) + std::string(shortest, written.ptr) + std::string(suffix);
    for (std::size_t j = 0; j < table.size(); ++j) {
      if (table[j].name == canonical) return MetricRef{j, 0};
    }
    return MetricRef{i, v};
  }
  return std::nullopt;
}

std::string format_value(Unit unit, double v) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  switch (unit) {
    case Unit::count:
      if (v == std::floor(v) && std::fabs(v) < 1e15) {
        std::snprintf(buf, sizeof buf, "%.0f", v);
      } else {
        std::snprintf(buf, sizeof buf, "%.4g", v);
      }
      return buf;
    case Unit::ratio: {
      const double pct = v * 100.0;
      if (pct == std::floor(pct)) {
        std::snprintf(buf, sizeof buf, "%.0f%%", pct);
      } else {
        std::snprintf(buf, sizeof buf, "%.4g%%", pct);
      }
      return buf;
    }
    case Unit::number:
      std::snprintf(buf, sizeof buf, "%.4g", v);
      return buf;
    case Unit::seconds:
      if (v == std::numeric_limits<double>::infinity()) return "never";
      if (!std::isfinite(v) || std::fabs(v) >= 9e9) {
        std::snprintf(buf, sizeof buf, "%gs", v);
        return buf;
      }
      return format_duration(Duration{static_cast<std::int64_t>(std::llround(v * 1e9))});
  }
  return "?";
}

}  // namespace relaysim::sim
