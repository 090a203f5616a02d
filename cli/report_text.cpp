#include "cli/report_text.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>

#include "model/core/assert.h"
#include "model/core/utf8.h"
#include "sim/scenario/units.h"

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

std::string readable(double v) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "\u221E" : "-\u221E";  // ∞
  const double a = std::fabs(v);
  char buf[64];
  if (a >= 1e15 || (a > 0 && a < 1e-6)) {  // past what a person reads digit by digit
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  if (a >= 99.95) return grouped(std::round(v));  // "1,500": three digits or more, no fraction
  if (a == 0) return "0";
  // Three significant digits, the zeros a fraction ends with dropped: 12.5, 0.5, 0.0421.
  const int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(a))), 0, 8);
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string out = buf;
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

std::string value_text(Unit unit, double v) {
  if (std::isnan(v)) return "n/a";
  switch (unit) {
    case Unit::count:
      return std::isfinite(v) && v == std::round(v) && std::fabs(v) < 1e15 ? grouped(v) : readable(v);
    case Unit::ratio:
      return format_value(unit, v);
    case Unit::seconds:
      return v == 0 ? "0s" : format_value(unit, v);
    case Unit::number:
      return readable(v);
  }
  return readable(v);
}

std::string printable(std::string_view s) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(s.size());
  for (std::size_t at = 0; at < s.size();) {
    const std::size_t n = utf8_length(s, at);
    // Control characters, C0 and C1 (U+0080..U+009F) alike, are shown as the replacement too.
    const std::uint32_t cp = n == 0 ? 0 : utf8_code_point(s, at);
    if (n == 0 || cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
      out += kReplacement;
      at += n == 0 ? 1 : n;
    } else {
      out.append(s.substr(at, n));
      at += n;
    }
  }
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : printable(s)) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string md_escape(std::string_view s) {
  std::string out;
  for (char c : printable(s)) {
    if (std::ispunct(static_cast<unsigned char>(c))) out += '\\';
    out += c;
  }
  return out;
}

std::string gp_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : printable(s)) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || std::string_view(" ._,:%()+=/-").find(static_cast<char>(c)) != std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", c);
      out += octal;
    }
  }
  return out + "\"";
}

std::string dot_quote(std::string_view s) {
  std::string out = "\"";
  std::size_t line = 0;
  // Each line of `s` on its own, so a newline is Graphviz's line break and nothing else.
  while (line <= s.size()) {
    const std::size_t end = std::min(s.find('\n', line), s.size());
    if (line != 0) out += "\\n";
    for (char c : printable(s.substr(line, end - line))) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    line = end + 1;
  }
  return out + "\"";
}

namespace {

// The words the report's scripts are made of, outside their literals: nothing else may appear
// there (an allow-list, so a word gnuplot runs something with is refused whether or not it is
// known here).
constexpr std::string_view kGnuplotWords[] = {
    "set", "unset", "plot", "terminal", "svg", "size", "dynamic", "font", "background", "output", "datafile",
    "separator", "missing", "whitespace", "grid", "xtics", "ytics", "y2tics", "key", "outside", "right", "top",
    "noenhanced", "termoption", "logscale", "x", "y", "xlabel", "ylabel", "y2label", "xrange", "yrange", "y2range",
    "object", "rect", "from", "to", "graph", "behind", "fc", "rgb", "fs", "solid", "noborder", "style", "fill",
    "using", "with", "lines", "linespoints", "steps", "filledcurves", "boxxyerror", "lw", "lc", "pt", "title",
    "axes", "x1y2", "index", "column", "NaN", "notitle", "offsets", "autoscale", "yfixmax", "yerrorbars", "transparent",
    "lmargin", "rmargin", "at", "screen", "keyentry", "boxes", "format", "y2"};

// `s` as printable() shows it, cut to at most `most` characters, the last of them '…' where it
// was cut (a name in a chart's key or on its axis, where the margin holds so much).
std::string shortened(std::string_view s, std::size_t most) {
  const std::string p = printable(s);
  std::vector<std::size_t> starts;  // of each character
  for (std::size_t at = 0; at < p.size(); at += std::max<std::size_t>(1, utf8_length(p, at))) starts.push_back(at);
  if (starts.size() <= most || most == 0) return p;
  return p.substr(0, starts[most - 1]) + "\u2026";
}

bool plain_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return false;
  }
  return s.front() != '.' && s.front() != '-';
}

// A line of a script split into what is outside its literals (each literal there as `S`) and the
// literals' values, gnuplot's own escapes decoded (\ooo, \x).
struct ScriptLine {
  std::string outside;
  std::vector<std::pair<std::size_t, std::string>> literals;  // where in `outside`, the value
};

