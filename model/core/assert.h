// Assertions that stay on in every build type.
//
// relaysim asserts its pre- and postconditions the way TigerBeetle does: a broken invariant in a
// simulator means every number it prints afterwards is wrong, so we stop at once and say where.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace relaysim::detail {
[[noreturn]] inline void assert_failed(const char* expr, const char* file, int line, const char* why) {
  std::fprintf(stderr, "relaysim: assertion failed: %s (%s) at %s:%d\n", expr, why, file, line);
  std::abort();
}
}  // namespace relaysim::detail

#define RELAYSIM_ASSERT(cond, why)                                                     \
  do {                                                                                 \
    if (!(cond)) [[unlikely]] ::relaysim::detail::assert_failed(#cond, __FILE__, __LINE__, why); \
  } while (0)
