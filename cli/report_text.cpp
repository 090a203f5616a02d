#include "cli/report_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace relaysim::cli {

using namespace relaysim::sim;

namespace {
double number_or_zero(const nlohmann::json& v) { return v.is_number() ? v.get<double>() : 0.0; }
}  // namespace

const nlohmann::json& field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string grouped(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (std::fabs(v - std::round(v)) > 1e-9 || std::fabs(v) >= 1e15) {
    char buf[64];
    std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 && std::fabs(v) < 1e15 ? "%.1f" : "%.3g", v);
    return buf;
  }
  std::string digits = std::to_string(static_cast<long long>(std::llround(std::fabs(v))));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::optional<LatencyCdf> latency_cdf(const nlohmann::json& result) {
  const nlohmann::json& g = field(result, "groups");
  const auto cdf_of = [](const nlohmann::json& row) -> const nlohmann::json& { return field(field(row, "latency"), "cdf"); };
  const auto has_cdf = [&](const nlohmann::json& row) { return cdf_of(row).is_array() && !cdf_of(row).empty(); };
  std::vector<const nlohmann::json*> rows;
  if (has_cdf(field(g, "all"))) rows.push_back(&field(g, "all"));
  if (rows.empty()) return std::nullopt;
  std::size_t grouped_rows = 0;
  const nlohmann::json& groups = field(g, "groups");
  if (groups.is_array()) {
    for (const auto& r : groups) {
      if (has_cdf(r) && grouped_rows < 12) {
        rows.push_back(&r);
        ++grouped_rows;
      }
    }
  }
  if (grouped_rows < 2) rows.resize(1);  // one group is the whole again
  LatencyCdf out;
  std::string& data = out.data;
  for (const nlohmann::json* r : rows) {
    for (const auto& point : cdf_of(*r)) {
      char line[64];
      std::snprintf(line, sizeof line, "%.9g %.6g\n", point.at(0).get<double>(), 100 * point.at(1).get<double>());
      data += line;
    }
    data += "\n\n";
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out.titles.push_back(i == 0 ? "all" : field(*rows[i], "name").is_string() ? field(*rows[i], "name").get<std::string>() : "?");
  }
  out.by = field(g, "by").is_string() ? field(g, "by").get<std::string>() : "group";
  return out;
}

void group_tables(const nlohmann::json& result, std::string& html, std::string& md) {
  const nlohmann::json& g = field(result, "groups");
  const nlohmann::json& groups = field(g, "groups");
  if (!groups.is_array() || groups.size() < 2) return;
  std::vector<std::string> outcomes;
  if (field(field(g, "all"), "outcomes").is_object()) {
    for (const auto& [name, n] : field(field(g, "all"), "outcomes").items()) outcomes.push_back(name);
  }
  const std::string by = field(g, "by").is_string() ? field(g, "by").get<std::string>() : "group";
  std::vector<std::string> header{by, "finished"};
  header.insert(header.end(), outcomes.begin(), outcomes.end());
  for (const char* h : {"succeeded", "latency p50 (s)", "p99 (s)", "mean (s)"}) header.emplace_back(h);
  html += "<h2>By " + html_escape(by) + "</h2>\n<table><tr>";
  md += "## By " + by + "\n\n|";
  for (const std::string& h : header) {
    html += "<th>" + html_escape(h) + "</th>";
    md += " " + h + " |";
  }
  html += "</tr>\n";
  md += "\n|" + [&] { std::string d; for (std::size_t i = 0; i < header.size(); ++i) d += "---|"; return d; }() + "\n";
  const auto number = [](const nlohmann::json& v) { return v.is_number() ? grouped(v.get<double>()) : std::string("-"); };
  for (const auto& r : groups) {
    std::vector<std::string> cells{field(r, "name").is_string() ? field(r, "name").get<std::string>() : "?", number(field(r, "finished"))};
    for (const std::string& o : outcomes) {
      const nlohmann::json& n = field(field(r, "outcomes"), o.c_str());
      cells.push_back(n.is_null() ? "0" : number(n));
    }
    const nlohmann::json& share = field(r, "success_rate");
    cells.push_back(share.is_number() ? grouped(100 * share.get<double>()) + "%" : "-");
    for (const char* k : {"p50_s", "p99_s", "mean_s"}) cells.push_back(number(field(field(r, "latency"), k)));
    html += "<tr>";
    md += "|";
    for (const std::string& c : cells) {
      html += "<td>" + html_escape(c) + "</td>";
      md += " " + c + " |";
    }
    html += "</tr>\n";
    md += "\n";
  }
  html += "</table>\n";
  md += "\n";
}

std::string pipeline_dot(const System& system, const nlohmann::json& result) {
  const std::span<const Flow> flows = system.pipeline();
  if (flows.empty() || !field(result, "metrics").is_object()) return {};
  const double seconds = number_or_zero(field(result, "virtual_seconds"));
  double most = 1;
  for (const Flow& f : flows) most = std::max(most, number_or_zero(field(field(result, "metrics"), std::string(f.metric).c_str())));
  std::string dot = "digraph pipeline {\n  rankdir=LR;\n  bgcolor=\"white\";\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fa\", fontname=\"sans\"];\n"
                    "  edge [fontname=\"sans\", fontsize=10, color=\"#4a6fa5\"];\n";
  std::vector<std::string_view> sources;
  for (const Flow& f : flows) sources.push_back(f.from);
  for (const Flow& f : flows) {
    if (std::find(sources.begin(), sources.end(), f.to) == sources.end()) {
      dot += "  " + dot_quote(std::string(f.to)) + " [shape=oval, fillcolor=\"#f4f4f4\"];\n";
    }
  }
  for (const Flow& f : flows) {
    const double n = number_or_zero(field(field(result, "metrics"), std::string(f.metric).c_str()));
    const double width = n <= 0 ? 0.6 : 0.8 + 4.0 * std::log1p(n) / std::log1p(most);
    std::string label = std::string(f.metric) + "\\n" + grouped(n);
    if (seconds > 0 && n > 0) {
      char rate[32];
      std::snprintf(rate, sizeof rate, " (%.3g/s)", n / seconds);
      label += rate;
    }
    char w[32];
    std::snprintf(w, sizeof w, "%.2f", width);
    dot += "  " + dot_quote(std::string(f.from)) + " -> " + dot_quote(std::string(f.to)) + " [label=" + dot_quote(label) +
           ", penwidth=" + w + (n <= 0 ? ", style=dashed, color=\"#aaaaaa\"" : "") + "];\n";
  }
  dot += "}\n";
  return dot;
}

}  // namespace relaysim::cli
