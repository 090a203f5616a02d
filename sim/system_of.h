// SystemOf: a System (sim/system.h) made from its manifest. A system declares what it is in one
// struct — its name and title, its section's schema, its tables of metrics, series, pipeline,
// invariants and planted bugs, its lifecycles, what its groups are and its Simulation — and
// SystemOf answers every question the spine asks of those. The system's class then adds only
// what it computes: its groups in a scenario, its footprint, its station.
//
//   struct Manifest {
//     using Spec = SmsSpec;                       // its section, a SystemSpec
//     using Simulation = sms::Simulation;         // constructible from a RunContext&
//     static constexpr std::string_view kName = "sms", kTitle = "an SMS gateway…", kGroupDimension = "provider";
//     static const Schema<Spec>& schema();
//     static constexpr const auto& kMetrics = sms::kMetrics;      // MetricOf<…>[] (sim/report/metric.h)
//     static constexpr const auto& kSeries = sms::kSeries;        // SeriesOf<…>::Column[] (sim/report/series.h)
//     static constexpr const auto& kGroupSeries = sms::kProviderSeries;  // optional: columns per group
//     static constexpr const auto& kPipeline = sms::kPipeline;    // Flow[]
//     static constexpr const auto& kInvariants = sms::kInvariants;
//     static constexpr const auto& kMutants = model::kMutants;
//     static std::vector<LifecycleDiagram> lifecycles();
//   };
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/report/metric.h"
#include "sim/report/series.h"
#include "sim/scenario/schema.h"
#include "sim/system.h"

namespace relaysim::sim {

template <class Manifest>
class SystemOf : public System {
 public:
  using Spec = typename Manifest::Spec;

  std::string_view name() const override { return Manifest::kName; }
  std::string_view title() const override { return Manifest::kTitle; }

  std::unique_ptr<SystemSpec> read(const Reader& r, const YAML::Node& section, const std::string& path) const override {
    auto spec = std::make_unique<Spec>();
    Manifest::schema().read(r, section, path, *spec);
    return spec;
  }
  void write(YAML::Emitter& e, const SystemSpec& spec) const override {
    Manifest::schema().emit(e, dynamic_cast<const Spec&>(spec), Spec{});
  }
  void document(std::vector<DocTable>& out) const override { Manifest::schema().document(out, std::string(name()), Spec{}); }

  std::span<const MetricInfo> metrics() const override { return metric_infos_of<Manifest::kMetrics>(); }
  std::span<const SeriesColumn> series() const override { return series_infos_of<Manifest::kSeries>(); }
  std::span<const SeriesColumn> group_series() const override {
    if constexpr (requires { Manifest::kGroupSeries; }) {
      return series_infos_of<Manifest::kGroupSeries>();
    } else {
      return {};
    }
  }
  std::span<const Flow> pipeline() const override { return Manifest::kPipeline; }
  std::vector<LifecycleDiagram> lifecycles() const override { return Manifest::lifecycles(); }
  std::string_view group_dimension() const override { return Manifest::kGroupDimension; }
  std::span<const InvariantInfo> invariants() const override { return Manifest::kInvariants; }
  std::span<const Mutant* const> mutants() const override { return Manifest::kMutants; }

  std::unique_ptr<sim::Simulation> simulate(RunContext& context) const override {
    return std::make_unique<typename Manifest::Simulation>(context);
  }
};

}  // namespace relaysim::sim
