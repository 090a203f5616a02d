#include "sim/summary.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "model/core/assert.h"
#include "sim/capacity.h"
#include "sim/report/text.h"
#include "sim/scenario/expect.h"
#include "sim/report/stamp.h"

namespace relaysim::sim {

namespace {
std::string hex(std::uint64_t v) { return fmt("%016" PRIx64, v); }
std::string drain_text(const Drain& d) {
  std::string out = d.drained_by_end() ? "drained " + format_duration(d.drained - d.fault_end) + " after it ended" : "not drained by the end";
  if (d.stuck > 0) out += " (except " + std::to_string(d.stuck) + " open in groups down for good)";
  if (d.latency_level) {
    out += "; p99 " + (d.latency_back != kTimeNever
                           ? "back to " + format_duration(*d.latency_level) + " " + format_duration(d.latency_back - d.fault_end) + " after it"
                           : "not back to " + format_duration(*d.latency_level));
  }
  return out;
}

// Each group's drain after the episode, slowest first (the first kShown of them), then those the
// faults did not raise and those down for good: "each endpoint group drained: slow 5m02.000s
// after it ended, fast 1m10.000s; unaffected: quiet; down for good: dead" (or, when the faults
// raised none, "no endpoint group's backlog rose; unaffected: ...").
std::string group_drains_text(const Drain& d, const Scenario& s) {
  std::vector<std::string> names = s.system->groups(s);
  // A name that holds the line's own separators is quoted: "acme, inc".
  for (std::string& n : names) {
    if (n.find_first_of(",;:\" ") != std::string::npos) n = "\"" + n + "\"";
  }
  constexpr std::size_t kShown = 5;
  std::vector<const GroupDrain*> sought, unaffected, dead;
  for (const GroupDrain& g : d.groups) (g.down_for_good ? dead : g.affected ? sought : unaffected).push_back(&g);
  std::stable_sort(sought.begin(), sought.end(), [](const GroupDrain* a, const GroupDrain* b) { return a->drained > b->drained; });
  const std::string dimension(s.system->group_dimension());
  std::string out = sought.empty() ? "no " + dimension + "'s backlog rose" : "each " + dimension + " drained:";
  bool said_after = false;
  for (std::size_t i = 0; i < sought.size() && i < kShown; ++i) {
    const GroupDrain& g = *sought[i];
    out += std::string(i == 0 ? " " : ", ") + names.at(g.group) + " ";
    if (!g.drained_by_end()) {
      out += "not by the end";
    } else {
      out += format_duration(g.drained - d.fault_end) + (said_after ? "" : " after it ended");
      said_after = true;
    }
  }
  if (sought.size() > kShown) out += fmt(" and %zu more", sought.size() - kShown);
  const auto list = [&](const char* what, const std::vector<const GroupDrain*>& gs) {
    if (gs.empty()) return;
    out += std::string("; ") + what + ":";
    for (std::size_t i = 0; i < gs.size() && i < kShown; ++i) out += std::string(i == 0 ? " " : ", ") + names.at(gs[i]->group);
    if (gs.size() > kShown) out += fmt(" and %zu more", gs.size() - kShown);
  };
  list("unaffected", unaffected);
  list("down for good", dead);
  return out;
}

// The spine's own figures: the backlog, how fast work went through, and the drain after each fault.
void print_backlog(std::ostream& out, const RunResult& r) {
  const RunFigures& f = r.run;
  out << "Backlog (sampled every " << format_duration(f.step) << ")\n";
  out << "  peak " << f.peak_backlog << " open,  mean " << fmt("%.1f", f.mean_backlog) << ";  "
      << fmt("%.4g", run_metric_value(f, "arrivals_per_s")) << " acknowledged and "
      << fmt("%.4g", run_metric_value(f, "throughput_per_s")) << " finished per second;  in the busiest minute "
      << fmt("%.4g", f.peak_arrivals_per_s) << " and " << fmt("%.4g", f.peak_throughput_per_s) << "\n";
  // The warm-up the figures left out, beside the one the trace suggests (MSER-5).
  const Duration warmup = r.scenario.warmup;
  const auto settle = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(f.settle_s));
  out << "  " << (warmup > Duration{} ? "measured after a warm-up of " + format_duration(warmup) : std::string("measured from the start"))
      << "; the backlog settles after about " << format_duration(settle) << " (MSER-5)"
      << (warmup > Duration{} && settle > warmup ? ", after the warm-up: the figures include part of the ramp" : "") << "\n";
  for (const Drain& d : f.drains) {
    out << "  " << d.what << "  " << format_time(d.fault_start) << " - " << format_time(d.fault_end) << ":  peak " << d.peak
        << " open (from " << fmt("%.0f", d.level) << "), " << drain_text(d) << "\n";
    if (!d.groups.empty()) out << "    " << group_drains_text(d, r.scenario) << "\n";
  }
  out << "\n";
}

// The capacity check at the load's peak (sim/capacity.h), before the figures that show its effect.
void print_capacity(std::ostream& out, const Scenario& s) {
  const std::vector<queueing::StationLoad> stations = capacity_check(s);
  if (stations.empty()) return;
  out << "Capacity at the load's peak\n";
  for (const queueing::StationLoad& st : stations) {
    out << "  " << (st.station.stable() ? "" : "OVERLOADED ") << describe(st) << "\n";
  }
  out << "\n";
}

}  // namespace