// `line` split, or nothing when a literal in it is not closed or holds what gp_string escapes.
std::optional<ScriptLine> split_literals(std::string_view line) {
  ScriptLine out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c != '"' && c != '\'') {
      out.outside += c;
      continue;
    }
    std::string value;
    bool closed = false;
    for (++i; i < line.size(); ++i) {
      if (line[i] == c) {
        if (c == '\'' && i + 1 < line.size() && line[i + 1] == '\'') {  // '' in a single-quoted one
          value += '\'';
          ++i;
          continue;
        }
        closed = true;
        break;
      }
      if (c == '"' && (line[i] == '@' || line[i] == '$')) return std::nullopt;  // gp_string escapes these
      if (c == '"' && line[i] == '\\' && i + 1 < line.size()) {
        std::size_t k = i + 1;
        int octal = 0, digits = 0;
        while (k < line.size() && digits < 3 && line[k] >= '0' && line[k] <= '7') octal = octal * 8 + (line[k++] - '0'), ++digits;
        value += digits > 0 ? static_cast<char>(octal) : line[k++];
        i = k - 1;
        continue;
      }
      value += line[i];
    }
    if (!closed) return std::nullopt;
    out.literals.emplace_back(out.outside.size(), std::move(value));
    out.outside += 'S';
  }
  return out;
}

// A file gnuplot reads or writes is named by a plain name of the chart's own: a data file's
// name that starts with '<' is a command gnuplot runs.
bool files_plain(const ScriptLine& split) {
  for (const auto& [where, value] : split.literals) {
    std::string_view before = std::string_view(split.outside).substr(0, where);
    while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
    int depth = 0;
    for (char c : before) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    const bool names_a_file = before.ends_with("set output") || before == "plot" || (depth == 0 && before.ends_with(","));
    if (names_a_file && !plain_name(value)) return false;
  }
  return true;
}

// Outside the literals: only the scripts' words, numbers and operators.
bool words_known(const std::string& outside) {
  if (!outside.starts_with("set ") && !outside.starts_with("unset ") && !outside.starts_with("plot ")) return false;
  if (outside.find_first_of("@;!#\\$|&`{}") != std::string::npos) return false;
  for (std::size_t i = 0; i < outside.size();) {
    if (!std::isalpha(static_cast<unsigned char>(outside[i]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < outside.size() && (std::isalnum(static_cast<unsigned char>(outside[j])) || outside[j] == '_')) ++j;
    const std::string_view word = std::string_view(outside).substr(i, j - i);
    const bool number_exponent = word == "e" && i > 0 && std::isdigit(static_cast<unsigned char>(outside[i - 1]));
    if (word != "S" && !number_exponent && std::find(std::begin(kGnuplotWords), std::end(kGnuplotWords), word) == std::end(kGnuplotWords)) {
      return false;
    }
    i = j;
  }
  return true;
}

}  // namespace

bool gp_inert(std::string_view script) {
  std::size_t at = 0;
  while (at < script.size()) {
    const std::size_t end = std::min(script.find('\n', at), script.size());
    const std::string_view line = script.substr(at, end - at);
    at = end + 1;
    if (line.empty()) continue;
    if (line.find('`') != std::string_view::npos) return false;  // run even inside double quotes
    const std::optional<ScriptLine> split = split_literals(line);
    if (!split || !files_plain(*split) || !words_known(split->outside)) return false;
  }
  return true;
}

std::string file_stem(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 60)) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  return out.empty() ? "_" : out;
}

std::optional<LatencyCdf> latency_cdf(const nlohmann::json& result) {
  const nlohmann::json& g = field(result, "groups");
  const auto cdf_of = [](const nlohmann::json& row) -> const nlohmann::json& { return field(field(row, "latency"), "cdf"); };
  const auto has_cdf = [&](const nlohmann::json& row) { return cdf_of(row).is_array() && !cdf_of(row).empty(); };
  const auto name_of = [](const nlohmann::json& row) {
    return field(row, "name").is_string() ? field(row, "name").get<std::string>() : std::string("?");
  };
  std::vector<const nlohmann::json*> rows;
  if (has_cdf(field(g, "all"))) rows.push_back(&field(g, "all"));
  if (rows.empty()) return std::nullopt;
  LatencyCdf out;
  std::size_t grouped_rows = 0;
  const nlohmann::json& groups = field(g, "groups");
  if (groups.is_array()) {
    for (const auto& r : groups) {
      if (!has_cdf(r)) {
        out.unmeasured.push_back(name_of(r));
      } else if (grouped_rows < 12) {
        rows.push_back(&r);
        ++grouped_rows;
      } else {
        ++out.not_drawn;
      }
    }
  }
  std::string all = "all";
  if (grouped_rows == 1) {
    // One group with a distribution is the whole again: its curve would lie on the whole's. When
    // others had none (no latency measured there), the whole's title says whose it is.
    if (!out.unmeasured.empty()) all += " = " + name_of(*rows[1]);
    rows.resize(1);
  }
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
    out.titles.push_back(i == 0 ? all : name_of(*rows[i]));
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
  for (const char* h : {"succeeded", "latency p50", "p99", "mean"}) header.emplace_back(h);
  html += "<h2>By " + html_escape(by) + "</h2>\n<table><tr>";
  md += "## By " + md_escape(by) + "\n\n|";
  for (const std::string& h : header) {
    html += "<th>" + html_escape(h) + "</th>";
    md += " " + md_escape(h) + " |";
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
    cells.push_back(share.is_number() ? value_text(Unit::ratio, share.get<double>()) : "-");
    for (const char* k : {"p50_s", "p99_s", "mean_s"}) {
      const nlohmann::json& seconds = field(field(r, "latency"), k);
      cells.push_back(seconds.is_number() ? value_text(Unit::seconds, seconds.get<double>()) : std::string("-"));
    }
    html += "<tr>";
    md += "|";
    for (const std::string& c : cells) {
      html += "<td>" + html_escape(c) + "</td>";
      md += " " + md_escape(c) + " |";
    }
    html += "</tr>\n";
    md += "\n";
  }
  html += "</table>\n";
  md += "\n";
}

