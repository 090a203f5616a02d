#include "sim/report/openmetrics.h"

#include <charconv>
#include <cmath>

#include "model/core/assert.h"

namespace relaysim::sim {

namespace {

// The shortest text that reads back as the same double; NaN and the infinities as OpenMetrics
// spells them.
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, v);
  RELAYSIM_ASSERT(ec == std::errc{}, "a double fits 32 characters");
  return std::string(text, end);
}

// A family's name: its own, or relaysim_<column>.
std::string family_of(const SeriesColumn& c) { return c.family != nullptr ? std::string(c.family->name) : "relaysim_" + std::string(c.name); }

}  // namespace

std::string openmetrics_label_value(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '"') {
      out += "\\\"";
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out;
}

void OpenMetricsSeries::row(const SeriesWindow& window, std::span<const double> values) {
  RELAYSIM_ASSERT(values.size() == columns_.size(), "a row has a value for each column");
  // Divided, not multiplied by 1e-9: a window ending at one minute is stamped 60, not
  // 60.00000000000001 (the division rounds the exact quotient once).
  ends_s_.push_back(static_cast<double>(window.end.time_since_epoch().count()) / 1e9);
  values_.insert(values_.end(), values.begin(), values.end());
}

void OpenMetricsSeries::write(const Emit& emit, std::string_view system, std::string_view run, double start_s) const {
  const std::size_t width = columns_.size();
  RELAYSIM_ASSERT(values_.size() == ends_s_.size() * width, "every row as wide as the columns");
  constexpr std::size_t kPiece = 1 << 20;
  std::string out;
  out.reserve(kPiece + 4096);
  const auto flush_if_full = [&] {
    if (out.size() < kPiece) return;
    emit(out);
    out.clear();
  };
  const std::string labels = "system=\"" + openmetrics_label_value(system) + "\",run=\"" + openmetrics_label_value(run) + "\"";
  std::vector<bool> written(width, false);
  for (std::size_t first = 0; first < width; ++first) {
    if (written[first]) continue;
    // The family's columns, in the table's order: all its samples go together.
    const std::string family = family_of(columns_[first]);
    const bool counter = columns_[first].per_window_count;
    out += "# TYPE " + family + (counter ? " counter\n" : " gauge\n");
    out += "# HELP " + family + " " +
           openmetrics_label_value(columns_[first].family != nullptr ? columns_[first].family->help : columns_[first].meaning) + "\n";
    for (std::size_t c = first; c < width; ++c) {
      if (written[c] || family_of(columns_[c]) != family) continue;
      RELAYSIM_ASSERT(columns_[c].per_window_count == counter, "a family's columns are all counters or all gauges");
      written[c] = true;
      std::string name_and_labels = family + (counter ? "_total{" : "{") + labels;
      if (!columns_[c].label_name.empty()) {
        name_and_labels += "," + std::string(columns_[c].label_name) + "=\"" + openmetrics_label_value(columns_[c].label_value) + "\"";
      }
      name_and_labels += "} ";
      double total = 0;
      for (std::size_t r = 0; r < ends_s_.size(); ++r) {
        double v = values_[r * width + c];
        if (counter) {
          if (!std::isfinite(v)) continue;  // a count is always a number; nothing to add if not
          total += v;
          v = total;
        }
        out += name_and_labels;
        out += number(v);
        out += ' ';
        out += number(start_s + ends_s_[r]);
        out += '\n';
        flush_if_full();
      }
    }
  }
  out += "# EOF\n";
  emit(out);
}

}  // namespace relaysim::sim
