// Each invariant's violations metric, derived from the system's table of invariants so that none
// can be forgotten and its name always follows the invariant's id: "W-nodup" gives
// `nodup_violations` ("W-nodup violations"). A system's metric table is its own rows followed by
// `violations`, the sum, and these (with_violation_metrics); the value is the Ledger's count, which the system's figures
// keep per invariant (`Figures::violations`, in the invariants' order).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

#include "sim/oracle/ledger.h"
#include "sim/report/metric.h"

namespace relaysim::sim {

namespace violation_metrics_detail {

inline constexpr std::string_view kNameEnd = "_violations";
inline constexpr std::string_view kMeaningEnd = " violations";

// "W-nodup" -> "nodup": the id without its system's letter.
constexpr std::string_view short_id(std::string_view id) {
  const std::size_t dash = id.find('-');
  return dash == std::string_view::npos ? id : id.substr(dash + 1);
}

template <const auto& Invariants>
constexpr std::size_t text_size() {
  std::size_t n = 0;
  for (const InvariantInfo& i : Invariants) n += short_id(i.id).size() + kNameEnd.size() + i.id.size() + kMeaningEnd.size();
  return n;
}

// Every row's name and meaning, back to back, in static storage the table's views point into.
template <const auto& Invariants>
struct Texts {
  static constexpr std::array<char, text_size<Invariants>()> chars = [] {
    std::array<char, text_size<Invariants>()> out{};
    std::size_t at = 0;
    const auto put = [&](std::string_view s) {
      for (const char c : s) out[at++] = c;
    };
    for (const InvariantInfo& i : Invariants) {
      put(short_id(i.id));
      put(kNameEnd);
      put(i.id);
      put(kMeaningEnd);
    }
    return out;
  }();

  static constexpr MetricInfo info(std::size_t k) {
    std::size_t at = 0;
    for (std::size_t j = 0; j < k; ++j) {
      at += short_id(Invariants[j].id).size() + kNameEnd.size() + Invariants[j].id.size() + kMeaningEnd.size();
    }
    const std::size_t name = short_id(Invariants[k].id).size() + kNameEnd.size();
    const std::size_t meaning = Invariants[k].id.size() + kMeaningEnd.size();
    return {std::string_view(chars.data() + at, name), Unit::count, std::string_view(chars.data() + at + name, meaning)};
  }
};

template <class Figures, std::size_t I>
double violations_of(const Figures& f, double) {
  return metric_math::d(f.violations[I]);
}

template <class Figures>
double all_violations(const Figures& f, double) {
  double sum = 0;
  for (const auto v : f.violations) sum += metric_math::d(v);
  return sum;
}

}  // namespace violation_metrics_detail

// A system's own metric rows (`Own`, MetricOf<Figures>), then `violations` (of every kind) and one
// violations row per invariant.
template <const auto& Own, const auto& Invariants>
constexpr auto with_violation_metrics() {
  using Row = std::remove_cvref_t<decltype(Own[0])>;
  using Figures = typename Row::Figures;
  using Texts = violation_metrics_detail::Texts<Invariants>;
  constexpr std::size_t own = std::size(Own);
  constexpr std::size_t invariants = std::size(Invariants);
  std::array<Row, own + 1 + invariants> out{};
  for (std::size_t i = 0; i < own; ++i) out[i] = Own[i];
  out[own] = Row{{"violations", Unit::count, "invariant violations of every kind"},
                 &violation_metrics_detail::all_violations<Figures>};
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((out[own + 1 + I] = Row{Texts::info(I), &violation_metrics_detail::violations_of<Figures, I>}), ...);
  }(std::make_index_sequence<invariants>{});
  return out;
}

// What an unknown name that ends like a violations metric gets told.
inline constexpr std::string_view kViolationsNaming =
    "an invariant's violations metric is named from its id without the system's letter: W-nodup's is nodup_violations";

}  // namespace relaysim::sim
