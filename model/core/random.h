// Rng: a seeded, explicitly passed random stream (xoshiro256**).
//
// There is no global RNG in relaysim. A run has one root seed; every component derives its own
// stream from the root and a stable name (Rng::derive), so adding an endpoint does not reshuffle
// the faults. Distributions are computed here rather than with <random>'s distributions, whose
// algorithms differ between standard libraries: the same seed gives the same run everywhere.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace relaysim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  // A stream for one named component, independent of every other name's stream.
  static Rng derive(std::uint64_t root_seed, std::string_view name);

  std::uint64_t next_u64();
  // Uniform in [0, 1).
  double uniform01();
  // Uniform integer in [0, n), n > 0, without modulo bias.
  std::uint64_t below(std::uint64_t n);
  bool chance(double p) { return p > 0.0 && uniform01() < p; }
  // Exponential with the given mean (> 0).
  double exponential(double mean);
  // Standard normal (Box-Muller, one value per call; deterministic).
  double normal();

 private:
  std::uint64_t s_[4];
};

// 64-bit FNV-1a, used to turn names into seeds and for fingerprints. (Stable forever: changing
// it would change every run's random streams.)
std::uint64_t hash_name(std::string_view name);
// A strong 64-bit mixer (splitmix64's finalizer).
// Inline: hash tables call it on every probe.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A hash for in-memory tables of longer strings (URLs): eight bytes per step instead of FNV-1a's
// one. Never for seeds or anything that must stay the same across versions.
inline std::uint64_t hash_bytes(std::string_view s) {
  std::uint64_t h = 0x51afd7ed558ccd6dULL ^ s.size();
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = mix64(h ^ w);
  }
  std::uint64_t tail = 0;
  for (std::size_t k = i; k < s.size(); ++k) tail = (tail << 8) | static_cast<unsigned char>(s[k]);
  return mix64(h ^ tail);
}

}  // namespace relaysim