double open_at_end(const nlohmann::json& result) {
  const nlohmann::json& unresolved = field(field(result, "metrics"), "unresolved");
  if (unresolved.is_number()) return std::max(0.0, unresolved.get<double>());
  const nlohmann::json& backlog = field(result, "backlog");
  return std::max(0.0, number_or_zero(field(backlog, "acknowledged")) - number_or_zero(field(backlog, "finished")));
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
    std::string label = std::string(f.metric) + "\n" + grouped(n);
    if (seconds > 0 && n > 0) label += " (" + readable(n / seconds) + "/s)";
    char w[32];
    std::snprintf(w, sizeof w, "%.2f", width);
    dot += "  " + dot_quote(std::string(f.from)) + " -> " + dot_quote(std::string(f.to)) + " [label=" + dot_quote(label) +
           ", penwidth=" + w + (n <= 0 ? ", style=dashed, color=\"#aaaaaa\"" : "") + "];\n";
  }
  // What arrived and had not finished when the run ended: beside where it arrived (the first
  // flow is the arrivals), a node of its own, shown only when there is any.
  if (const double open = open_at_end(result); open > 0) {
    std::string id = "open at the end";
    const auto taken = [&](const std::string& name) {
      return std::any_of(flows.begin(), flows.end(), [&](const Flow& f) { return f.from == name || f.to == name; });
    };
    while (taken(id)) id += " ";  // never one of the pipeline's own nodes
    dot += "  " + dot_quote(id) + " [label=" + dot_quote("open at the end\n" + grouped(open)) +
           ", shape=oval, fillcolor=\"#fbe3d6\", color=\"#c0504d\"];\n  " + dot_quote(std::string(flows.front().to)) + " -> " +
           dot_quote(id) + " [style=dashed, color=\"#c0504d\"];\n";
  }
  dot += "}\n";
  return dot;
}

namespace {

// The states of an instant transition of timeline.csv (detail "a -> b", no end or the end its
// start), as lane_bars reads them; nothing for any other row.
std::optional<std::pair<std::string, std::string>> transition_of(const std::vector<std::string>& f) {
  const std::size_t arrow = f[4].find(" -> ");
  if (arrow == std::string::npos || (!f[1].empty() && std::atof(f[1].c_str()) != std::atof(f[0].c_str()))) return std::nullopt;
  return std::pair{f[4].substr(0, arrow), f[4].substr(arrow + 4)};
}

std::string time_text(const std::string& seconds) { return value_text(Unit::seconds, std::atof(seconds.c_str())); }

}  // namespace

