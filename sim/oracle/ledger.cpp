#include "sim/oracle/ledger.h"

#include "model/core/assert.h"

namespace relaysim::sim {

void Ledger::violate(std::size_t invariant, Time at, std::string subject, std::string what) {
  RELAYSIM_ASSERT(invariant < counts_.size(), "a violation of an invariant the ledger does not list");
  ++counts_[invariant];
  if (kept_[invariant]++ < kExamplesKept) examples_.push_back({invariant, at, std::move(subject), std::move(what)});
}

std::uint64_t Ledger::total() const {
  std::uint64_t n = 0;
  for (const std::uint64_t c : counts_) n += c;
  return n;
}

std::string Ledger::describe(const Violation& v) const {
  RELAYSIM_ASSERT(v.invariant < invariants_.size(), "a violation of an invariant the ledger lists");
  std::string s = std::string(invariants_[v.invariant].id) + " at " + format_time(v.at);
  if (!v.subject.empty()) s += " " + v.subject;
  return s + ": " + v.what;
}

}  // namespace relaysim::sim
