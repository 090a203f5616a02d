// What `relaysim report` reads from a run's result.json, as text: the tables, the data of the
// latency CDF and the Graphviz graph of the pipeline. Nothing here touches a file or starts a
// program, so a fuzz target can feed it any JSON; a value of the wrong type throws
// nlohmann::json::exception (the report refuses the file), and a missing one reads as absent.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/report/metric.h"
#include "sim/system.h"

namespace relaysim::cli {

// j[key], or null when `j` is no object holding `key`: a result.json edited by hand must not
// take the reader past what it holds (a missing key of a const json is undefined behaviour).
const nlohmann::json& field(const nlohmann::json& j, const char* key);
// A figure as a person reads it: 1234567 as "1,234,567"; a fraction with up to 3 digits.
std::string grouped(double v);
// Any number as a person reads it: three significant digits, thousands grouped and never an
// exponent below 1e15 — 1500 as "1,500", 12.46 as "12.5", 0.0421 as "0.0421" (a rate, a mean).
std::string readable(double v);
// A value in its unit as the report's tables show it: a count grouped ("2,619,313"), a ratio in
// per cent ("99.5%"), seconds as a duration ("1h17m52.924s", 0 as "0s"), any other number
// readable(); "n/a" for NaN.
std::string value_text(sim::Unit unit, double v);

// Text from a file, made fit to show: valid UTF-8, with every invalid byte and every control
// character (a newline too) shown as U+FFFD. Every name a report shows passes through here first.
std::string printable(std::string_view s);
// Text for HTML element content or a quoted attribute.
std::string html_escape(std::string_view s);
// Text for a Markdown table cell or heading: one line, every ASCII punctuation mark escaped.
std::string md_escape(std::string_view s);
// A gnuplot string literal of `s` (printable): in double quotes, every byte but letters, digits,
// a space and ._,:%()+=/- written as an octal escape — so no backtick (which gnuplot runs as a
// shell command even inside double quotes), quote, newline, '@' or '$' ever reaches its parser.
std::string gp_string(std::string_view s);
// A Graphviz string literal of `s`: quotes and backslashes escaped, a newline Graphviz's line
// break, any other control character (and invalid UTF-8) U+FFFD.
std::string dot_quote(std::string_view s);
// Whether `script` holds nothing gnuplot would run but what the report's charts say: every line
// one of the commands they use (set, unset, plot), every string literal closed on its line, and
// no backtick, '@', ';', '!', or the name of a function that reads or runs something (system,
// load, call, eval) outside a literal. A chart's script is checked before gnuplot sees it.
bool gp_inert(std::string_view script);
// A file name made of `s`: letters, digits, '-' and '_' kept, the rest '_', at most 60 long.
std::string file_stem(std::string_view s);

// The latency distribution of the whole and of each group that has one (up to 12; none when
// only one has: its curve is the whole's, and the whole's title says so, "all = live"), from the
// JSON's `groups` (what the system's latency metrics measure): gnuplot data, one block per curve
// of "seconds percent" lines, and each curve's title. The groups without a distribution (no
// latency measured: an endpoint group down from the start) are named, and those past the 12
// drawn counted, so the chart's title can say why they have no curve.
struct LatencyCdf {
  std::string data;
  std::vector<std::string> titles;        // "all" (or "all = live"), then the groups'
  std::string by;                         // what the groups are: "endpoint group"
  std::vector<std::string> unmeasured{};  // the groups with no latency to draw
  std::size_t not_drawn = 0;              // the groups with one, past the 12 drawn
};
std::optional<LatencyCdf> latency_cdf(const nlohmann::json& result);

// What each group finished, and how fast, from the JSON's `groups`: an HTML and a Markdown table
// (nothing with fewer than two groups).
void group_tables(const nlohmann::json& result, std::string& html, std::string& md);

// The system's pipeline with the run's flow on each edge, as a Graphviz graph: the count, and the
// rate per second of virtual time ("1,500/s", "12.5/s"), and — when any are — the requests still
// open when the run ended, as a node of their own beside where they arrived (the first flow's
// destination) ("" when the system declares no pipeline or there are no metrics).
std::string pipeline_dot(const sim::System& system, const nlohmann::json& result);
// How many requests (or messages) were still open when the run ended: the result's `unresolved`
// metric (every system has one), else its backlog's acknowledged less finished; 0 when it holds
// neither.
double open_at_end(const nlohmann::json& result);

// The timeline's table as a person reads it, from timeline.csv's rows (from, to, kind, subject,
// detail, fault): times as durations ("1h00m05.613s"; an instant's end blank, no end "the end"),
// and each run of one subject's transitions flapping between two states ("open -> half_open",
// "half_open -> open", ..., each within kFlapGapSeconds of the one before, at least three) as one
// row: "open ⇄ half_open ×N" from the first to the last. timeline.csv itself keeps every row.
struct TimelineRow {
  std::string from, to, kind, subject, detail;
};
inline constexpr double kFlapGapSeconds = 600;
std::vector<TimelineRow> timeline_rows(const std::vector<std::vector<std::string>>& events);

// A chart for gnuplot, as text: `script` reads the files of `data` (name, content) and those the
// caller puts beside them (series.csv, summary.csv, tails.csv), and writes `name`.svg, all in the
// directory gnuplot runs in; every text in it is a gp_string literal, every file one of these.
struct GnuplotChart {
  std::string name;   // file stem: panel-flow
  std::string title;  // for the page, as it is (escaped where shown)
  std::string script;
  std::vector<std::pair<std::string, std::string>> data;
};

// The start of every chart's script: an SVG of the given height, text taken literally.
std::string chart_start(const std::string& name, int height = 340);
// Where the plot area of every chart along virtual time (the panels and the lanes) begins and
// ends, as a fraction of the width: the same in each, so their time axes line up down the page.
inline constexpr double kTimeFrameLeft = 0.13, kTimeFrameRight = 0.73;

// The latency CDF chart of `cdf`: one curve per title.
GnuplotChart cdf_chart(const LatencyCdf& cdf);

// A window of virtual time to shade in every panel, in seconds, and the fault it is a window of
// ("outage: serviceb": timeline.csv's kind and subject): each fault is shaded in a colour of its
// own (kFaultColours, in the order the shaded faults first appear; past those, one grey for the
// rest) and named in the panel's key.
struct Shade {
  double from = 0, to = 0;
  std::string fault{};
};
inline constexpr const char* kFaultColours[] = {"#d62728", "#1f77b4", "#ff7f0e", "#2ca02c",
                                                "#9467bd", "#8c564b", "#e377c2", "#17becf"};
// The faults of timeline.csv's rows (from, to, kind, subject, detail, fault; those with fault 1)
// as the panels show them: a window over more than kWholeRun of the run (an endpoint group down
// from the start to the end) would shade every panel throughout and hide the others, so it is not
// shaded but named ("down: endpoints dead, from 0s to the end") in each panel's title and on the
// page (the lanes draw it as they draw every fault); the rest are shaded (the first kMostShades).
struct FaultWindows {
  std::vector<Shade> shaded;
  std::vector<std::string> whole_run;
};
inline constexpr double kWholeRun = 0.9;
inline constexpr std::size_t kMostShades = 40;
FaultWindows fault_windows(const std::vector<std::vector<std::string>>& events, double end_s);

// One panel of the time series, from series.dat: whitespace-separated numbers (NaN where a
// window had nothing to measure), a row per window, the window's end in its first column.
struct SeriesCurve {
  std::size_t column = 0;  // of series.dat, from 1 (2 or more: the first is the end)
  std::string title;
  bool ratio = false;      // a fraction, drawn in % on the right axis
};
// Its time axis runs from 0 to `end_s`, the run's end (0: as far as the data go), in the frame
// every time chart shares; `whole_run`: the faults not shaded, as they last (nearly) the whole
// run (FaultWindows), named in its title.
GnuplotChart panel_chart(const std::string& name, const std::string& title, const std::vector<SeriesCurve>& curves,
                         const std::vector<Shade>& shades, bool hours, bool log_y, double end_s = 0,
                         const std::vector<std::string>& whole_run = {});

// The timeline's lanes: `events` are timeline.csv's rows (from, to, kind, subject, detail, fault),
// drawn as bars, one lane per subject (its name cut to what the frame's left margin holds, the
// whole of it in the timeline's table); nothing when there is nothing to draw.
std::optional<GnuplotChart> lanes_chart(const std::vector<std::vector<std::string>>& events, double end_s, bool hours);

// One metric of a sweep against its first axis: a point per value of the axis, with its 95% band
// (the mean's, or the pooled percentile's when `pooled`); with more axes, a curve for each
// combination of the others' values.
struct SweepChartPoint {
  std::string x;  // the first axis' value, as the sweep wrote it
  // NaN where summary.csv has nothing (no interval with one run); infinite as it has them (a
  // backlog that never drained): neither is drawn, and the chart's title names the infinite ones.
  double low = 0, high = 0, value = 0;
  std::string curve{};  // the other axes' values ("pods=4, ttl=1m"); "" with one axis
};
// The x axis reads the first axis' values as numbers when every one is one: a number as it is, a
// duration ("90s", "15m", "1h30m") in the one unit that suits them all (seconds, minutes or
// hours), a percentage ("5%") in per cent, a rate ("20/s", "30/min") per second, the unit in the
// axis' label; anything else is a category, in the order the points give them. Both axes are
// padded so no point and no band lies on the frame, and a metric the same at every point is drawn
// mid-chart on an axis from 0.
// The chart is named sweep-METRIC-N, N being `index` + 1.
GnuplotChart sweep_chart(std::size_t index, const std::string& metric, const std::string& unit_suffix, const std::string& axis,
                         bool pooled, const std::vector<SweepChartPoint>& points);

}  // namespace relaysim::cli
