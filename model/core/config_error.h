// ConfigError: one problem a system's validate() found in its configuration, named by its key
// relative to the section validated (a platform's `lease`, not `platform.lease`), so the loader
// can point at the line wherever the section sits in the file.
#pragma once

#include <string>

namespace relaysim {

struct ConfigError {
  std::string key;      // e.g. "lease", "retry.initial", "types[2].max_attempts"
  std::string message;  // what is wrong and why it matters
};

}  // namespace relaysim
