// Fingerprint: a hash over a run's significant events, printed with its seed. Equal runs have
// equal fingerprints; one changed decision anywhere changes it (a cheap, exact regression check).
#pragma once

#include <cstdint>

#include "model/core/random.h"
#include "model/core/time.h"

namespace relaysim {

class Fingerprint {
 public:
  // One cheap step per value, the strong mixer once at the end. Each step is a bijection of the
  // state (an xor with the value, a multiplication by an odd constant, an xor-shift), so for any
  // history a different value leaves a different state, and every later step keeps it different:
  // one changed value always changes the fingerprint. (A full mix64 per value cost 2-3 % of a
  // webhook run's instructions: a run mixes about 40 values per request.)
  void mix(std::uint64_t v) {
    h_ = (h_ ^ v) * 0x9e3779b97f4a7c15ULL;
    h_ ^= h_ >> 32;
  }
  void mix(Time t) { mix(static_cast<std::uint64_t>(to_ns(t))); }
  std::uint64_t value() const { return mix64(h_); }

 private:
  std::uint64_t h_ = 0x72656c617973696dULL;  // "relaysim"
};

}  // namespace relaysim
