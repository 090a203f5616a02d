// printf into a string: the one formatting helper every layer may use (messages, summaries).
#pragma once

#include <cstdio>
#include <string>

namespace relaysim {

// printf into a string (at most 255 characters: one line of a message or a summary).
template <class... Args>
std::string fmt(const char* format, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

}  // namespace relaysim
