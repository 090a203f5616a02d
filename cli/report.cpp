// `relaysim report DIR`: a page a person reads, from what `run --timeseries DIR` or `sweep --out
// DIR` wrote — report.html (self-contained: the charts are inline SVG) and report.md (beside the
// SVG files). The charts are drawn by gnuplot from the CSV files as they are, so what a chart
// shows is what the files say; which chart a column goes in is declared with the column
// (SeriesColumn::panel).
//
// Everything in a result directory is data, whoever wrote it: the files are checked before
// anything is drawn, every name reaches gnuplot and Graphviz only as a quoted literal
// (cli/report_text.h), the programs run without a shell in a directory of the report's own, and
// each output replaces what was there (a planted symbolic link is replaced, never written
// through: write_text).
#include "cli/report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/report_text.h"
#include "cli/result_dir.h"
#include "model/core/assert.h"
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

// Runs `argv` (no shell: every argument is one string) in `cwd`, its standard error to `log`;
// says what went wrong.
std::optional<std::string> run_tool(const std::vector<std::string>& argv, const fs::path& cwd, const fs::path& log) {
  RELAYSIM_ASSERT(!argv.empty(), "a program to run");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The files first: they are named as the caller sees them, before the move into `cwd`.
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return argv[0] + " could not be started: " + std::strerror(spawned);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return argv[0] + ": " + std::strerror(errno);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
  std::string said = read_all(log);
  if (said.size() > 2000) said = said.substr(0, 2000) + "...";
  return argv[0] + (WIFEXITED(status) ? " exited with " + std::to_string(WEXITSTATUS(status)) : std::string(" was killed")) +
         (said.empty() ? std::string() : ": " + printable(said));
}

// Whether `program` can be run at all.
bool installed(const std::string& program, const std::string& version_flag) {
  return !run_tool({program, version_flag}, fs::temp_directory_path(), "/dev/null");
}

