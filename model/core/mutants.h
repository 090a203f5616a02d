// Mutants: planted bugs that prove the property tests can fail.
//
// A Mutant names one bug that a line of real model code can be switched into:
// `if (planted(mutant::retry_ignores_deadline)) ...`. Each system lists its own (for the webhook:
// model/webhook/mutants.h, which also lists the shared components' mutants its properties must
// catch); this header is only the mechanism. In normal builds planted() is a constant false and
// every mutant compiles away. Only the test build of the model (compiled with RELAYSIM_MUTANTS,
// linked into relaysim-mutants and the property tests) reads a process-wide switch, set by the
// mutants runner or `--mutant` before a run.
#pragma once

#include <string_view>

namespace relaysim {

struct Mutant {
  std::string_view name;         // as the command line spells it
  std::string_view description;  // what it breaks, in a sentence, for reports
};

#if defined(RELAYSIM_MUTANTS)
namespace mutants {
const Mutant*& active();
}
inline bool planted(const Mutant& m) { return mutants::active() == &m; }
inline const Mutant* active_mutant() { return mutants::active(); }
#elif defined(RELAYSIM_EITHER_MODEL)
// Code compiled once and linked with either build of the model (sim/ and the component property
// suites: CMakeLists.txt) cannot know whether bugs may be planted, so it may not ask: a planted
// bug lives in a model source, never in a header such code includes.
bool planted(const Mutant&) = delete;
const Mutant* active_mutant() = delete;
#else
constexpr bool planted(const Mutant&) { return false; }
constexpr const Mutant* active_mutant() { return nullptr; }
#endif

}  // namespace relaysim
