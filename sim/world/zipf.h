// Zipf's law over ranks 1..n: rank k drawn with probability proportional to 1 / k^s. Drawn by
// rejection-inversion (Hörmann and Derflinger, "Rejection-inversion to generate variates from
// monotone discrete distributions", 1996), the method Apache Commons uses: O(1) per draw and no
// table, so a hundred million tenants cost no memory, and about one uniform a draw.
#pragma once

#include <cmath>
#include <cstdint>

#include "model/core/assert.h"
#include "model/core/random.h"

namespace relaysim::sim {

class Zipf {
 public:
  // `n` ranks, exponent `s` > 0 (1: the classic Zipf; larger: more skewed).
  Zipf(std::uint64_t n, double s) : n_(n), s_(s) {
    RELAYSIM_ASSERT(n >= 1 && s > 0, "Zipf's law over some ranks, with a positive exponent");
    h_x1_ = integral_h(1.5) - 1.0;
    h_n_ = integral_h(static_cast<double>(n) + 0.5);
    squeeze_ = 2.0 - integral_h_inverse(integral_h(2.5) - h(2.0));
  }

  // A rank, 1 (the most frequent) to n.
  std::uint64_t draw(Rng& rng) const {
    for (;;) {
      const double u = h_n_ + rng.uniform01() * (h_x1_ - h_n_);
      const double x = integral_h_inverse(u);
      const double rounded = std::floor(x + 0.5);
      const std::uint64_t k = rounded < 1 ? 1 : rounded > static_cast<double>(n_) ? n_ : static_cast<std::uint64_t>(rounded);
      const auto kd = static_cast<double>(k);
      if (kd - x <= squeeze_ || u >= integral_h(kd + 0.5) - h(kd)) return k;
    }
  }

 private:
  // h(x) = x^-s, and H, an integral of it, with its inverse; written so that s near 1 loses no
  // precision (log1p(t)/t and expm1(t)/t taken by their series near 0).
  double h(double x) const { return std::exp(-s_ * std::log(x)); }
  double integral_h(double x) const {
    const double lx = std::log(x);
    return expm1_over((1.0 - s_) * lx) * lx;
  }
  double integral_h_inverse(double x) const {
    double t = x * (1.0 - s_);
    if (t < -1.0) t = -1.0;  // rounding can take it just past, where log1p is not defined
    return std::exp(log1p_over(t) * x);
  }
  static double log1p_over(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x)); }
  static double expm1_over(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x)); }

  std::uint64_t n_;
  double s_;
  double h_x1_ = 0, h_n_ = 0, squeeze_ = 0;
};

}  // namespace relaysim::sim
