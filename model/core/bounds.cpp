#include "model/core/bounds.h"

#include <cstdio>

namespace relaysim {

namespace {

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// "between A and B", "above A and at most B", and why.
std::string range(const std::string& lo, const std::string& hi, bool lo_open, const char* why) {
  return (lo_open ? "must be above " + lo + " and at most " + hi : "must be between " + lo + " and " + hi) +
         (why != nullptr ? std::string(" (") + why + ")" : std::string());
}

}  // namespace

std::string must_text(const Bounds<std::uint64_t>& b) { return range(std::to_string(b.lo), std::to_string(b.hi), b.lo_open, b.why); }

std::string must_text(const Bounds<Duration>& b) {
  if (b.lo == Duration::zero() && b.lo_open) {
    return "must be longer than 0s and at most " + write_duration(b.hi) + (b.why != nullptr ? std::string(" (") + b.why + ")" : "");
  }
  return range(write_duration(b.lo), write_duration(b.hi), b.lo_open, b.why);
}

std::string must_text(const Bounds<double>& b) { return range(number(b.lo), number(b.hi), b.lo_open, b.why); }

std::string must_text_share(const Bounds<double>& b) {
  return range(number(b.lo * 100) + "%", number(b.hi * 100) + "%", b.lo_open, b.why);
}

std::string must_text_rate(const Bounds<double>& b) {
  return range(number(b.lo) + "/s", number(b.hi) + "/s", b.lo_open, b.why);
}

void check(Duration v, const Bounds<Duration>& b, const std::string& key, std::vector<ConfigError>& out) {
  if (!b.holds(v)) out.push_back({key, must_text(b)});
}

void check(double v, const Bounds<double>& b, const std::string& key, std::vector<ConfigError>& out) {
  if (!b.holds(v)) out.push_back({key, must_text(b)});
}

void check_share(double v, const Bounds<double>& b, const std::string& key, std::vector<ConfigError>& out) {
  if (!b.holds(v)) out.push_back({key, must_text_share(b)});
}

}  // namespace relaysim
