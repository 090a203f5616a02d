// Integers read from JSON, refused instead of wrapped when they do not fit. nlohmann reads a
// non-negative integer as unsigned, a negative one as signed and anything else (a fraction, an
// exponent, 2^64 and beyond) as a double; its get<T>() converts whatever it holds, silently. The
// live shell's readers of logs take only what fits.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

namespace relaysim::live {

template <class T>
std::optional<T> json_integer(const nlohmann::json& j) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if (j.is_number_unsigned()) {
    const std::uint64_t v = j.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return std::nullopt;
    return static_cast<T>(v);
  }
  if (j.is_number_integer()) {  // negative
    const std::int64_t v = j.get<std::int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      return std::nullopt;
    } else {
      if (v < std::numeric_limits<T>::min()) return std::nullopt;
      return static_cast<T>(v);
    }
  }
  return std::nullopt;
}

}  // namespace relaysim::live
