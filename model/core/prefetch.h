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
  // By offset, so no pointer past the object is ever formed.
  for (std::size_t offset = 0; offset < sizeof(T); offset += kCacheLine) __builtin_prefetch(first + offset);
  __builtin_prefetch(first + sizeof(T) - 1);  // the steps may end just short of the last line
}

}  // namespace relaysim
