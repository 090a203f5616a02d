// Shared by the benchmark files: the --quick switch and the source tree's location.
#pragma once

#include <string>

namespace relaysim::bench {

// `relaysim_bench --quick` (what CI runs as a smoke test): every figure, on smaller sizes.
bool quick();

inline std::string source_dir() { return RELAYSIM_SOURCE_DIR; }

}  // namespace relaysim::bench
