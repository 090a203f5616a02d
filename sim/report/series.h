// What one run shows over time, beyond its totals: a time series (one row per window of virtual
// time, columns declared once per system), a timeline of what happened to the world (faults,
// crashes, breaker transitions), and a record per entity that did not end well (every
// dead-lettered or failed request or message, with its key, reason, attempts and times).
//
// Sampling reads the world between events and schedules nothing, so a run with a time series has
// the same events, in the same order, with the same fingerprint, as a run without one.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/assert.h"
#include "model/core/metric_family.h"
#include "model/core/names.h"
#include "model/core/time.h"
#include "sim/report/metric.h"

namespace relaysim::sim {

struct Scenario;

// One column of a system's time series. A column named after one of the system's metrics is that
// metric computed over the window alone (`delivered`: delivered in the window; `latency_p99_s`:
// of the requests delivered in the window); the others are levels at the window's end
// (`pending`) or averages over the window (`utilisation`).
// Which chart of a report (`relaysim report`) a column is drawn in.
enum class Panel : std::uint8_t {
  flow,     // what arrived and what finished, per window
  backlog,  // what waits or is in flight
  latency,  // how long things took
  calls,    // calls to dependencies, retries
  health,   // utilisation, breakers, pods, faults
  groups,   // the backlog of each group (sim/report/groups.h)
};
inline constexpr auto kPanelNames = names<Panel>({
    {Panel::flow, "flow"}, {Panel::backlog, "backlog"}, {Panel::latency, "latency"}, {Panel::calls, "calls"},
    {Panel::health, "health"}, {Panel::groups, "groups"}});
constexpr std::string_view to_string(Panel p) { return kPanelNames[p]; }

struct SeriesColumn {
  std::string_view name;
  Unit unit;
  std::string_view meaning;
  Panel panel = Panel::flow;
  // How the column reads in OpenMetrics (sim/report/openmetrics.h). A count per window is a
  // counter, its running total; anything else a gauge. A column the live service also serves
  // names that family and its label there (status="pending"); the others are relaysim_<name>.
  bool per_window_count = false;
  const MetricFamily* family = nullptr;
  std::string_view label_name = {};
  std::string_view label_value = {};
};

// A window of virtual time [start, end): the last one of a run may be shorter than the others.
struct SeriesWindow {
  Time start{};
  Time end{};
  double seconds() const { return to_seconds(end - start); }
};

// Where a run's time series goes, a row at a time as the run goes (the row's values follow the
// system's columns).
class SeriesSink {
 public:
  virtual ~SeriesSink() = default;
  virtual void row(const SeriesWindow& window, std::span<const double> values) = 0;
};

// A system's table of columns (infos_of, sim/report/metric.h): what the spine sees of it.
template <const auto& Table>
std::span<const SeriesColumn> series_infos_of() {
  return infos_of<Table>();
}

// A row of a system's column table: the column, and how it is computed from the system's Sample
// (what it saw of one window).
template <class Sample>
struct SeriesEntry {
  SeriesColumn info;
  double (*value)(const Sample& s);
};

// What most systems' series see of a window: the figures counted in it alone, and the store's
// counts at its end. A system that sees more declares its own Sample with these two members.
template <class Figures, class Counts>
struct WindowSample {
  const Figures& window;
  Counts counts;
};

// The two kinds of column most of a system's table is made of. `Metrics`: its metric table.
template <class Sample, const auto& Metrics>
struct SeriesOf {
  // Metric `M` over the window alone, named and explained as the metric is: the Sample's
  // `window` holds the figures the system counted in that window.
  template <std::size_t M>
  static constexpr SeriesEntry<Sample> windowed(Panel panel) {
    return {{Metrics[M].info.name, Metrics[M].info.unit, Metrics[M].info.meaning, panel, Metrics[M].info.unit == Unit::count},
            [](const Sample& s) { return Metrics[M].value(s.window, 0); }};
  }
  // The same, published in OpenMetrics as `family`'s sample labelled status="<Status's name>".
  template <std::size_t M, auto Status>
  static constexpr SeriesEntry<Sample> windowed_as(Panel panel, const MetricFamily& family) {
    return published<Status>(windowed<M>(panel), family);
  }
  // How many of the store's entities are in `Status` at the window's end.
  template <auto Status>
  static constexpr SeriesEntry<Sample> in_status(std::string_view name, std::string_view meaning) {
    return {{name, Unit::count, meaning, Panel::backlog},
            [](const Sample& s) { return static_cast<double>(s.counts.by_status[static_cast<std::size_t>(Status)]); }};
  }
  // The same, published in OpenMetrics as `family`'s sample labelled status="<Status's name>".
  template <auto Status>
  static constexpr SeriesEntry<Sample> in_status_as(std::string_view name, std::string_view meaning, const MetricFamily& family) {
    return published<Status>(in_status<Status>(name, meaning), family);
  }