std::vector<TimelineRow> timeline_rows(const std::vector<std::vector<std::string>>& events) {
  // Runs of each subject's flapping, found first: rows alternating between two states, each
  // within kFlapGapSeconds of the one before.
  struct Run {
    std::vector<std::size_t> rows;  // of `events`
    std::string state, other;       // the state it is in, the one it flaps back to
    double last = 0;
  };
  std::map<std::string, Run> open;
  std::vector<std::size_t> collapsed_into(events.size(), SIZE_MAX);  // SIZE_MAX: shown as it is
  std::map<std::size_t, std::pair<std::size_t, std::size_t>> collapsed;  // a run's first row: its rows, its last
  const auto close = [&](Run& run) {
    if (run.rows.size() >= 3) {
      for (std::size_t i : run.rows) collapsed_into[i] = run.rows.front();
      collapsed[run.rows.front()] = {run.rows.size(), run.rows.back()};
    }
    run = Run{};
  };
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& f = events[i];
    RELAYSIM_ASSERT(f.size() >= 6, "a timeline row has its six fields");
    const auto states = transition_of(f);
    if (!states) continue;
    const double at = std::atof(f[0].c_str());
    Run& run = open[f[2] + "\n" + f[3]];
    const bool flaps = !run.rows.empty() && states->first == run.state && states->second == run.other &&
                       at - run.last <= kFlapGapSeconds;
    if (!flaps) {
      close(run);
      run.other = states->first;
    } else {
      run.other = run.state;
    }
    run.state = states->second;
    run.rows.push_back(i);
    run.last = at;
  }
  for (auto& [key, run] : open) close(run);

  std::vector<TimelineRow> out;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& f = events[i];
    if (collapsed_into[i] != SIZE_MAX && collapsed_into[i] != i) continue;  // shown in its run's row
    TimelineRow row{time_text(f[0]), f[1].empty() ? "the end" : time_text(f[1]), f[2], f[3], f[4]};
    if (transition_of(f)) row.to.clear();  // an instant
    if (collapsed_into[i] == i) {
      const auto [n, last] = collapsed.at(i);
      const auto states = transition_of(f);
      row.to = time_text(events[last][0]);
      row.detail = states->first + " \u21C4 " + states->second + " \u00D7" + std::to_string(n);  // a ⇄ b ×n
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string chart_start(const std::string& name, int height) {
  RELAYSIM_ASSERT(plain_name(name), "a chart's file is a plain name of its own");
  return "set terminal svg size 960," + std::to_string(height) + " dynamic font 'sans,11' background '#ffffff'\nset output " +
         gp_string(name + ".svg") + "\nset termoption noenhanced\nset datafile separator ','\nset datafile missing ''\nset grid\n";
}

GnuplotChart cdf_chart(const LatencyCdf& cdf) {
  RELAYSIM_ASSERT(!cdf.titles.empty(), "a CDF has a curve");
  GnuplotChart c;
  c.name = "latency-cdf";
  const bool grouped = cdf.titles.size() > 1 || !cdf.unmeasured.empty() || cdf.not_drawn > 0;
  c.title = "Latency distribution (CDF)" + (grouped ? ", by " + cdf.by : std::string());
  // The groups without a curve, and why: nothing of theirs had a latency measured (an endpoint
  // group down from the start).
  if (!cdf.unmeasured.empty()) {
    c.title += "; no latency measured for ";
    for (std::size_t i = 0; i < cdf.unmeasured.size() && i < 8; ++i) c.title += (i ? ", " : "") + cdf.unmeasured[i];
    if (cdf.unmeasured.size() > 8) c.title += " and " + std::to_string(cdf.unmeasured.size() - 8) + " more";
  }
  if (cdf.not_drawn > 0) c.title += "; " + std::to_string(cdf.not_drawn) + " more not drawn (12 at most)";
  c.data.emplace_back("latency-cdf.dat", cdf.data);
  c.script = chart_start(c.name) + "set datafile separator whitespace\nset key outside right top noenhanced\n"
             "set logscale x\nset xlabel 'seconds (log scale)'\nset ylabel '% at or below'\nset ytics 0, 20, 100\n"
             "set yrange [0:105]\nplot ";  // 100% below the frame
  for (std::size_t i = 0; i < cdf.titles.size(); ++i) {
    c.script += std::string(i ? ", " : "") + "'latency-cdf.dat' index " + std::to_string(i) + " using 1:2 with steps lw " +
                (i == 0 ? "2.4 lc rgb '#222222'" : "1.4") + " title " + gp_string(cdf.titles[i]);
  }
  c.script += "\n";
  return c;
}

namespace {

std::string number(double v) {
  RELAYSIM_ASSERT(std::isfinite(v), "a chart's numbers are finite");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.8g", v);
  return buf;
}

// A value of a data file: NaN (gnuplot's undefined) where there is none.
std::string datum(double v) { return std::isfinite(v) ? number(v) : std::string("NaN"); }

const char* time_axis(bool hours) { return hours ? "set xlabel 'virtual time (hours)'\n" : "set xlabel 'virtual time (minutes)'\n"; }

}  // namespace

FaultWindows fault_windows(const std::vector<std::vector<std::string>>& events, double end_s) {
  FaultWindows out;
  for (const auto& f : events) {
    RELAYSIM_ASSERT(f.size() >= 6, "a timeline row has its six fields");
    if (f[5] != "1") continue;
    const double from = std::atof(f[0].c_str());
    const double to = f[1].empty() ? end_s : std::atof(f[1].c_str());
    if (!(to > from) || !std::isfinite(from) || !std::isfinite(to)) continue;
    const std::string fault = f[3].empty() ? f[2] : f[2] + ": " + f[3];
    if (end_s > 0 && std::min(to, end_s) - std::max(from, 0.0) > kWholeRun * end_s) {
      out.whole_run.push_back(fault + ", from " + value_text(Unit::seconds, from) + " to " +
                              (to >= end_s ? std::string("the end") : value_text(Unit::seconds, to)));
    } else if (out.shaded.size() < kMostShades) {
      out.shaded.push_back({from, to, fault});
    }
  }
  return out;
}

namespace {

// The same plot area in every chart along virtual time (kTimeFrameLeft, kTimeFrameRight).
std::string time_frame() {
  return "set lmargin at screen " + number(kTimeFrameLeft) + "\nset rmargin at screen " + number(kTimeFrameRight) + "\n";
}

// A fault's shade: light enough that the curves over it stay clear, and where two overlap both show.
constexpr const char* kFaultFill = " fs transparent solid 0.2 noborder";
constexpr const char* kOtherFaults = "#7f7f7f";  // past kFaultColours: the rest, in one grey
// The most characters of a name the margins of a time chart hold: a fault's in the key (right of
// the frame and the % axis of the health panel), a lane's left of the frame.
constexpr std::size_t kKeyName = 26, kLaneName = 18;

}  // namespace

GnuplotChart panel_chart(const std::string& name, const std::string& title, const std::vector<SeriesCurve>& curves,
                         const std::vector<Shade>& shades, bool hours, bool log_y, double end_s,
                         const std::vector<std::string>& whole_run) {
  RELAYSIM_ASSERT(!curves.empty(), "a panel draws a column");
  GnuplotChart c;
  c.name = name;
  c.title = title;
  c.script = chart_start(name) + "set datafile separator whitespace\nset key outside right top noenhanced\n" + time_axis(hours) +
             time_frame();
  const double div = hours ? 3600 : 60;
  // From 0 to the run's end, as the lanes are: a band is at the same place in every chart.
  if (end_s > 0 && std::isfinite(end_s)) c.script += "set xrange [0:" + number(end_s / div) + "]\n";
  // What lasts (nearly) the whole run, named above the chart instead of shading all of it.
  if (!whole_run.empty()) {
    std::string text = whole_run.size() == 1 ? "Not shaded, as it lasts (nearly) the whole run: "
                                              : "Not shaded, as they last (nearly) the whole run: ";
    for (std::size_t i = 0; i < whole_run.size() && i < 3; ++i) text += (i ? "; " : "") + shortened(whole_run[i], 60);
    if (whole_run.size() > 3) text += "; and " + std::to_string(whole_run.size() - 3) + " more";
    c.script += "set title " + gp_string(text) + "\n";
  }
  // Each fault its colour, in the order the faults first appear.
  std::vector<std::string> faults;
  const auto colour_of = [](std::size_t k) { return k < std::size(kFaultColours) ? kFaultColours[k] : kOtherFaults; };
  for (std::size_t i = 0; i < shades.size(); ++i) {
    const auto at = std::find(faults.begin(), faults.end(), shades[i].fault);
    const auto k = static_cast<std::size_t>(at - faults.begin());
    if (at == faults.end()) faults.push_back(shades[i].fault);
    c.script += "set object " + std::to_string(i + 1) + " rect from " + number(shades[i].from / div) + ", graph 0 to " +
                number(shades[i].to / div) + ", graph 1 behind fc rgb '" + colour_of(k) + "'" + kFaultFill + "\n";
  }
  if (log_y) c.script += "set logscale y\nset ylabel 'seconds'\n";
  // Room above the highest value (a tenth of the range, on a log axis too): a level such as 3
  // breakers open would otherwise lie on the frame, where no one sees it.
  c.script += "set offsets 0, 0, graph 0.1, 0\nset autoscale yfixmax\n";
  bool ratio_axis = false;
  std::string plot = "plot ";
  const std::string x = std::string("(column(1)/") + (hours ? "3600" : "60") + ")";
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const SeriesCurve& s = curves[i];
    RELAYSIM_ASSERT(s.column >= 2, "series.dat's first column is the windows' ends");
    ratio_axis = ratio_axis || s.ratio;
    // A window with nothing to measure is NaN in series.dat, which breaks the line: joined
    // across, a line would draw figures no window had.
    const std::string col = "column(" + std::to_string(s.column) + ")";
    plot += std::string(i ? ", " : "") + "'series.dat' using " + x + ":" + (s.ratio ? "(100*" + col + ")" : std::to_string(s.column)) + " with lines lw 1.6" +
            (s.ratio ? " axes x1y2" : "") + " title " + gp_string(s.title + (s.ratio ? " (%)" : ""));
  }
  // 100% below the frame; the unit in each tic's label, leaving the room right of them to the key.
  if (ratio_axis) c.script += "set y2tics 0, 20, 100\nset format y2 '%g%%'\nset y2range [0:110]\n";
  // The key names each fault beside the curves (a name cut to what the key's room holds).
  for (std::size_t k = 0; k < faults.size() && k <= std::size(kFaultColours); ++k) {
    const bool rest = k == std::size(kFaultColours);
    const std::string named = rest ? std::to_string(faults.size() - k) + " other faults" : faults[k].empty() ? "fault" : faults[k];
    plot += std::string(", keyentry with boxes fc rgb '") + colour_of(k) + "'" + kFaultFill + " title " +
            gp_string(shortened(named, kKeyName));
  }
  c.script += plot + "\n";
  return c;
}

