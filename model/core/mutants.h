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

enum class Mutant : std::uint8_t {
  none,
  retry_ignores_deadline,     // a retry is scheduled past deadline_at (no clamp)
  expired_backlog_attempted,  // a claim past its deadline is attempted instead of dead-lettered
  ingest_skips_idempotency,   // a duplicate create stores a second request
  breaker_never_opens,        // the ServiceB breaker never trips
  half_open_unlimited,        // half-open admits every call, not a bounded number of probes
  cache_ignores_ttl,          // the URL cache serves entries of any age
  completion_ignores_token,   // a completion applies under a stale claim token
  retry_terminal_4xx,         // a terminal 4xx is retried
  ignore_retry_after,         // Retry-After is not honoured
  ignore_backoff,             // a retry is due at once
  lease_shorter_than_timeout, // claims are leased for less than lookup + HTTP timeout
  crash_loses_leased_work,    // a request whose claimant died is never rescued
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
