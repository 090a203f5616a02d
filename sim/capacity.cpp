#include "sim/capacity.h"

#include <algorithm>
#include <cmath>
#include <vector>
#include <nlohmann/json.hpp>

#include "model/core/assert.h"
#include "sim/report/text.h"
#include "sim/system.h"

namespace relaysim::sim {

namespace {

// A mean service time as people say it: 228.9ms, 1.5s, 2m03.000s.
std::string seconds_text(double s) {
  if (s < 1) return fmt("%.4gms", s * 1e3);
  return s < 60 ? fmt("%.4gs", s) : format_value(Unit::seconds, s);
}

// A rate or a count of servers: four significant figures, whole numbers past them (30000, not 3e+04).
std::string number_text(double v) { return fmt(v >= 1e4 ? "%.0f" : "%.4g", v); }

// ρ to two places, and a light load as the first figure that is not zero.
std::string rho_text(double rho) { return fmt(rho >= 0.01 ? "%.2f" : "%.1g", rho); }

}  // namespace

std::vector<queueing::StationLoad> capacity_check(const Scenario& s) {
  RELAYSIM_ASSERT(s.system != nullptr, "a scenario names its system");
  std::vector<queueing::StationLoad> stations = s.system->stations(s);
  // A station whose servers are held for no time at all (a latency of 0s) carries any load.
  std::erase_if(stations, [](const queueing::StationLoad& st) { return !(st.station.mean_s > 0); });
  for (const queueing::StationLoad& st : stations) {
    RELAYSIM_ASSERT(st.station.c >= 1 && st.station.lambda > 0, "a station has servers and a load");
  }
  return stations;
}

std::string describe(const queueing::StationLoad& s) {
  const queueing::Station& st = s.station;
  return s.name + ": " + number_text(st.lambda) + "/s at the peak keeps " + number_text(st.offered()) + " of " +
         std::to_string(st.c) + " " + s.servers + " busy for " + seconds_text(st.mean_s) + " each (ρ " +
         rho_text(st.utilisation()) + "; at most " + number_text(st.c / st.mean_s) + "/s)";
}

std::string overload_warning(const queueing::StationLoad& s) {
  const queueing::Station& st = s.station;
  RELAYSIM_ASSERT(!st.stable(), "a warning for a station that cannot carry its load");
  return s.name + " cannot carry " + number_text(st.lambda) + "/s: it needs about " + fmt("%.0f", std::ceil(st.offered())) +
         " " + s.servers + " busy, and has " + std::to_string(st.c) + " (ρ " + rho_text(st.utilisation()) +
         "); its backlog grows for as long as the load stays at its peak";
}

std::vector<std::string> scale_drift(const Scenario& full, const Scenario& scaled) {
  const std::vector<queueing::StationLoad> before = capacity_check(full);
  const std::vector<queueing::StationLoad> after = capacity_check(scaled);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < std::min(before.size(), after.size()); ++i) {
    const double was = before[i].station.utilisation();
    const double is = after[i].station.utilisation();
    if (std::abs(is - was) <= 0.02 * was) continue;
    out.push_back(after[i].name + " runs at ρ " + rho_text(is) + ", not the full scenario's " + rho_text(was) + ": " +
                  std::to_string(before[i].station.c) + " " + after[i].servers + " could only be rounded to " +
                  std::to_string(after[i].station.c) + ", so it waits " + (is > was ? "longer" : "less") +
                  " than the full one");
  }
  return out;
}

nlohmann::json capacity_json(const std::vector<queueing::StationLoad>& stations) {
  nlohmann::json out = nlohmann::json::array();
  for (const queueing::StationLoad& s : stations) {
    const queueing::Station& st = s.station;
    out.push_back({{"station", s.name},
                   {"servers", s.servers},
                   {"servers_configured", st.c},
                   {"peak_per_s", st.lambda},
                   {"mean_service_s", st.mean_s},
                   {"busy", st.offered()},
                   {"utilisation", st.utilisation()},
                   {"most_per_s", st.c / st.mean_s},
                   {"overloaded", !st.stable()}});
  }
  return out;
}

}  // namespace relaysim::sim
