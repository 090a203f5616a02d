// SystemOf: the parts of a System (sim/system.h) every system writes the same way — reading,
// writing and documenting its section from the section's schema, and starting a run of its
// Simulation. A system derives from it and adds what is its own: its name and title, metrics,
// invariants, mutants and footprint.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/scenario/schema.h"
#include "sim/system.h"

namespace relaysim::sim {

template <class Spec, const Schema<Spec>& (*SpecSchema)(), class Sim>
class SystemOf : public System {
 public:
  std::unique_ptr<SystemSpec> read(const Reader& r, const YAML::Node& section, const std::string& path) const override {
    auto spec = std::make_unique<Spec>();
    SpecSchema().read(r, section, path, *spec);
    return spec;
  }
  void write(YAML::Emitter& e, const SystemSpec& spec) const override {
    SpecSchema().emit(e, dynamic_cast<const Spec&>(spec), Spec{});
  }
  void document(std::vector<DocTable>& out) const override { SpecSchema().document(out, std::string(name()), Spec{}); }
  std::unique_ptr<sim::Simulation> simulate(RunContext& context) const override { return std::make_unique<Sim>(context); }
};

}  // namespace relaysim::sim