void print_summary(std::ostream& out, const RunResult& r, const WallStats& wall) {
  const Scenario& s = r.scenario;
  RELAYSIM_ASSERT(s.system != nullptr, "a result names its system");
  out << "relaysim run: " << s.name << "  (" << s.file << ")\n";
  out << "  system " << s.system->name() << "  seed " << s.seed << "  fingerprint " << hex(r.fingerprint) << "  store "
      << to_string(s.store) << "\n";
  out << "  virtual " << format_time(r.end) << (r.drained() ? " (nothing left to do)" : "") << " in "
      << fmt("%.2f", wall.seconds) << " s wall;  " << r.events << " events, "
      << fmt("%.3g", wall.seconds > 0 ? static_cast<double>(r.events) / wall.seconds : 0.0) << " events/s\n\n";
  print_capacity(out, s);
  if (r.report) {
    r.report->print(out, wall.seconds);
    print_backlog(out, r);
    print_groups(out, r.groups);
  }

  out << "Invariants" << (r.judged() ? "" : " (checked while the run lasted; the end-of-run checks did not run)") << "\n";
  const auto invariants = r.ledger.invariants();
  std::size_t width = 0;
  for (const InvariantInfo& info : invariants) width = std::max(width, std::string_view(info.id).size());
  for (std::size_t i = 0; i < invariants.size(); ++i) {
    const std::uint64_t n = r.ledger.count(i);
    const std::string id(invariants[i].id);
    out << "  " << (n == 0 ? "ok  " : "FAIL") << " " << id << std::string(width + 1 - id.size(), ' ')
        << invariants[i].title;
    if (n != 0) out << "  (" << n << " violations)";
    out << "\n";
  }
  for (const Violation& x : r.ledger.examples()) out << "       " << r.ledger.describe(x) << "\n";
  if (!r.expectations.empty()) {
    out << "\nExpectations\n";
    for (const auto& e : r.expectations) {
      out << "  " << (e.ok ? "ok  " : "FAIL") << " " << e.expr << "   (actual " << format_value(e.unit, e.actual) << ")\n";
    }
  }
  switch (r.ending) {
    case Ending::finished:
    case Ending::drained:
      if (r.stalled()) {
        out << "\nSTALL: the event queue ran dry at " << format_time(r.end) << " with " << r.open_work()
            << " requests still open\n";
      }
      break;
    case Ending::event_limit:
      out << "\nEVENT LIMIT: stopped after " << r.events << " events (the limit: " << r.event_limit << ") at virtual "
          << format_time(r.end) << "; a run that needs this many is a livelock, unless --max-events set the limit "
          << "low on purpose\n";
      break;
    case Ending::interrupted:
      out << "\nINTERRUPTED at virtual " << format_time(r.end) << " of " << format_duration(s.duration)
          << ": the figures above cover the run so far\n";
      break;
    case Ending::out_of_memory:
      out << "\nOUT OF MEMORY: " << r.failure << "; the figures above cover the run so far\n";
      break;
    case Ending::store_failure:
      out << "\nSTORE FAILURE: " << r.failure << "; the figures above cover the run so far\n";
      break;
  }
  if (r.report) {
    for (const std::string& note : r.report->notes()) out << "\nNote: " << note << "\n";
  }
  out << "\nVerdict: " << (r.pass() ? "PASS" : "FAIL") << "\n";
}

