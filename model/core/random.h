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

// A hash for in-memory tables of strings (idempotency keys, cxids, URLs, payload digests): eight
// bytes per step instead of FNV-1a's one. Never for seeds or anything that must stay the same
// across versions.
inline std::uint64_t hash_bytes(std::string_view s) {
  const char* p = s.data();
  const std::size_t n = s.size();
  auto load = [](const char* at, auto word) {
    std::memcpy(&word, at, sizeof word);
    return static_cast<std::uint64_t>(word);
  };
  std::uint64_t h = 0x51afd7ed558ccd6dULL ^ n;
  std::uint64_t last = 0;  // the last 1-8 bytes, read without a loop over single bytes
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8) h = mix64(h ^ load(p + i, std::uint64_t{}));
    last = load(p + n - 8, std::uint64_t{});  // overlaps the words above when n is not a multiple of 8
  } else if (n >= 4) {
    last = load(p, std::uint32_t{}) << 32 | load(p + n - 4, std::uint32_t{});
  } else if (n > 0) {
    auto byte = [&](std::size_t i) { return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])); };
    last = byte(0) << 16 | byte(n / 2) << 8 | byte(n - 1);
  }
  return mix64(h ^ last);
}

}  // namespace relaysim