namespace {

// The timeline's bars as they are found: one lane per subject (up to kLanes), a colour per
// category, up to kBars bars.
struct LaneBars {
  struct Bar {
    double from, to;
    std::size_t lane, category;
    bool fault;
  };
  static constexpr std::size_t kLanes = 32, kBars = 20000;
  std::vector<std::string> lanes, categories, colours;
  std::size_t next_fault = 0, next_other = 0;
  std::vector<Bar> bars;

  void add(double from, double to, const std::string& lane, const std::string& category, bool fault);
};

// Where `s` is in `v`, put at its end when it is not there yet.
std::size_t index_of(std::vector<std::string>& v, const std::string& s) {
  const auto it = std::find(v.begin(), v.end(), s);
  if (it != v.end()) return static_cast<std::size_t>(it - v.begin());
  v.push_back(s);
  return v.size() - 1;
}

void LaneBars::add(double from, double to, const std::string& lane, const std::string& category, bool fault) {
  if (!(to > from) || bars.size() >= kBars) return;
  if (std::find(lanes.begin(), lanes.end(), lane) == lanes.end() && lanes.size() >= kLanes) return;
  const std::size_t known = categories.size();
  const std::size_t c = index_of(categories, category);
  if (c == known) {  // a new category's colour: faults in reds, a drain green, the rest in turn
    static const char* kFaults[] = {"#d62728", "#e377c2", "#8c564b"};
    static const char* kOthers[] = {"#ff7f0e", "#1f77b4", "#9467bd", "#bcbd22", "#17becf", "#7f7f7f"};
    std::size_t& next = fault ? next_fault : next_other;
    colours.push_back(category == "drain" ? "#2ca02c" : fault ? kFaults[next++ % std::size(kFaults)] : kOthers[next++ % std::size(kOthers)]);
  }
  bars.push_back({from, to, index_of(lanes, lane), c, fault});
}

// A subject's state while its transitions (a detail "from -> to", at an instant) move it.
struct OpenState {
  std::string state;
  double since = 0;
  std::string kind;
  std::string rest;  // the state the subject rests in: the first transition's origin
};

// The bars of `events`: each stay of a subject away from the state it rests in, and each other
// row over its span (to `end_s` when it has no end).
LaneBars lane_bars(const std::vector<std::vector<std::string>>& events, double end_s) {
  LaneBars out;
  std::map<std::string, OpenState> open;
  for (const auto& f : events) {
    RELAYSIM_ASSERT(f.size() >= 6, "a timeline row has its six fields");
    const double from = std::atof(f[0].c_str());
    const std::string& kind = f[2];
    const std::string& subject = f[3];
    const std::string& detail = f[4];
    const std::size_t arrow = detail.find(" -> ");
    if (arrow != std::string::npos && (f[1].empty() || std::atof(f[1].c_str()) == from)) {
      OpenState& o = open[kind + "\n" + subject];
      if (o.kind.empty()) {
        o.kind = kind;
        o.rest = detail.substr(0, arrow);
        o.state = o.rest;
      }
      if (o.state != o.rest) out.add(o.since, from, subject, kind + " " + o.state, false);
      o.state = detail.substr(arrow + 4);
      o.since = from;
      continue;
    }
    const double to = f[1].empty() ? end_s : std::atof(f[1].c_str());
    std::string category = kind;
    if (kind == "leader") category += " " + detail.substr(0, detail.find(','));
    out.add(from, to, kind == "drain" ? "backlog" : subject, category, f[5] == "1");
  }
  for (const auto& [key, o] : open) {
    if (o.state != o.rest) out.add(o.since, end_s, key.substr(key.find('\n') + 1), o.kind + " " + o.state, false);
  }
  return out;
}

}  // namespace

