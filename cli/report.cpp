// `relaysim report DIR`: a page a person reads, from what `run --timeseries DIR` or `sweep --out
// DIR` wrote — report.html (self-contained: the charts are inline SVG) and report.md (beside the
// SVG files). The charts are drawn by gnuplot from the CSV files as they are, so what a chart
// shows is what the files say; which chart a column goes in is declared with the column
// (SeriesColumn::panel).
#include "cli/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/result_dir.h"
#include "sim/report/series.h"
#include "sim/system.h"

namespace relaysim::cli {

namespace {

using namespace relaysim::sim;
namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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

// A string gnuplot reads inside single quotes.
std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// The start of every chart's script: an SVG of one size, reading the CSV files as written.
std::string chart_start(const fs::path& dir, const std::string& name) {
  return "set terminal svg size 960,340 dynamic font 'sans,11' background '#ffffff'\nset output " +
         gp_quote((dir / (name + ".svg")).string()) + "\nset datafile separator ','\nset datafile missing ''\nset grid\n";
}

struct Shade {
  double from = 0, to = 0;
  std::string label;
};

struct Chart {
  std::string name;   // file stem: panel-flow
  std::string title;
  std::string svg;    // as gnuplot drew it
};

// Runs gnuplot on `script`; says what went wrong.
std::optional<std::string> gnuplot(const fs::path& dir, const std::string& name, const std::string& script) {
  const fs::path file = dir / (name + ".gp");
  if (auto bad = write_text(file, script)) return bad;
  const std::string cmd = "gnuplot " + gp_quote(file.string()) + " 2> " + gp_quote((dir / (name + ".log")).string());
  const int rc = std::system(cmd.c_str());
  if (rc != 0) return "gnuplot failed on " + file.string() + ": " + read_all(dir / (name + ".log"));
  fs::remove(dir / (name + ".log"));
  fs::remove(file);
  return std::nullopt;
}

std::string svg_body(const fs::path& p) {
  std::string s = read_all(p);
  const std::size_t start = s.find("<svg");
  return start == std::string::npos ? s : s.substr(start);
}

const char* kPanelTitles[] = {"What arrived and what finished, per window", "Backlog: what waits or is in flight, at each window's end",
                              "Latency of what finished in each window", "Calls to dependencies and retries, per window",
                              "Health: utilisation, breakers, pods, faults"};

std::string page(const std::string& title, const std::string& intro_html, const std::vector<Chart>& charts, const std::string& tables_html) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                  "</title>\n<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}"
                  "h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}table{border-collapse:collapse;margin:.5em 0}"
                  "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;font-size:.9em}.ok{color:#080}.fail{color:#b00}"
                  "figure{margin:1em 0}figcaption{font-size:.85em;color:#555}</style></head><body>\n";
  h += "<h1>" + html_escape(title) + "</h1>\n" + intro_html;
  for (const Chart& c : charts) {
    h += "<h2>" + html_escape(c.title) + "</h2>\n<figure>" + c.svg + "</figure>\n";
  }
  h += tables_html + "</body></html>\n";
  return h;
}

// A JSON file of the directory, or why it is not one (`what`: "a run's result").
std::optional<nlohmann::json> read_json(const fs::path& p, const std::string& what, std::string& problem) {
  try {
    return nlohmann::json::parse(read_all(p));
  } catch (const nlohmann::json::exception& e) {
    problem = p.string() + ": not " + what + ": " + e.what();
    return std::nullopt;
  }
}

int run_report(const fs::path& dir) {
  std::string problem;
  const auto read = read_json(dir / "result.json", "a run's result", problem);
  if (!read) return fail_usage(problem);
  const nlohmann::json& result = *read;
  const std::string system_name = result.value("system", "");
  const System* system = find_system(system_name);
  if (system == nullptr) return fail_usage((dir / "result.json").string() + ": no system named '" + system_name + "'");
  std::ifstream series(dir / "series.csv");
  std::string header;
  std::getline(series, header);
  const std::vector<std::string> names = csv_fields(header);
  if (names.size() < 3 || names[0] != "start_s") return fail_usage((dir / "series.csv").string() + ": not a time series");
  const double end_s = result.value("virtual_seconds", 0.0);
  const bool hours = end_s > 3 * 3600;
  const std::string x = hours ? "(column('end_s')/3600)" : "(column('end_s')/60)";

  // Fault windows, shaded in every chart.
  std::vector<Shade> shades;
  std::vector<std::vector<std::string>> events;
  {
    std::ifstream t(dir / "timeline.csv");
    std::string line;
    std::getline(t, line);
    while (std::getline(t, line)) {
      std::vector<std::string> f = csv_fields(line);
      if (f.size() < 6) continue;
      events.push_back(f);
      const double from = std::atof(f[0].c_str());
      const double to = f[1].empty() ? end_s : std::atof(f[1].c_str());
      if (to > from && f[5] == "1" && shades.size() < 40) {
        shades.push_back({from, to, f[2] + " " + f[3]});
      }
    }
  }
  std::string shade_cmds;
  for (std::size_t i = 0; i < shades.size(); ++i) {
    const double div = hours ? 3600 : 60;
    char buf[256];
    std::snprintf(buf, sizeof buf, "set object %zu rect from %.6g, graph 0 to %.6g, graph 1 behind fc rgb '#f6d5d5' fs solid 0.7 noborder\n",
                  i + 1, shades[i].from / div, shades[i].to / div);
    shade_cmds += buf;
  }

  std::vector<Chart> charts;
  const auto columns = system->series();
  for (int panel = 0; panel <= static_cast<int>(Panel::health); ++panel) {
    std::vector<const SeriesColumn*> in;
    for (const SeriesColumn& c : columns) {
      const bool present = std::find(names.begin(), names.end(), std::string(c.name)) != names.end();
      if (present && static_cast<int>(c.panel) == panel) in.push_back(&c);
    }
    if (in.empty()) continue;
    const std::string name = "panel-" + std::string(to_string(static_cast<Panel>(panel)));
    std::string script = chart_start(dir, name) + "set key outside right top\n";
    script += std::string("set xlabel 'virtual time (") + (hours ? "hours" : "minutes") + ")'\n";
    script += shade_cmds;
    const bool latency = panel == static_cast<int>(Panel::latency);
    if (latency) script += "set logscale y\nset ylabel 'seconds'\n";
    bool ratio_axis = false;
    std::string plot = "plot ";
    for (std::size_t i = 0; i < in.size(); ++i) {
      const SeriesColumn& c = *in[i];
      const bool ratio = c.unit == Unit::ratio;
      ratio_axis = ratio_axis || ratio;
      const std::string y = ratio ? "(100*column('" + std::string(c.name) + "'))" : "(column('" + std::string(c.name) + "'))";
      plot += std::string(i ? ", " : "") + gp_quote((dir / "series.csv").string()) + " using " + x + ":" + y +
              " with lines lw 1.6" + (ratio ? " axes x1y2" : "") + " title " + gp_quote(std::string(c.name) + (ratio ? " (%)" : ""));
    }
    if (ratio_axis) script += "set y2tics\nset y2range [0:100]\nset y2label '%'\n";
    script += "set key noenhanced\n" + plot + "\n";
    if (auto bad = gnuplot(dir, name, script)) return fail_incomplete(*bad);
    charts.push_back({name, kPanelTitles[panel], svg_body(dir / (name + ".svg"))});
  }

  // The tables: the verdict, expectations, a few figures, the timeline.
  const std::string title = "relaysim run: " + result.value("scenario", std::string("?")) + " (" + system_name + ")";
  std::string intro = "<p>Verdict: <b class=\"" + std::string(result.value("verdict", "") == "pass" ? "ok" : "fail") + "\">" +
                      html_escape(result.value("verdict", "?")) + "</b>; " + html_escape(result.value("ending", "")) + " at virtual " +
                      std::to_string(static_cast<long long>(end_s)) + " s; seed " + std::to_string(result.value("seed", 0ull)) +
                      ", store " + html_escape(result.value("store", "")) + ", fingerprint " + html_escape(result.value("fingerprint", "")) +
                      ". Shaded: fault windows (outages, store faults, pauses, crashes until their restart).</p>\n";
  std::string md = "# " + title + "\n\nVerdict: **" + result.value("verdict", "?") + "**. Shaded in the charts: fault windows.\n\n";
  std::string tables;
  if (result.contains("expectations") && !result["expectations"].empty()) {
    tables += "<h2>Expectations</h2>\n<table><tr><th></th><th>expectation</th><th>actual</th></tr>\n";
    md += "## Expectations\n\n| | expectation | actual |\n|---|---|---|\n";
    for (const auto& e : result["expectations"]) {
      const bool ok = e.value("ok", false);
      const std::string actual = e.contains("actual") && !e["actual"].is_null() ? e["actual"].dump() : "n/a";
      tables += std::string("<tr><td class=\"") + (ok ? "ok\">ok" : "fail\">FAIL") + "</td><td>" + html_escape(e.value("expr", "")) +
                "</td><td>" + html_escape(actual) + "</td></tr>\n";
      md += std::string("| ") + (ok ? "ok" : "FAIL") + " | " + e.value("expr", "") + " | " + actual + " |\n";
    }
    tables += "</table>\n";
    md += "\n";
  }
  for (const Chart& c : charts) md += "## " + c.title + "\n\n![" + c.title + "](" + c.name + ".svg)\n\n";
  if (!events.empty()) {
    tables += "<h2>Timeline</h2>\n<table><tr><th>from (s)</th><th>to (s)</th><th>what</th><th>of</th><th>detail</th></tr>\n";
    md += "## Timeline\n\n| from (s) | to (s) | what | of | detail |\n|---|---|---|---|---|\n";
    std::size_t shown = 0;
    for (const auto& f : events) {
      if (++shown > 200) break;
      tables += "<tr><td>" + html_escape(f[0]) + "</td><td>" + html_escape(f[1]) + "</td><td>" + html_escape(f[2]) + "</td><td>" +
                html_escape(f[3]) + "</td><td>" + html_escape(f[4]) + "</td></tr>\n";
      md += "| " + f[0] + " | " + f[1] + " | " + f[2] + " | " + f[3] + " | " + f[4] + " |\n";
    }
    tables += "</table>\n";
    if (events.size() > 200) tables += "<p>… and " + std::to_string(events.size() - 200) + " more in timeline.csv.</p>\n";
  }
  if (auto bad = write_text(dir / "report.html", page(title, intro, charts, tables))) return fail_incomplete(*bad);
  if (auto bad = write_text(dir / "report.md", md)) return fail_incomplete(*bad);
  std::cout << "report: " << (dir / "report.html").string() << " and report.md, with " << charts.size() << " charts\n";
  return kExitPass;
}

int sweep_report(const fs::path& dir) {
  std::string problem;
  const auto read = read_json(dir / "sweep.json", "a sweep's description", problem);
  if (!read) return fail_usage(problem);
  const nlohmann::json& sweep = *read;
  if (!sweep.contains("axes") || sweep["axes"].empty()) return fail_usage((dir / "sweep.json").string() + ": a sweep without axes");
  const std::string axis = sweep["axes"][0].value("path", "");
  std::vector<std::string> metrics = sweep.value("expected", std::vector<std::string>{});
  if (metrics.empty()) metrics = {"latency_p99_s"};
  const System* system = find_system(sweep.value("system", ""));
  std::vector<Chart> charts;
  for (const std::string& m : metrics) {
    Unit unit = Unit::number;
    if (system != nullptr) {
      if (const auto ref = find_metric(system->metrics(), m)) unit = system->metrics()[ref->index].unit;
    }
    const std::string name = "sweep-" + m;
    const std::string scale = unit == Unit::ratio ? "100*" : "";
    std::string script = chart_start(dir, name) + "set key noenhanced\nset xlabel " + gp_quote(axis) + " noenhanced\n";
    script += "set ylabel " + gp_quote(m + (unit == Unit::ratio ? " (%)" : unit == Unit::seconds ? " (s)" : "")) + " noenhanced\n";
    const std::string filter = "(strcol('metric') eq " + gp_quote(m) + " ? " + scale + "column('mean') : NaN)";
    const std::string lo = "(strcol('metric') eq " + gp_quote(m) + " ? " + scale + "column('ci95_low') : NaN)";
    const std::string hi = "(strcol('metric') eq " + gp_quote(m) + " ? " + scale + "column('ci95_high') : NaN)";
    const std::string file = gp_quote((dir / "summary.csv").string());
    script += "plot " + file + " using (column(2)):" + lo + ":" + hi + " with filledcurves fc rgb '#c6dbef' title '95% interval', " + file +
              " using (column(2)):" + filter + " with linespoints lw 1.6 pt 7 title 'mean'\n";
    if (auto bad = gnuplot(dir, name, script)) return fail_incomplete(*bad);
    charts.push_back({name, m + " against " + axis, svg_body(dir / (name + ".svg"))});
  }
  const std::string title = "relaysim sweep: " + sweep.value("file", std::string("?"));
  std::string md = "# " + title + "\n\n";
  for (const Chart& c : charts) md += "## " + c.title + "\n\n![" + c.title + "](" + c.name + ".svg)\n\n";
  const std::string intro = "<p>Each point: the mean over " + std::to_string(sweep.value("replications", 0)) +
                            " replications, with its 95% confidence interval (summary.csv).</p>\n";
  if (auto bad = write_text(dir / "report.html", page(title, intro, charts, ""))) return fail_incomplete(*bad);
  if (auto bad = write_text(dir / "report.md", md)) return fail_incomplete(*bad);
  std::cout << "report: " << (dir / "report.html").string() << " and report.md, with " << charts.size() << " charts\n";
  return kExitPass;
}

}  // namespace


int report_command(const std::string& dir) {
  const fs::path d(dir);
  std::error_code ec;
  if (!fs::is_directory(d, ec)) return fail_usage(dir + " is not a directory (give what run --timeseries DIR or sweep --out DIR wrote)");
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) return fail_usage("gnuplot is not installed (Debian: gnuplot-nox; ./relaysim build installs it)");
  if (fs::exists(d / "series.csv") && fs::exists(d / "result.json")) return run_report(d);
  if (fs::exists(d / "summary.csv") && fs::exists(d / "sweep.json")) return sweep_report(d);
  return fail_usage(dir + " holds neither a run's series.csv and result.json nor a sweep's summary.csv and sweep.json");
}

}  // namespace relaysim::cli
