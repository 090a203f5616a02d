#include "live/machine.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <utility>
#include <cstdio>
#include <fstream>

#include "model/core/assert.h"

namespace relaysim::live {

std::string human_bytes(double b) {
  RELAYSIM_ASSERT(!(b < 0), "a size is not negative");
  char buf[32];
  if (b >= 1073741824.0) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", b / 1073741824.0);
  } else if (b >= 1048576.0) {
    std::snprintf(buf, sizeof buf, "%.0f MiB", b / 1048576.0);
  } else if (b >= 1024.0) {
    std::snprintf(buf, sizeof buf, "%.0f KiB", b / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f bytes", b);
  }
  return buf;
}

std::optional<double> parse_size(const std::string& text) {
  double n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end == text.data() || !std::isfinite(n) || n <= 0) return std::nullopt;
  const std::string unit(end, text.data() + text.size());
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1},          {"B", 1},          {"KiB", 1024.0},   {"MiB", 1048576.0}, {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}, {"K", 1e3}, {"KB", 1e3}, {"M", 1e6}, {"MB", 1e6}, {"G", 1e9}, {"GB", 1e9}};
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) return n * factor;
  }
  return std::nullopt;
}

std::optional<double> memory_limit_of(const std::optional<std::string>& option, std::string& problem) {
  if (!option) return default_memory_limit();
  if (*option == "none") return 0.0;
  if (const auto size = parse_size(*option)) return *size;
  problem = "--memory-limit: expected a size such as 4GiB or 500MiB, or 'none', got '" + *option + "'";
  return std::nullopt;
}

double available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024.0;
  }
  return 0;
}

double default_memory_limit() {
  double limit = 0.9 * available_memory();
  struct rlimit space {};
  if (::getrlimit(RLIMIT_AS, &space) == 0 && space.rlim_cur != RLIM_INFINITY) {
    // Address space is more than resident memory (code, stacks, reserved heap): keep a margin.
    const double usable = 0.7 * static_cast<double>(space.rlim_cur);
    limit = limit > 0 ? std::min(limit, usable) : usable;
  }
  return limit;
}

double resident_memory() {
  std::ifstream in("/proc/self/statm");
  double size = 0;
  double resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

namespace {
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only touch lock-free atomics");
extern "C" void on_stop_signal(int sig) { g_signal.store(sig); }
}  // namespace

StopSignals::StopSignals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

bool stop_requested() { return g_signal.load() != 0; }

}  // namespace relaysim::live
