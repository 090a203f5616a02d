#include "sim/report/series.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "model/core/assert.h"
#include "model/store/store_error.h"
#include "sim/scenario/scenario.h"

namespace relaysim::sim {

namespace {

std::string pod_name(std::uint32_t pod) { return "pod-" + std::to_string(pod); }

// A number as CSV carries it: ten significant digits (a plot's or a spreadsheet's worth), empty
// when it is not a number.
void put_number(std::ostream& out, double v) {
  if (std::isnan(v)) return;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  out << buf;
}

// A moment of virtual time in seconds, to the nanosecond: 60, 3605.613828368.
void put_time(std::ostream& out, Time t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", static_cast<double>(to_ns(t)) / 1e9);
  out << buf;
}

}  // namespace

void scenario_timeline(const Scenario& s, Time end, std::vector<TimelineEvent>& out) {
  for (const CrashFault& c : s.crashes) {
    if (c.at >= end) continue;
    std::string detail = c.during_write ? "in the middle of its first store write from here" : "";
    if (c.restart_after < kForever) {
      detail += std::string(detail.empty() ? "" : "; ") + "restarts after " + format_duration(c.restart_after);
    }
    out.push_back({c.at, c.restart_after < kForever ? c.restart_after : kForever, "crash", pod_name(c.pod), detail, true});
  }
  for (const PauseFault& p : s.pauses) {
    if (p.at < end) out.push_back({p.at, p.length, "pause", pod_name(p.pod), "", true});
  }
  for (const StoreFault& f : s.store_faults) {
    if (f.window.at < end) out.push_back({f.window.at, f.window.length, "store_fault", "store", std::string(to_string(f.failure)), true});
  }
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

bool read_csv_record(std::istream& in, std::vector<std::string>& fields, std::size_t& lines) {
  std::string record, line;
  if (!std::getline(in, record)) return false;
  ++lines;
  // An odd number of quotes so far: a quoted field goes on past the line break.
  const auto open_quote = [](const std::string& s) { return std::count(s.begin(), s.end(), '"') % 2 == 1; };
  while (open_quote(record) && std::getline(in, line)) {
    ++lines;
    record += '\n';
    record += line;
  }
  fields = csv_fields(record);
  return true;
}

void write_series_header(std::ostream& out, std::span<const SeriesColumn> columns) {
  out << "start_s,end_s";
  // A group's column carries the group's name, which may hold a comma or a quote.
  for (const SeriesColumn& c : columns) out << ',' << csv_field(c.name);
  out << '\n';
}

void write_series_row(std::ostream& out, const SeriesWindow& window, std::span<const double> values) {
  RELAYSIM_ASSERT(window.end >= window.start, "a window ends no earlier than it starts");
  put_time(out, window.start);
  out << ',';
  put_time(out, window.end);
  for (double v : values) {
    out << ',';
    put_number(out, v);
  }
  out << '\n';
}

void write_timeline(std::ostream& out, const std::vector<TimelineEvent>& events) {
  std::vector<const TimelineEvent*> sorted;
  sorted.reserve(events.size());
  for (const TimelineEvent& e : events) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const TimelineEvent* a, const TimelineEvent* b) { return a->at < b->at; });
  out << "start_s,end_s,kind,subject,detail,fault\n";
  for (const TimelineEvent* e : sorted) {
    RELAYSIM_ASSERT(e->length >= Duration::zero(), "a timeline event lasts no negative time");
    put_time(out, e->at);
    out << ',';
    // A window that never ends has no end to write.
    if (e->length < kForever) put_time(out, e->at + e->length);
    out << ',' << csv_field(e->kind) << ',' << csv_field(e->subject) << ',' << csv_field(e->detail) << ',' << (e->fault ? 1 : 0) << '\n';
  }
}

void write_record_header(std::ostream& out) { out << "key,outcome,reason,attempts,created_s,ended_s,group\n"; }

void write_record(std::ostream& out, const EntityRecord& r) {
  out << csv_field(r.key) << ',' << r.outcome << ',' << r.reason << ',' << r.attempts << ',';
  put_time(out, r.created);
  out << ',';
  if (r.ended != kTimeNever) put_time(out, r.ended);
  out << ',' << csv_field(r.group) << '\n';
}

}  // namespace relaysim::sim
