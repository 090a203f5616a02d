#include "sim/timeline.h"

#include <string>

#include "model/core/assert.h"
#include "model/core/text.h"

namespace relaysim::sim {

void add_to_timeline(const std::vector<Outage>& outages, std::string_view subject, std::vector<TimelineEvent>& out) {
  RELAYSIM_ASSERT(!subject.empty(), "an event on the timeline names what it happened to");
  for (const Outage& o : outages) {
    out.push_back({o.window.at, o.window.length, "outage", std::string(subject),
                   o.mode == OutageMode::error ? "every call fails at once" : "no call is answered", true});
  }
}

void add_to_timeline(const std::vector<Slowdown>& slowdowns, std::string_view subject, std::vector<TimelineEvent>& out) {
  RELAYSIM_ASSERT(!subject.empty(), "an event on the timeline names what it happened to");
  for (const Slowdown& s : slowdowns) {
    out.push_back({s.window.at, s.window.length, "slowdown", std::string(subject), "latency x" + fmt("%g", s.factor), true});
  }
}

}  // namespace relaysim::sim
