#include "sim/writer.h"

#include <yaml-cpp/yaml.h>

#include "sim/loader.h"
#include "sim/system.h"

namespace relaysim::sim {

std::string write_scenario(const Scenario& s) {
  RELAYSIM_ASSERT(s.system != nullptr && s.has_spec(), "only a whole scenario can be written");
  const Scenario defaults;
  YAML::Emitter e;
  e << YAML::BeginMap;
  for (const auto& k : scenario_schema().keys()) {
    if (k.name == kSectionBefore) {
      e << YAML::Key << std::string(s.system->name()) << YAML::Value;
      s.system->write(e, s.spec());
    }
    if (!k.always_write && !k.differs(s, defaults)) continue;
    e << YAML::Key << k.name << YAML::Value;
    k.emit(e, s, defaults);
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace relaysim::sim