 private:
  template <auto Status>
  static constexpr SeriesEntry<Sample> published(SeriesEntry<Sample> e, const MetricFamily& family) {
    e.info.family = &family;
    e.info.label_name = "status";
    e.info.label_value = to_string(Status);
    return e;
  }
};

// Fills `row` with every column of `Table` computed from `s`.
template <const auto& Table, class Sample>
void fill_row(const Sample& s, std::span<double> row) {
  RELAYSIM_ASSERT(row.size() == std::size(Table), "a row has a value for each column");
  for (std::size_t i = 0; i < row.size(); ++i) row[i] = Table[i].value(s);
}

// One edge of a system's pipeline as `relaysim report` draws it (with Graphviz): what flows from
// one part to the next, measured by a count of the system's metric table, so the diagram shows
// the run's own figures on each edge.
struct Flow {
  std::string_view from;  // "clients", "platform", ...
  std::string_view to;
  std::string_view metric;
};

// A Flow whose metric is a count of `Metrics`, checked when the program is compiled.
template <const auto& Metrics>
consteval Flow flow(std::string_view from, std::string_view to, std::string_view metric) {
  if (Metrics[metric_index<Metrics>(metric)].info.unit != Unit::count) throw "a flow is a count";
  return {from, to, metric};
}

// Something that happened to the world of a run: at an instant (length 0) or over a window
// (an outage, a pause; kForever: until the run's end).
struct TimelineEvent {
  Time at{};
  Duration length{};
  std::string kind;     // "outage", "crash", "breaker", ...
  std::string subject;  // what it happened to: "serviceb", "pod-1"
  std::string detail;   // "closed -> open", "restarts after 30s"
  // Something went wrong in the world (an outage, a crash, a store fault), as opposed to what the
  // system did about it (a breaker opening, a new leader): a report shades it, and the backlog
  // is measured draining after it (sim/report/backlog.h).
  bool fault = false;
};

// The timeline of the faults a scenario's top level declares (crashes, restarts, pauses, store
// faults) up to `end`; the system adds its own (sim/system.h).
void scenario_timeline(const Scenario& s, Time end, std::vector<TimelineEvent>& out);

// An entity (request, message) that ended without succeeding, as the user would look it up.
struct EntityRecord {
  std::string key;     // as the user knows it: "cx-12/req-40"
  std::string_view outcome;  // "dead_lettered", "failed", ...
  std::string_view reason;   // "deadline", "no_url", ...
  std::uint32_t attempts = 0;
  Time created{};
  Time ended{};        // kTimeNever: still open when the run ended (written empty)
  std::string group;   // the endpoint group, provider or shard it belongs to ("" when none)
};

// Where a run's entity records go, as they happen.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void record(const EntityRecord& r) = 0;
};

// CSV, as spreadsheets, pandas and gnuplot read it: a header row, then rows; times in seconds of
// virtual time; a value that is not a number (nothing to divide by) as an empty field.
void write_series_header(std::ostream& out, std::span<const SeriesColumn> columns);
void write_series_row(std::ostream& out, const SeriesWindow& window, std::span<const double> values);
void write_timeline(std::ostream& out, const std::vector<TimelineEvent>& events);
void write_record_header(std::ostream& out);
void write_record(std::ostream& out, const EntityRecord& r);
// A CSV field, quoted when it must be; and a line's fields, unquoted (the inverse).
std::string csv_field(std::string_view text);
std::vector<std::string> csv_fields(const std::string& line);
// Reads the next record of a CSV file into `fields` — one line, or several where a quoted field
// holds a line break (csv_field writes one so) — and adds the lines it took to `lines`; false at
// the end of the file.
bool read_csv_record(std::istream& in, std::vector<std::string>& fields, std::size_t& lines);

}  // namespace relaysim::sim
