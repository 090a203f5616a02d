// Mutants: planted bugs that prove the property tests can fail (DESIGN.md §6).
//
// Each Mutant names one bug that a line of real model code can be switched into. In normal builds
// planted() is a constant false and every mutant compiles away. Only the test build of the model
// (compiled with RELAYSIM_MUTANTS, linked into relaysim-mutants and the property tests) reads a
// process-wide switch, set by the mutants runner or `--mutant` before a run.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace relaysim {

// What each one breaks: describe(), in mutants.cpp (one place, so the two cannot drift).
enum class Mutant : std::uint8_t {
  none,
  retry_ignores_deadline,
  expired_backlog_attempted,
  ingest_skips_idempotency,
  breaker_never_opens,
  half_open_unlimited,
  cache_ignores_ttl,
  completion_ignores_token,
  retry_terminal_4xx,
  ignore_retry_after,
  ignore_backoff,
  lease_shorter_than_timeout,
  crash_loses_leased_work,
};
inline constexpr int kMutantCount = 13;

std::string_view to_string(Mutant m);
std::optional<Mutant> mutant_from_string(std::string_view name);
// What the mutant breaks, in a sentence, for reports.
std::string_view describe(Mutant m);

#ifdef RELAYSIM_MUTANTS
namespace mutants {
Mutant& active();
}
inline bool planted(Mutant m) { return mutants::active() == m; }
inline Mutant active_mutant() { return mutants::active(); }
#else
constexpr bool planted(Mutant) { return false; }
constexpr Mutant active_mutant() { return Mutant::none; }
#endif

}  // namespace relaysim