// A directory of the report's own, made new inside the result directory (the charts' scripts,
// data and drawings are made there, away from anything the result directory holds) and removed
// with everything in it when the report is done.
class WorkDir {
 public:
  explicit WorkDir(const fs::path& in) {
    std::string t = (in / ".relaysim-report-XXXXXX").string();
    if (::mkdtemp(t.data()) != nullptr) path_ = t;
  }
  ~WorkDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  bool made() const { return !path_.empty(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct Chart {
  std::string name;   // file stem: panel-flow
  std::string title;
  std::string svg;    // as gnuplot drew it
};

std::string svg_body(const std::string& s) {
  const std::size_t start = s.find("<svg");
  return start == std::string::npos ? s : s.substr(start);
}

// Draws `chart` with gnuplot in `work` and puts its SVG into `dir` (replacing, never writing
// through, whatever was there); says what went wrong. `what`: the input it was drawn from.
std::optional<std::string> draw(const fs::path& work, const fs::path& dir, const GnuplotChart& chart, const std::string& what,
                                std::vector<Chart>& charts) {
  // The last line of defence: a script with anything in it but the charts' own commands and
  // quoted literals is a bug of the report, never handed to gnuplot.
  RELAYSIM_ASSERT(gp_inert(chart.script), "a chart's script holds nothing gnuplot would run");
  for (const auto& [name, content] : chart.data) {
    if (auto bad = write_text(work / name, content)) return bad;
  }
  if (auto bad = write_text(work / (chart.name + ".gp"), chart.script)) return bad;
  if (auto bad = run_tool({"gnuplot", chart.name + ".gp"}, work, work / (chart.name + ".log"))) {
    return "the chart '" + chart.title + "' could not be drawn from " + what + ": " + *bad;
  }
  const std::string svg = read_all(work / (chart.name + ".svg"));
  if (auto bad = write_text(dir / (chart.name + ".svg"), svg)) return bad;
  charts.push_back({chart.name, chart.title, svg_body(svg)});
  return std::nullopt;
}

// Draws the Graphviz graph `dot` in `work` as `stem`.svg, and puts it (and the graph, with
// `keep_dot`) into `dir`; says what went wrong.
std::optional<std::string> graphviz(const fs::path& work, const fs::path& dir, const std::string& stem, const std::string& dot,
                                    bool keep_dot, std::string* svg_out = nullptr) {
  RELAYSIM_ASSERT(file_stem(stem) == stem, "a drawing's file is a plain name of its own");
  if (auto bad = write_text(work / (stem + ".dot"), dot)) return bad;
  if (auto bad = run_tool({"dot", "-Tsvg", stem + ".dot", "-o", stem + ".svg"}, work, work / (stem + ".log"))) {
    return "Graphviz could not draw " + stem + ": " + *bad;
  }
  const std::string svg = read_all(work / (stem + ".svg"));
  if (auto bad = write_text(dir / (stem + ".svg"), svg)) return bad;
  if (keep_dot) {
    if (auto bad = write_text(dir / (stem + ".dot"), dot)) return bad;
  }
  if (svg_out != nullptr) *svg_out = svg_body(svg);
  return std::nullopt;
}

// Nothing when Graphviz is installed, else the refusal to print.
std::optional<std::string> graphviz_missing() {
  if (installed("dot", "-V")) return std::nullopt;
  return "Graphviz is not installed (Debian: graphviz; ./relaysim build installs it)";
}

const char* kPanelTitles[] = {"What arrived and what finished, per window", "Backlog: what waits or is in flight, at each window's end",
                              "Latency of what finished in each window", "Calls to dependencies and retries, per window",
                              "Health: utilisation, breakers, pods, faults"};
// The groups' columns are drawn a chart per column, each titled by it (draw_panels).
static_assert(std::size(kPanelTitles) == static_cast<std::size_t>(Panel::groups), "a title for every panel but the groups'");

std::string page(const std::string& title, const std::string& intro_html, const std::vector<Chart>& charts, const std::string& tables_html) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                  "</title>\n<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}"
                  "h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}table{border-collapse:collapse;margin:.5em 0}"
                  "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;font-size:.9em}.ok{color:#080}.fail{color:#b00}"
                  "figure{margin:1em 0}figure svg{max-width:100%;height:auto}figcaption{font-size:.85em;color:#555}</style></head><body>\n";
  h += "<h1>" + html_escape(title) + "</h1>\n" + intro_html;
  for (const Chart& c : charts) {
    h += "<h2 id=\"" + html_escape(c.name) + "\">" + html_escape(c.title) + "</h2>\n<figure>" + c.svg + "</figure>\n";
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

// A CSV file as rows of fields, or why it is not what `what` says: every row as many fields as
// the header, a finite number (or nothing) in every column whose header `numeric` names — or an
// infinite one ("inf", "-inf"), with `infinite_ok` — and nothing `row_problem` (if given) finds
// wrong with a row.
using RowCheck = std::function<std::optional<std::string>(const std::vector<std::string>&)>;
std::optional<std::vector<std::vector<std::string>>> read_csv(const fs::path& p, const std::string& what,
                                                               const std::function<bool(const std::string&)>& numeric,
                                                               std::string& problem, const RowCheck& row_problem = {},
                                                               bool infinite_ok = false) {
  std::ifstream in(p);
  if (!in) {
    problem = p.string() + ": cannot be read";
    return std::nullopt;
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> f;
  std::size_t lines = 0;
  while (true) {
    const std::size_t first_line = lines + 1;
    if (!read_csv_record(in, f, lines)) break;
    const std::string where = p.string() + ":" + std::to_string(first_line) + ": ";
    if (!rows.empty() && f.size() != rows.front().size()) {
      problem = where + "not " + what + ": " + std::to_string(f.size()) + " fields where the header has " +
                std::to_string(rows.front().size());
      return std::nullopt;
    }
    for (std::size_t i = 0; !rows.empty() && i < f.size(); ++i) {
      if (f[i].empty() || !numeric(rows.front()[i])) continue;
      char* end = nullptr;
      const double v = std::strtod(f[i].c_str(), &end);
      if (end != f[i].c_str() + f[i].size() || std::isnan(v) || (std::isinf(v) && !infinite_ok)) {
        problem = where + "not " + what + ": the " + printable(rows.front()[i]) + " field is '" + printable(f[i]) +
                  "', not a number";
        return std::nullopt;
      }
    }
    if (!rows.empty() && row_problem) {
      if (auto bad = row_problem(f)) {
        problem = where + "not " + what + ": " + *bad;
        return std::nullopt;
      }
    }
    rows.push_back(f);
  }
  if (rows.empty()) {
    problem = p.string() + ": not " + what + ": empty";
    return std::nullopt;
  }
  return rows;
}

// The timeline's rows (timeline.csv, if there is one): start, end (empty: to the end), what, of,
// detail, fault (0 or 1); or why it is not a timeline.
std::optional<std::vector<std::vector<std::string>>> read_timeline(const fs::path& dir, std::string& problem) {
  const fs::path p = dir / "timeline.csv";
  if (!fs::exists(p)) return std::vector<std::vector<std::string>>{};
  auto rows = read_csv(
      p, "a timeline", [](const std::string& c) { return c == "start_s" || c == "end_s"; }, problem,
      [](const std::vector<std::string>& f) -> std::optional<std::string> {
        if (f.size() != 6) return std::string("a row needs 6 fields");
        if (f[0].empty()) return "a row needs its start";
        if (f[5] != "0" && f[5] != "1") return "the fault field is '" + printable(f[5]) + "', not 0 or 1";
        return std::nullopt;
      });
  if (!rows) return std::nullopt;
  const std::vector<std::string> header{"start_s", "end_s", "kind", "subject", "detail", "fault"};
  if (rows->front() != header) {
    problem = p.string() + ":1: not a timeline: the header is not start_s,end_s,kind,subject,detail,fault";
    return std::nullopt;
  }
  rows->erase(rows->begin());
  return rows;
}

// A run's report as it is made: what it is drawn from (every file read and checked before
// anything is drawn), then the charts drawn from it.
// A column of series.csv the report draws: one of the system's, or one of each group's
// (`pending[slow]`: kGroupSeries or System::group_series), titled by the group's name.
struct DrawnColumn {
  std::size_t field = 0;  // of series.csv
  std::string title;
  Panel panel = Panel::flow;
  bool ratio = false;
  std::string_view kind;    // a group's column: which ("pending"); empty for the system's own
  bool per_window = false;  // a count per window, not a level
};

struct RunReport {
  fs::path dir;
  nlohmann::json result;
  std::string system_name;
  const System* system = nullptr;
  double end_s = 0;
  bool hours = false;
  std::vector<std::string> names;                // series.csv's header
  std::vector<std::vector<std::string>> rows;    // series.csv's, the header first
  std::vector<std::vector<std::string>> events;  // timeline.csv's
  std::vector<DrawnColumn> drawn;  // each column of series.dat after the first
  std::vector<Chart> charts;
};

// Reads the run's result, series and timeline into `run`; the exit code when they are not what
// `run --timeseries` writes.
std::optional<int> read_run(RunReport& run) {
  const fs::path& dir = run.dir;
  std::string problem;
  auto read = read_json(dir / "result.json", "a run's result", problem);
  if (!read) return fail_usage(problem);
  run.result = std::move(*read);
  const nlohmann::json& result = run.result;
  run.system_name = result.value("system", "");
  run.system = find_system(run.system_name);
  if (run.system == nullptr) {
    return fail_usage((dir / "result.json").string() + ": no system named '" + printable(run.system_name) + "'");
  }
  run.end_s = result.value("virtual_seconds", 0.0);
  if (!std::isfinite(run.end_s) || run.end_s < 0) return fail_usage((dir / "result.json").string() + ": virtual_seconds is not a time");
  std::ifstream series_in(dir / "series.csv");
  std::string header;
  std::getline(series_in, header);
  run.names = csv_fields(header);
  const std::vector<std::string>& names = run.names;
  if (names.size() < 3 || names[0] != "start_s" || names[1] != "end_s") {
    return fail_usage((dir / "series.csv").string() + ":1: not a time series: the header does not start with start_s,end_s");
  }
  auto rows = read_csv(dir / "series.csv", "a time series", [](const std::string&) { return true; }, problem);
  if (!rows) return fail_usage(problem);
  run.rows = std::move(*rows);
  auto events = read_timeline(dir, problem);
  if (!events) return fail_usage(problem);
  run.events = std::move(*events);
  run.hours = run.end_s > 3 * 3600;
  return std::nullopt;
}

// The columns of series.csv drawn: each of the system's the file has, then each group's.
std::vector<DrawnColumn> drawn_columns(const RunReport& run) {
  std::vector<DrawnColumn> drawn;
  for (const SeriesColumn& c : run.system->series()) {
    const auto at = std::find(run.names.begin(), run.names.end(), std::string(c.name));
    if (at != run.names.end()) drawn.push_back({static_cast<std::size_t>(at - run.names.begin()), std::string(c.name), c.panel, c.unit == Unit::ratio, {}, false});
  }
  const std::vector<SeriesColumn> each = group_columns(*run.system);
  for (std::size_t f = 2; f < run.names.size(); ++f) {
    const auto split = split_group(run.names[f]);
    if (!split) continue;
    for (const SeriesColumn& c : each) {
      if (split->first == c.name) drawn.push_back({f, std::string(split->second), c.panel, c.unit == Unit::ratio, c.name, c.per_window_count});
    }
  }
  return drawn;
}

// What gnuplot reads is numbers alone: each of the system's columns the file has, after the
// windows' ends, NaN where a window had nothing to measure.
std::string series_numbers(const RunReport& run) {
  std::string numbers;
  for (std::size_t r = 1; r < run.rows.size(); ++r) {
    const std::vector<std::string>& f = run.rows[r];
    numbers += f[1].empty() ? "NaN" : f[1];
    for (const DrawnColumn& c : run.drawn) numbers += " " + (f[c.field].empty() ? std::string("NaN") : f[c.field]);
    numbers += "\n";
  }
  return numbers;
}

// Draws the time series' panels from series.dat in `work`, each with the system's columns it
// declares and the fault windows shaded (each fault in its colour; one lasting nearly the whole
// run named instead); says what went wrong.
std::optional<std::string> draw_panels(RunReport& run, const fs::path& work, const FaultWindows& faults) {
  const std::string series_name = (run.dir / "series.csv").string();
  // The curves of the drawn columns `pick` takes (series.dat's column: the window's end first,
  // then the drawn ones).
  const auto curves_of = [&run](const auto& pick) {
    std::vector<SeriesCurve> curves;
    for (std::size_t i = 0; i < run.drawn.size(); ++i) {
      if (pick(run.drawn[i])) curves.push_back({i + 2, run.drawn[i].title, run.drawn[i].ratio});
    }
    return curves;
  };
  for (std::size_t panel = 0; panel < std::size(kPanelTitles); ++panel) {
    const auto curves = curves_of([panel](const DrawnColumn& c) { return c.kind.empty() && static_cast<std::size_t>(c.panel) == panel; });
    if (curves.empty()) continue;
    const GnuplotChart chart = panel_chart("panel-" + std::string(to_string(static_cast<Panel>(panel))), kPanelTitles[panel], curves,
                                           faults.shaded, run.hours, panel == static_cast<std::size_t>(Panel::latency), run.end_s,
                                           faults.whole_run);
    if (auto bad = draw(work, run.dir, chart, series_name, run.charts)) return bad;
  }
  // A chart for each of the groups' columns, a curve per group: "Each provider's submits, per window".
  std::vector<const DrawnColumn*> kinds;
  for (const DrawnColumn& c : run.drawn) {
    if (!c.kind.empty() && std::none_of(kinds.begin(), kinds.end(), [&c](const DrawnColumn* k) { return k->kind == c.kind; })) kinds.push_back(&c);
  }
  for (const DrawnColumn* k : kinds) {
    const auto curves = curves_of([k](const DrawnColumn& c) { return c.kind == k->kind; });
    const std::string title = "Each " + std::string(run.system->group_dimension()) + "'s " + std::string(k->kind) +
                              (k->per_window ? ", per window" : ", at each window's end");
    const GnuplotChart chart = panel_chart("groups-" + std::string(k->kind), title, curves, faults.shaded, run.hours, false, run.end_s,
                                           faults.whole_run);
    if (auto bad = draw(work, run.dir, chart, series_name, run.charts)) return bad;
  }
  return std::nullopt;
}

// Draws every chart of the run in `work`, in the order the page shows them; says what went wrong.
std::optional<std::string> draw_run_charts(RunReport& run, const fs::path& work, const FaultWindows& faults) {
  const fs::path& dir = run.dir;
  RELAYSIM_ASSERT(run.system != nullptr, "a run's result names its system");
  if (const std::string dot = pipeline_dot(*run.system, run.result); !dot.empty()) {
    std::string svg;
    if (auto bad = graphviz(work, dir, "pipeline", dot, false, &svg)) return bad;
    run.charts.push_back({"pipeline", "Pipeline: what flowed along each edge over the run", svg});
  }
  if (auto bad = draw_panels(run, work, faults)) return bad;
  if (const auto lanes = lanes_chart(run.events, run.end_s, run.hours)) {
    if (auto bad = draw(work, dir, *lanes, (dir / "timeline.csv").string(), run.charts)) return bad;
  }
  if (const auto cdf = latency_cdf(run.result)) {
    if (auto bad = draw(work, dir, cdf_chart(*cdf), (dir / "result.json").string(), run.charts)) return bad;
  }
  return std::nullopt;
}

// The expectations' table, when the run had any.
void expectation_tables(const nlohmann::json& result, std::string& tables, std::string& md) {
  if (!result.contains("expectations") || result["expectations"].empty()) return;
  tables += "<h2>Expectations</h2>\n<table><tr><th></th><th>expectation</th><th>actual</th></tr>\n";
  md += "## Expectations\n\n| | expectation | actual |\n|---|---|---|\n";
  for (const auto& e : result["expectations"]) {
    const bool ok = e.value("ok", false);
    // The figure in its unit, as the summary shows it ("1h17m52.924s", "100%"), where the result
    // says which; anything else as the JSON has it.
    const nlohmann::json& value = field(e, "actual");
    const nlohmann::json& unit_name = field(e, "unit");
    const std::optional<Unit> unit = unit_name.is_string() ? kUnitNames.parse(unit_name.get<std::string>()) : std::nullopt;
    const std::string actual = value.is_null()                  ? "n/a"
                               : value.is_number() && unit      ? value_text(*unit, value.get<double>())
                               : value.is_number()              ? readable(value.get<double>())
                                                                : value.dump();
    tables += std::string("<tr><td class=\"") + (ok ? "ok\">ok" : "fail\">FAIL") + "</td><td>" + html_escape(e.value("expr", "")) +
              "</td><td>" + html_escape(actual) + "</td></tr>\n";
    md += std::string("| ") + (ok ? "ok" : "FAIL") + " | " + md_escape(e.value("expr", "")) + " | " + md_escape(actual) + " |\n";
  }
  tables += "</table>\n";
  md += "\n";
}

// The timeline's table (its first 200 rows, a subject's flapping collapsed), when it has any.
void timeline_tables(const std::vector<std::vector<std::string>>& events, std::string& tables, std::string& md) {
  if (events.empty()) return;
  const std::vector<TimelineRow> rows = timeline_rows(events);
  constexpr std::size_t kShown = 200;
  tables += "<h2>Timeline</h2>\n<table><tr><th>from</th><th>to</th><th>what</th><th>of</th><th>detail</th></tr>\n";
  md += "## Timeline\n\n| from | to | what | of | detail |\n|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < rows.size() && i < kShown; ++i) {
    const TimelineRow& r = rows[i];
    tables += "<tr><td>" + html_escape(r.from) + "</td><td>" + html_escape(r.to) + "</td><td>" + html_escape(r.kind) + "</td><td>" +
              html_escape(r.subject) + "</td><td>" + html_escape(r.detail) + "</td></tr>\n";
    md += "| " + md_escape(r.from) + " | " + md_escape(r.to) + " | " + md_escape(r.kind) + " | " + md_escape(r.subject) + " | " +
          md_escape(r.detail) + " |\n";
  }
  tables += "</table>\n";
  md += "\n";
  if (rows.size() > kShown) {
    const std::string more = "… and " + std::to_string(rows.size() - kShown) + " more rows in timeline.csv.";
    tables += "<p>" + html_escape(more) + "</p>\n";
    md += md_escape(more) + "\n\n";
  }
}

// The tables: the verdict, expectations, a few figures, the timeline; then the pages.
int write_run_pages(const RunReport& run, const FaultWindows& faults) {
  const nlohmann::json& result = run.result;
  const std::vector<Chart>& charts = run.charts;
  const std::string title = "relaysim run: " + result.value("scenario", std::string("?")) + " (" + run.system_name + ")";
  // What the shading shows, and what it leaves out: a fault over nearly the whole run.
  std::string shading = "Shaded in the charts over time: fault windows (outages, store faults, pauses, crashes until their "
                        "restart), each fault in a colour of its own, named in the key.";
  if (const std::vector<std::string>& whole = faults.whole_run; !whole.empty()) {
    shading += std::string(" Not shaded, as ") + (whole.size() == 1 ? "it lasts" : "they last") + " (nearly) the whole run (over " +
               std::to_string(static_cast<int>(kWholeRun * 100)) + "% of it) and would hide the rest: ";
    constexpr std::size_t kNamed = 20;
    for (std::size_t i = 0; i < whole.size() && i < kNamed; ++i) shading += (i ? "; " : "") + whole[i];
    if (whole.size() > kNamed) shading += "; and " + std::to_string(whole.size() - kNamed) + " more";
    shading += " (in the timeline's lanes and table).";
  }
  std::string intro = "<p>Verdict: <b class=\"" + std::string(result.value("verdict", "") == "pass" ? "ok" : "fail") + "\">" +
                      html_escape(result.value("verdict", "?")) + "</b>; " + html_escape(result.value("ending", "")) + " at virtual " +
                      html_escape(value_text(Unit::seconds, run.end_s)) + "; seed " + std::to_string(result.value("seed", 0ull)) +
                      ", store " + html_escape(result.value("store", "")) + ", fingerprint " + html_escape(result.value("fingerprint", "")) +
                      ".</p>\n<p>" + html_escape(shading) + "</p>\n";
  std::string md = "# " + md_escape(title) + "\n\nVerdict: **" + md_escape(result.value("verdict", "?")) + "**.\n\n" +
                   md_escape(shading) + "\n\n";
  std::string tables;
  expectation_tables(result, tables, md);
  for (const Chart& c : charts) md += "## " + md_escape(c.title) + "\n\n![" + md_escape(c.title) + "](" + c.name + ".svg)\n\n";
  group_tables(result, tables, md);
  timeline_tables(run.events, tables, md);
  if (auto bad = write_text(run.dir / "report.html", page(title, intro, charts, tables))) return fail_incomplete(*bad);
  if (auto bad = write_text(run.dir / "report.md", md)) return fail_incomplete(*bad);
  std::cout << "report: " << (run.dir / "report.html").string() << " and report.md, with " << charts.size() << " charts\n";
  return kExitPass;
}

int run_report(const fs::path& dir) {
  RunReport run;
  run.dir = dir;
  if (const auto refused = read_run(run)) return *refused;
  run.drawn = drawn_columns(run);
  const std::string numbers = series_numbers(run);
  WorkDir work(dir);
  if (!work.made()) return fail_incomplete("cannot make a directory for the report's work in " + dir.string());
  if (auto bad = write_text(work.path() / "series.dat", numbers)) return fail_incomplete(*bad);
  const FaultWindows faults = fault_windows(run.events, run.end_s);
  if (auto bad = draw_run_charts(run, work.path(), faults)) return fail_incomplete(*bad);
  return write_run_pages(run, faults);
}

// summary.csv (and tails.csv): the point, the axes' values, the metric, then its figures (and
// tails.csv's method), which are numbers.
bool sweep_numeric(const std::string& column) {
  for (const char* n : {"point", "n", "mean", "stddev", "ci95_low", "ci95_high", "min", "max", "samples", "beyond", "runs", "pooled"}) {
    if (column == n) return true;
  }
  return false;
}

// Each metric's points in a sweep's file, the metrics in the order the file first names them;
// `value` is the column of the point's figure (summary.csv's mean, tails.csv's pooled).
struct SweepPoints {
  std::vector<std::string> order;
  std::map<std::string, std::vector<SweepChartPoint>> of;
};

// The points of summary.csv or tails.csv (`rows`, the header first): the first axis' value, and
// the other axes' (the columns between `point` and `metric`) as the curve it is on; nothing when
// the header lacks a column the chart needs.
std::optional<SweepPoints> points_of(const std::vector<std::vector<std::string>>& rows, const char* value) {
  RELAYSIM_ASSERT(!rows.empty(), "a file read has its header");
  const std::vector<std::string>& h = rows.front();
  const auto col = [&h](const char* name) { return static_cast<std::size_t>(std::find(h.begin(), h.end(), name) - h.begin()); };
  const std::size_t m = col("metric"), v = col(value), lo = col("ci95_low"), hi = col("ci95_high");
  if (m < 2 || m == h.size() || v == h.size() || lo == h.size() || hi == h.size()) return std::nullopt;
  SweepPoints out;
  const auto num = [](const std::string& t) { return t.empty() ? std::nan("") : std::strtod(t.c_str(), nullptr); };
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& f = rows[r];
    std::string curve;
    for (std::size_t a = 2; a < m; ++a) curve += (curve.empty() ? "" : ", ") + h[a] + "=" + f[a];
    auto [it, added] = out.of.try_emplace(f[m]);
    if (added) out.order.push_back(f[m]);
    it->second.push_back({f[1], num(f[lo]), num(f[hi]), num(f[v]), curve});
  }
  return out;
}

// How a metric's axis is labelled: its unit, when the system is known and declares it.
const char* unit_suffix(const System* system, const std::string& metric) {
  Unit unit = Unit::number;
  if (system != nullptr) {
    if (const auto ref = find_metric(system->metrics(), metric)) unit = system->metrics()[ref->index].unit;
  }
  return unit == Unit::ratio ? " (%)" : unit == Unit::seconds ? " (s)" : "";
}

// Whether every point has the figure and the interval of the first (NaN the same as NaN).
bool unchanged(const std::vector<SweepChartPoint>& points) {
  const auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  return std::all_of(points.begin(), points.end(), [&](const SweepChartPoint& p) {
    return same(p.value, points.front().value) && same(p.low, points.front().low) && same(p.high, points.front().high);
  });
}

// A figure of a sweep's table in its metric's unit: "∞" (a backlog that never drained), "n/a".
std::string sweep_value(const System* system, const std::string& metric, double v) {
  if (std::isinf(v)) return readable(v);
  Unit unit = Unit::number;
  if (system != nullptr) {
    if (const auto ref = find_metric(system->metrics(), metric)) unit = system->metrics()[ref->index].unit;
  }
  return value_text(unit, v);
}

// The most charts a sweep's page draws; a file naming more metrics than a system has is edited.
constexpr std::size_t kMostSweepCharts = 200;

int sweep_report(const fs::path& dir) {
  std::string problem;
  const auto read = read_json(dir / "sweep.json", "a sweep's description", problem);
  if (!read) return fail_usage(problem);
  const nlohmann::json& sweep = *read;
  if (!sweep.contains("axes") || sweep["axes"].empty()) return fail_usage((dir / "sweep.json").string() + ": a sweep without axes");
  const std::string axis = sweep["axes"][0].value("path", "");
  std::vector<std::string> expected = sweep.value("expected", std::vector<std::string>{});
  // What `sweep --show` named is charted as what expect: names is (a sweep's sweep.json records it).
  const std::vector<std::string> shown = sweep.value("shown", std::vector<std::string>{});
  for (const std::string& m : shown) {
    if (std::find(expected.begin(), expected.end(), m) == expected.end()) expected.push_back(m);
  }
  const System* system = find_system(sweep.value("system", ""));
  // A metric that never ends (a backlog that never drained) is "inf" in the sweep's files.
  const auto summary = read_csv(dir / "summary.csv", "a sweep's summary", sweep_numeric, problem, {}, true);
  if (!summary) return fail_usage(problem);
  std::optional<std::vector<std::vector<std::string>>> tails;
  if (fs::exists(dir / "tails.csv")) {
    tails = read_csv(dir / "tails.csv", "a sweep's pooled tails", sweep_numeric, problem, {}, true);
    if (!tails) return fail_usage(problem);
  }
  const std::optional<SweepPoints> means = points_of(*summary, "mean");
  if (!means) return fail_usage((dir / "summary.csv").string() + ":1: not a sweep's summary: it lacks the metric, mean or ci95 columns");
  std::optional<SweepPoints> pooled;
  if (tails) {
    pooled = points_of(*tails, "pooled");
    if (!pooled) return fail_usage((dir / "tails.csv").string() + ":1: not a sweep's pooled tails: it lacks the metric, pooled or ci95 columns");
  }

  // Every metric the sweep recorded: those the scenario's expect: names and those --show named
  // first, always charted; then the rest in the sweep's order, charted where they differ between
  // points.
  std::vector<std::string> metrics;
  for (const std::string& m : expected) {
    if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
  }
  for (const std::string& m : means->order) {
    if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
  }
  WorkDir work(dir);
  if (!work.made()) return fail_incomplete("cannot make a directory for the report's work in " + dir.string());
  std::vector<Chart> charts;
  std::vector<std::string> missing, not_drawn;
  std::string same_html, same_md;  // the table of what is the same at every point
  for (const std::string& m : metrics) {
    const bool expect = std::find(expected.begin(), expected.end(), m) != expected.end();
    // A latency percentile the sweep pooled, from tails.csv; every other figure from summary.csv.
    const bool from_tails = pooled && pooled->of.contains(m) && !pooled->of.at(m).empty();
    const auto& source = from_tails ? pooled->of : means->of;
    if (!source.contains(m)) {
      missing.push_back(m);
      continue;
    }
    const std::vector<SweepChartPoint>& points = source.at(m);
    const bool drawable = std::any_of(points.begin(), points.end(), [](const SweepChartPoint& p) { return std::isfinite(p.value); });
    if (!drawable || (!expect && unchanged(points))) {
      const SweepChartPoint& p = points.front();
      std::string text = sweep_value(system, m, p.value);
      if (std::isfinite(p.low) && std::isfinite(p.high) && p.low != p.high) {
        text += " [" + sweep_value(system, m, p.low) + ", " + sweep_value(system, m, p.high) + "]";
      }
      if (!unchanged(points)) text = "not drawn: no finite value";
      same_html += "<tr><td>" + html_escape(m) + "</td><td>" + html_escape(text) + "</td></tr>\n";
      same_md += "| " + md_escape(m) + " | " + md_escape(text) + " |\n";
      continue;
    }
    if (charts.size() >= kMostSweepCharts) {
      not_drawn.push_back(m);
      continue;
    }
    const GnuplotChart chart = sweep_chart(charts.size(), m, unit_suffix(system, m), axis, from_tails, points);
    if (auto bad = draw(work.path(), dir, chart, (dir / (from_tails ? "tails.csv" : "summary.csv")).string(), charts)) {
      return fail_incomplete(*bad);
    }
  }

  const std::string title = "relaysim sweep: " + sweep.value("file", std::string("?"));
  const std::size_t axes = sweep["axes"].size();
  const std::string intro_text =
      "Each point: the mean over " + std::to_string(sweep.value("replications", 0)) +
      " replications, with its 95% confidence interval shaded (summary.csv); a latency percentile, that of every run's "
      "durations pooled, with its interval (tails.csv). Against the first axis" +
      (axes > 1 ? std::string(", a curve for each combination of the other axes' values") : std::string()) +
      ". Charted: the metrics the scenario's expect: names and those sweep --show named, then every other metric the "
      "sweep recorded that differs between points; the ones the same at every point are in the table below.";
  std::string intro = "<p>" + html_escape(intro_text) + "</p>\n";
  std::string md = "# " + md_escape(title) + "\n\n" + md_escape(intro_text) + "\n\n";
  if (!charts.empty()) {
    intro += "<p>Charts:";
    for (std::size_t i = 0; i < charts.size(); ++i) {
      const std::string name = charts[i].title.substr(0, charts[i].title.find(" against "));
      intro += std::string(i ? "," : "") + " <a href=\"#" + html_escape(charts[i].name) + "\">" + html_escape(name) + "</a>";
    }
    intro += "</p>\n";
  }
  for (const Chart& c : charts) md += "## " + md_escape(c.title) + "\n\n![" + md_escape(c.title) + "](" + c.name + ".svg)\n\n";
  std::string tables;
  if (!same_html.empty()) {
    tables += "<h2>The same at every point</h2>\n<table><tr><th>metric</th><th>value [95% interval]</th></tr>\n" + same_html + "</table>\n";
    md += "## The same at every point\n\n| metric | value \\[95% interval\\] |\n|---|---|\n" + same_md + "\n";
  }
  const auto listed = [](const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
    return out;
  };
  if (!missing.empty()) {
    const std::string text = "Expected, but not in summary.csv: " + listed(missing) + ".";
    tables += "<p>" + html_escape(text) + "</p>\n";
    md += md_escape(text) + "\n\n";
  }
  if (!not_drawn.empty()) {
    const std::string text = "Not charted (past " + std::to_string(kMostSweepCharts) + " charts): " + listed(not_drawn) + ".";
    tables += "<p>" + html_escape(text) + "</p>\n";
    md += md_escape(text) + "\n\n";
  }
  if (auto bad = write_text(dir / "report.html", page(title, intro, charts, tables))) return fail_incomplete(*bad);
  if (auto bad = write_text(dir / "report.md", md)) return fail_incomplete(*bad);
  std::cout << "report: " << (dir / "report.html").string() << " and report.md, with " << charts.size() << " charts\n";
  return kExitPass;
}

}  // namespace


int lifecycles_command(const std::string& dir) {
  const fs::path root(dir);
  const fs::path pictures = root / "lifecycles";
  std::error_code ec;
  fs::create_directories(pictures, ec);
  if (ec) return fail_usage(pictures.string() + ": " + ec.message());
  if (auto missing = graphviz_missing()) return fail_usage(*missing);
  WorkDir work(pictures);
  if (!work.made()) return fail_incomplete("cannot make a directory for the drawings' work in " + pictures.string());
  std::string md =
      "# Lifecycles\n\n"
      "Generated by `relaysim lifecycles docs` from the model's own tables (model/core/lifecycle.h); do not edit.\n"
      "Each system's oracle holds every run to them (W-lifecycle, S-lifecycle, O-lifecycle), and the\n"
      "webhook store and the circuit breaker assert their moves against them as they make them: a move\n"
      "the code makes and its table lacks fails the tests.\n";
  std::size_t drawn = 0;
  for (const System* system : systems()) {
    for (const LifecycleDiagram& d : system->lifecycles()) {
      std::string dot = "digraph " + dot_quote(d.name) + " {\n  rankdir=LR;\n  bgcolor=\"white\";\n"
                        "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fa\", fontname=\"sans\"];\n"
                        "  edge [fontname=\"sans\", fontsize=10];\n  start [shape=point, width=0.12, label=\"\"];\n";
      for (const std::string& f : d.final_states) dot += "  " + dot_quote(f) + " [peripheries=2];\n";
      md += "\n## " + d.title + "\n\n![" + d.title + "](lifecycles/" + d.name + ".svg)\n\n| from | to | on |\n|---|---|---|\n";
      for (const LifecycleDiagram::Edge& e : d.edges) {
        dot += "  " + (e.from.empty() ? std::string("start") : dot_quote(e.from)) + " -> " + dot_quote(e.to) + " [label=" + dot_quote(e.on) + "];\n";
        md += "| " + (e.from.empty() ? std::string("(created)") : "`" + e.from + "`") + " | `" + e.to + "` | " + e.on + " |\n";
      }
      dot += "}\n";
      if (auto bad = graphviz(work.path(), pictures, d.name, dot, true)) return fail_incomplete(*bad);
      ++drawn;
    }
  }
  if (auto bad = write_text(root / "lifecycles.md", md)) return fail_incomplete(*bad);
  std::cout << "lifecycles: " << (root / "lifecycles.md").string() << " and " << drawn << " diagrams in " << pictures.string() << "\n";
  return kExitPass;
}

int report_command(const std::string& dir) {
  const fs::path d(dir);
  std::error_code ec;
  if (!fs::is_directory(d, ec)) return fail_usage(dir + " is not a directory (give what run --timeseries DIR or sweep --out DIR wrote)");
  if (!installed("gnuplot", "--version")) return fail_usage("gnuplot is not installed (Debian: gnuplot-nox; ./relaysim build installs it)");
  if (auto missing = graphviz_missing()) return fail_usage(*missing);
  const bool run = fs::exists(d / "series.csv") || fs::exists(d / "result.json");
  const bool sweep = fs::exists(d / "summary.csv") || fs::exists(d / "sweep.json");
  if (run && sweep) {
    return fail_usage(dir + " holds both a run's files (series.csv, result.json) and a sweep's (summary.csv, sweep.json); "
                      "give a directory that one command wrote");
  }
  try {
    if (fs::exists(d / "series.csv") && fs::exists(d / "result.json")) return run_report(d);
    if (fs::exists(d / "summary.csv") && fs::exists(d / "sweep.json")) return sweep_report(d);
  } catch (const nlohmann::json::exception& e) {
    // A field of the right name and the wrong type: a file edited by hand, or by another tool.
    return fail_usage(dir + ": a JSON file does not hold what run --timeseries or sweep --out writes: " + e.what());
  }
  if (run) return fail_usage(dir + " holds part of a run's files: it needs both series.csv and result.json");
  if (sweep) return fail_usage(dir + " holds part of a sweep's files: it needs both summary.csv and sweep.json");
  return fail_usage(dir + " holds neither a run's series.csv and result.json nor a sweep's summary.csv and sweep.json");
}

}  // namespace relaysim::cli