nlohmann::json drain_json(const Drain& d, std::span<const std::string> group_names) {
  using nlohmann::json;
  json groups = json::array();
  for (const GroupDrain& g : d.groups) {
    RELAYSIM_ASSERT(g.group < group_names.size(), "a group drain names one of the system's groups");
    groups.push_back({{"group", group_names[g.group]},
                      {"level", g.level},
                      {"peak", g.peak},
                      {"down_for_good", g.down_for_good},
                      {"affected", g.affected},
                      {"drained_s", g.drained_by_end() ? json(to_seconds(g.drained)) : json(nullptr)},
                      {"drain_s", g.drained_by_end() ? json(to_seconds(g.drained - d.fault_end)) : json(nullptr)}});
  }
  return {{"faults", d.what},
          {"fault_start_s", to_seconds(d.fault_start)},
          {"fault_end_s", to_seconds(d.fault_end)},
          {"level", d.level},
          {"peak", d.peak},
          {"stuck", d.stuck},
          {"drained_s", d.drained_by_end() ? json(to_seconds(d.drained)) : json(nullptr)},
          {"drain_s", d.drained_by_end() ? json(d.seconds()) : json(nullptr)},
          {"drain_90_s", d.mostly_drained != kTimeNever ? json(d.mostly_seconds()) : json(nullptr)},
          {"latency_level_s", d.latency_level ? json(to_seconds(*d.latency_level)) : json(nullptr)},
          {"latency_back_s", d.latency_back != kTimeNever ? json(to_seconds(d.latency_back)) : json(nullptr)},
          {"latency_recovery_s", d.latency_back != kTimeNever ? json(d.latency_seconds()) : json(nullptr)},
          {"groups", groups}};
}

nlohmann::json to_json(const RunResult& r, const WallStats& wall) {
  using nlohmann::json;
  const Scenario& s = r.scenario;
  RELAYSIM_ASSERT(s.system != nullptr, "a result names its system");
  json j;
  stamp(j, kRunSchema);
  j["scenario"] = s.name;
  j["file"] = s.file;
  j["system"] = s.system->name();
  j["seed"] = s.seed;
  j["fingerprint"] = hex(r.fingerprint);
  j["store"] = to_string(s.store);
  j["verdict"] = r.pass() ? "pass" : "fail";
  j["ending"] = to_string(r.ending);
  if (!r.failure.empty()) j["failure"] = r.failure;
  j["judged"] = r.judged();
  j["stalled"] = r.stalled();
  j["virtual_seconds"] = to_seconds(r.end);
  j["wall_seconds"] = wall.seconds;
  j["events"] = r.events;
  j["event_limit"] = r.event_limit;
  j["events_per_wall_second"] = wall.seconds > 0 ? static_cast<double>(r.events) / wall.seconds : 0.0;
  j["capacity"] = capacity_json(capacity_check(s));
  json inv = json::array();
  const auto invariants = r.ledger.invariants();
  for (std::size_t i = 0; i < invariants.size(); ++i) {
    json examples = json::array();
    for (const Violation& x : r.ledger.examples()) {
      if (x.invariant != i) continue;
      examples.push_back({{"at_seconds", to_seconds(x.at)}, {"subject", x.subject}, {"what", x.what}});
    }
    inv.push_back({{"id", invariants[i].id},
                   {"title", invariants[i].title},
                   {"ok", r.ledger.count(i) == 0},
                   {"violations", r.ledger.count(i)},
                   {"examples", examples}});
  }
  j["invariants"] = inv;
  json ex = json::array();
  for (const auto& e : r.expectations) {
    ex.push_back({{"expr", e.expr}, {"ok", e.ok}, {"actual", e.actual}, {"unit", to_string(e.unit)}});
  }
  j["expectations"] = ex;
  if (r.report) {
    r.report->to_json(j, wall.seconds);
    j["notes"] = r.report->notes();
  }
  json drains = json::array();
  const std::vector<std::string> group_names = s.system->groups(s);
  for (const Drain& d : r.run.drains) drains.push_back(drain_json(d, group_names));
  j["backlog"] = {{"step_s", to_seconds(r.run.step)},
                  {"peak", r.run.peak_backlog},
                  {"mean", r.run.mean_backlog},
                  {"acknowledged", r.run.work.opened},
                  {"finished", r.run.work.finished},
                  {"drains", drains}};
  j["groups"] = groups_json(r.groups);
  json metrics = json::object();
  const auto table = s.system->metrics();
  for (std::size_t i = 0; i < table.size() && i < r.values.size(); ++i) {
    if (!is_family(table[i].name)) metrics[std::string(table[i].name)] = r.values[i];
  }
  j["metrics"] = metrics;
  return j;
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace relaysim::sim
