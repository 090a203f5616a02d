// Fingerprint: a hash over a run's significant events, printed with its seed. Equal runs have
// equal fingerprints; one changed decision anywhere changes it (a cheap, exact regression check).
#pragma once

#include <cstdint>

#include "model/core/random.h"
#include "model/core/time.h"

namespace relaysim {

class Fingerprint {
 public:
  void mix(std::uint64_t v) { h_ = mix64(h_ ^ v) + 0x9e3779b97f4a7c15ULL; }
  void mix(Time t) { mix(static_cast<std::uint64_t>(to_ns(t))); }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0x72656c617973696dULL;  // "relaysim"
};

}  // namespace relaysim
