#include "model/core/random.h"

#include <cmath>
#include <numbers>

#include "model/core/assert.h"

namespace relaysim {

std::uint64_t hash_name(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Rng::Rng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& word : s_) {
    x = mix64(x);
    word = x;
  }
  RELAYSIM_ASSERT((s_[0] | s_[1] | s_[2] | s_[3]) != 0, "xoshiro state must not be all zero");
}

Rng Rng::derive(std::uint64_t root_seed, std::string_view name) {
  return Rng(mix64(root_seed) ^ hash_name(name));
}

static inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

std::uint64_t Rng::below(std::uint64_t n) {
  RELAYSIM_ASSERT(n > 0, "below(0) has no value");
  // Lemire's nearly-divisionless method.
  __extension__ using u128 = unsigned __int128;
  u128 m = static_cast<u128>(next_u64()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(next_u64()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double Rng::exponential(double mean) {
  RELAYSIM_ASSERT(mean > 0.0, "exponential needs a positive mean");
  return -mean * std::log1p(-uniform01());
}

double Rng::normal() {
  const double u1 = 1.0 - uniform01();  // (0, 1]
  const double u2 = uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace relaysim
