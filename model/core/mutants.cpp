#include "model/core/mutants.h"

#include <array>

namespace relaysim {

namespace {
struct Info {
  std::string_view name;
  std::string_view description;
};
constexpr std::array<Info, kMutantCount> kInfo{{
    {"none", "no planted bug"},
    {"retry_ignores_deadline", "a retry is scheduled past deadline_at (no clamp)"},
    {"expired_backlog_attempted", "a claim past its deadline is attempted instead of dead-lettered"},
    {"ingest_skips_idempotency", "a duplicate create stores a second request"},
    {"breaker_never_opens", "the ServiceB breaker never trips"},
    {"half_open_unlimited", "half-open admits every call, not a bounded number of probes"},
    {"cache_ignores_ttl", "the URL cache serves entries of any age"},
    {"completion_ignores_token", "a completion applies under a stale claim token"},
    {"retry_terminal_4xx", "a terminal 4xx is retried"},
    {"ignore_retry_after", "Retry-After is not honoured"},
    {"ignore_backoff", "a retry is due at once, ignoring the backoff"},
    {"lease_shorter_than_timeout", "claims are leased for less than lookup + HTTP timeout"},
    {"crash_loses_leased_work", "a request whose claimant died is never rescued"},
}};
}  // namespace

std::string_view to_string(Mutant m) { return kInfo[static_cast<std::size_t>(m)].name; }
std::string_view describe(Mutant m) { return kInfo[static_cast<std::size_t>(m)].description; }

std::optional<Mutant> mutant_from_string(std::string_view name) {
  for (std::size_t i = 0; i < kInfo.size(); ++i) {
    if (kInfo[i].name == name) return static_cast<Mutant>(i);
  }
  return std::nullopt;
}

#ifdef RELAYSIM_MUTANTS
Mutant& mutants::active() {
  static Mutant active = Mutant::none;
  return active;
}
#endif

}  // namespace relaysim
