// ConfigError: one problem a system's validate() found in its configuration, named by the key a
// scenario writes it under, so the loader can point at the line.
#pragma once

#include <string>

namespace relaysim {

struct ConfigError {
  std::string key;      // e.g. "platform.lease"
  std::string message;  // what is wrong and why it matters
};

}  // namespace relaysim
