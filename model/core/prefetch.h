// Prefetching a record that spans several cache lines.
//
// Why: the records a retention forgets (a store's row, the oracle's mirror of it) were last
// touched a whole retention earlier, so every line of them is cold, and they are larger than one
// line. `__builtin_prefetch(&record)` asks for the first line only; the fields read further in
// then miss one after another.
#pragma once

#include <cstddef>

namespace relaysim {

inline constexpr std::size_t kCacheLine = 64;

// Asks the cache for every line `x` lies on. A hint only: it reads nothing and may do nothing.
template <class T>
inline void prefetch_lines(const T& x) {
  const char* first = reinterpret_cast<const char*>(&x);
  const char* last = first + sizeof(T) - 1;
  for (const char* p = first; p < last; p += kCacheLine) __builtin_prefetch(p);
  __builtin_prefetch(last);  // the loop's steps may end just short of the last line
}

}  // namespace relaysim