std::optional<GnuplotChart> lanes_chart(const std::vector<std::vector<std::string>>& events, double end_s, bool hours) {
  const LaneBars found = lane_bars(events, end_s);
  if (found.bars.empty()) return std::nullopt;
  const std::vector<std::string>& lanes = found.lanes;
  const std::vector<std::string>& categories = found.categories;
  RELAYSIM_ASSERT(found.colours.size() == categories.size(), "a colour for every category");
  const double div = hours ? 3600 : 60;
  GnuplotChart c;
  c.name = "lanes";
  c.title = "Timeline: faults, breakers, modes and leaders, by subject";
  std::string& data = c.data.emplace_back("lanes.dat", std::string()).second;
  for (const LaneBars::Bar& b : found.bars) {
    const double h = b.fault ? 0.42 : 0.28;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.8g %.8g %zu %.2f %zu\n", (b.from + b.to) / 2 / div, (b.to - b.from) / 2 / div, b.lane, h, b.category);
    data += buf;
  }
  std::string ytics = "set ytics (";
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    ytics += std::string(i ? ", " : "") + gp_string(shortened(lanes[i], kLaneName)) + " " + std::to_string(i);
  }
  ytics += ")\n";
  // lanes.dat is whitespace-separated, as series.dat is (chart_start reads commas).
  c.script = chart_start(c.name, static_cast<int>(std::max<std::size_t>(220, 90 + 22 * lanes.size()))) +
             "set datafile separator whitespace\nset grid xtics\nset key outside right top noenhanced\n" + time_frame() + ytics +
             "set yrange [" + std::to_string(lanes.size()) + "-0.3:-0.7]\nset xrange [0:" + number(end_s / div) + "]\n" +
             time_axis(hours) + "set style fill solid 0.85 noborder\nplot ";
  for (std::size_t k = 0; k < categories.size(); ++k) {
    c.script += std::string(k ? ", " : "") + "'lanes.dat' using 1:(column(5) == " + std::to_string(k) +
                " ? column(3) : NaN):2:4 with boxxyerror lc rgb '" + found.colours[k] + "' title " + gp_string(categories[k]);
  }
  c.script += "\n";
  return c;
}

namespace {

// How a sweep's first axis is drawn along x: where each of its values goes, and the label's unit.
struct SweepX {
  bool numeric = false;          // else a category each, at 1, 2, ...
  std::string unit;              // "minutes", "%", "per second"; "" for plain numbers and categories
  std::map<std::string, double> at;
};

std::optional<double> plain_number(std::string_view s) {
  const std::string t(s);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Past this an axis' value is no position a chart can pad around (its span would overflow).
constexpr double kLargestX = 1e15;

SweepX sweep_x(const std::vector<SweepChartPoint>& points) {
  std::vector<std::string> values;  // distinct, in the points' order
  for (const SweepChartPoint& p : points) {
    if (std::find(values.begin(), values.end(), p.x) == values.end()) values.push_back(p.x);
  }
  // Each reading of a value as a number, tried in turn: the first that reads every value wins.
  using Reading = std::optional<double> (*)(const std::string&);
  const Reading readings[] = {
      [](const std::string& s) { return plain_number(s); },
      [](const std::string& s) -> std::optional<double> {
        double seconds = 0;
        if (!parse_duration_seconds(s, seconds) || !std::isfinite(seconds)) return std::nullopt;
        return seconds;
      },
      [](const std::string& s) -> std::optional<double> {
        if (s.size() < 2 || s.back() != '%') return std::nullopt;
        return plain_number(std::string_view(s).substr(0, s.size() - 1));
      },
      [](const std::string& s) -> std::optional<double> {
        double per_second = 0;
        if (!parse_rate(s, per_second) || !std::isfinite(per_second)) return std::nullopt;
        return per_second;
      }};
  SweepX out;
  for (std::size_t r = 0; r < std::size(readings) && !values.empty(); ++r) {
    std::map<std::string, double> at;
    double most = 0;
    for (const std::string& v : values) {
      const std::optional<double> x = readings[r](v);
      if (!x || std::fabs(*x) > kLargestX) break;
      at[v] = *x;
      most = std::max(most, std::fabs(*x));
    }
    if (at.size() != values.size()) continue;
    out.numeric = true;
    double divisor = 1;
    if (r == 1) {  // durations: in the one unit that suits the longest
      const auto [d, unit] = most >= 7200 ? std::pair{3600.0, "hours"}
                             : most >= 120 ? std::pair{60.0, "minutes"}
                             : most >= 1 || most == 0 ? std::pair{1.0, "seconds"}
                                                      : std::pair{0.001, "milliseconds"};
      divisor = d;
      out.unit = unit;
    } else if (r == 2) {
      out.unit = "%";
    } else if (r == 3) {
      out.unit = "per second";
    }
    for (auto& [v, x] : at) x /= divisor;
    out.at = std::move(at);
    return out;
  }
  for (std::size_t i = 0; i < values.size(); ++i) out.at[values[i]] = static_cast<double>(i + 1);
  return out;
}

// [low, high] holding every one of `v`, widened by `pad` of its span on each side: a span of
// nothing (a metric the same everywhere) is widened to reach 0 (`full` for a percentage) first.
std::pair<double, double> padded_range(double low, double high, double pad, double full) {
  if (high == low) {
    const double v = low;
    low = v == 0 ? 0 : v < 0 ? (full > 0 ? std::min(v, -full) : 2 * v) : 0;
    high = v == 0 ? (full > 0 ? full : 1) : v < 0 ? 0 : (full > 0 ? std::max(v, full) : 2 * v);
  }
  const double margin = (high - low) * pad;
  return {low - margin, high + margin};
}

}  // namespace

GnuplotChart sweep_chart(std::size_t index, const std::string& metric, const std::string& unit_suffix, const std::string& axis,
                         bool pooled, const std::vector<SweepChartPoint>& points) {
  RELAYSIM_ASSERT(!points.empty(), "a sweep's chart draws a point");
  GnuplotChart c;
  // Numbered always, so no two charts share a file (a metric "a" second and one named "a-2" first).
  c.name = "sweep-" + file_stem(metric) + "-" + std::to_string(index + 1);
  c.title = metric + " against " + axis;
  const bool percent = unit_suffix == " (%)";
  const double scale = percent ? 100 : 1;
  const SweepX sx = sweep_x(points);

  // A curve for each combination of the other axes' values, in the points' order, its points in
  // the order of x (a band is the area between its bounds from one point to the next).
  std::vector<std::string> curve_names;
  std::vector<std::vector<const SweepChartPoint*>> curves;
  for (const SweepChartPoint& p : points) {
    const auto k = static_cast<std::size_t>(std::find(curve_names.begin(), curve_names.end(), p.curve) - curve_names.begin());
    if (k == curve_names.size()) {
      curve_names.push_back(p.curve);
      curves.emplace_back();
    }
    curves[k].push_back(&p);
  }
  const auto bounded = [](const SweepChartPoint& p) { return std::isfinite(p.low) && std::isfinite(p.high) && std::isfinite(p.value); };
  std::string& data = c.data.emplace_back(c.name + ".dat", std::string()).second;
  std::vector<bool> band(curves.size(), false), bars(curves.size(), false);
  double x_low = INFINITY, x_high = -INFINITY, y_low = INFINITY, y_high = -INFINITY;
  std::vector<std::string> infinite, absent;  // where the value is infinite, or none, as the axis names the point
  for (std::size_t k = 0; k < curves.size(); ++k) {
    std::vector<const SweepChartPoint*>& curve = curves[k];
    std::stable_sort(curve.begin(), curve.end(),
                     [&](const SweepChartPoint* a, const SweepChartPoint* b) { return sx.at.at(a->x) < sx.at.at(b->x); });
    if (k > 0) data += "\n\n";  // gnuplot's next index
    for (std::size_t i = 0; i < curve.size(); ++i) {
      const SweepChartPoint& p = *curve[i];
      const double x = sx.at.at(p.x);
      x_low = std::min(x_low, x);
      x_high = std::max(x_high, x);
      for (const double v : {p.low * scale, p.high * scale, p.value * scale}) {
        if (std::isfinite(v)) {
          y_low = std::min(y_low, v);
          y_high = std::max(y_high, v);
        }
      }
      const std::string where = p.curve.empty() ? p.x : p.x + " (" + p.curve + ")";
      if (std::isinf(p.value)) infinite.push_back(where);
      if (std::isnan(p.value)) absent.push_back(where);
      bars[k] = bars[k] || bounded(p);
      band[k] = band[k] || (i > 0 && bounded(p) && bounded(*curve[i - 1]));
      // x, low, high, value, and the value again only where the point has its interval (the
      // error bar of a point without one would be drawn at the frame).
      data += number(x) + " " + datum(p.low * scale) + " " + datum(p.high * scale) + " " + datum(p.value * scale) + " " +
              (bounded(p) ? datum(p.value * scale) : std::string("NaN")) + "\n";
    }
  }
  // What the chart cannot show, said beside it: a point's value infinite (a backlog that never
  // drained) or absent (nothing to measure in any run).
  for (const auto& [what, where] : {std::pair{"; infinite (not drawn) at ", &infinite}, std::pair{"; no value at ", &absent}}) {
    if (where->empty()) continue;
    c.title += what;
    for (std::size_t i = 0; i < where->size() && i < 8; ++i) c.title += (i ? ", " : "") + (*where)[i];
    if (where->size() > 8) c.title += " and " + std::to_string(where->size() - 8) + " more";
  }

  c.script = chart_start(c.name) + "set datafile separator whitespace\nset key outside right top noenhanced\nset xlabel " +
             gp_string(axis + (sx.unit.empty() ? "" : " (" + sx.unit + ")")) + "\nset ylabel " + gp_string(metric + unit_suffix) + "\n";
  // The axis' own values as its tics, when they are few and far enough apart to be read.
  std::vector<std::pair<double, std::string>> tics;
  for (const auto& [text, x] : sx.at) tics.emplace_back(x, text);
  std::sort(tics.begin(), tics.end());
  bool spaced = tics.size() <= 12;
  for (std::size_t i = 1; i < tics.size() && spaced; ++i) spaced = tics[i].first - tics[i - 1].first >= (x_high - x_low) / 30;
  if (!sx.numeric || (spaced && !tics.empty())) {
    c.script += "set xtics (";
    for (std::size_t i = 0; i < tics.size(); ++i) {
      c.script += std::string(i ? ", " : "") + (sx.numeric ? std::string() : gp_string(tics[i].second) + " ") + number(tics[i].first);
    }
    c.script += ")\n";
  }
  // Room on every side: no point sits on the frame, where half of it would be cut off.
  const auto [xa, xb] = sx.numeric ? padded_range(x_low, x_high, 0.05, 0) : std::pair{0.5, x_high + 0.5};
  c.script += "set xrange [" + number(xa) + ":" + number(xb) + "]\n";
  if (std::isfinite(y_low)) {
    const auto [ya, yb] = padded_range(y_low, y_high, 0.08, percent ? 100 : 0);
    if (std::isfinite(ya) && std::isfinite(yb)) c.script += "set yrange [" + number(ya) + ":" + number(yb) + "]\n";
  }

  // The bands first, then the bars of each point's interval (seen where a point has no
  // neighbour to make a band with), then the lines over them.
  static const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"};
  const bool one = curves.size() == 1;
  const bool any_band = std::find(band.begin(), band.end(), true) != band.end();
  const bool any_bars = std::find(bars.begin(), bars.end(), true) != bars.end();
  const std::string file = "'" + c.name + ".dat'";
  std::vector<std::string> plots;
  const auto colour = [&](std::size_t k) { return std::string(" lc rgb '") + kColours[k % std::size(kColours)] + "'"; };
  const auto source = [&](std::size_t k) { return file + " index " + std::to_string(k); };
  bool titled = false;  // the key names the interval once
  for (std::size_t k = 0; k < curves.size(); ++k) {
    if (!band[k]) continue;
    plots.push_back(source(k) + " using 1:2:3 with filledcurves fc rgb '" + kColours[k % std::size(kColours)] +
                    "' fs transparent solid 0.25 noborder " + (titled ? "notitle" : one ? "title '95% interval'" : "title '95% intervals'"));
    titled = true;
  }
  for (std::size_t k = 0; k < curves.size(); ++k) {
    if (!bars[k]) continue;
    plots.push_back(source(k) + " using 1:5:2:3 with yerrorbars" + colour(k) + " lw 1 pt -1 " +
                    (titled ? "notitle" : one ? "title '95% interval'" : "title '95% intervals'"));
    titled = true;
  }
  for (std::size_t k = 0; k < curves.size(); ++k) {
    // A latency percentile the sweep pooled is the percentile of every run's durations, not the
    // mean of the runs' own.
    const std::string what = one ? (pooled ? "every run pooled" : "mean") : curve_names[k];
    plots.push_back(source(k) + " using 1:4 with linespoints lw 1.6 pt 7" + colour(k) + " title " +
                    gp_string(what + (any_band || any_bars ? "" : " (no 95% interval)")));
  }
  c.script += "plot ";
  for (std::size_t i = 0; i < plots.size(); ++i) c.script += (i ? ", " : "") + plots[i];
  c.script += "\n";
  return c;
}

}  // namespace relaysim::cli
