// The machine the command line runs on, as far as its commands need to know it: how much memory
// there is to use, how much this process holds, and the signals that ask it to stop.
#pragma once

#include <csignal>
#include <optional>
#include <string>

namespace relaysim::live {

// "1.2 GiB", "500 MiB": a size of memory as a person reads it.
std::string human_bytes(double bytes);
// "4GiB", "500MiB", "2GB", "1048576" (bytes); nothing when malformed.
std::optional<double> parse_size(const std::string& text);
// The memory a command's runs may use: --memory-limit's SIZE or `none` (0: no limit), or by
// default most of the memory available; nothing (and `problem` says why) when it is malformed.
std::optional<double> memory_limit_of(const std::optional<std::string>& option, std::string& problem);
// MemAvailable from /proc/meminfo, in bytes; 0 when unknown.
double available_memory();
// What a run may use unless --memory-limit says otherwise: most of the memory available, and no
// more than the address-space limit (`ulimit -v`) lets it map. 0: unknown, not checked.
double default_memory_limit();
// This process's resident memory, in bytes; 0 when unknown.
double resident_memory();

// While one lives, Ctrl-C and SIGTERM ask the command to stop and report what it has
// (stop_requested() turns true); a second one ends the process at once (SA_RESETHAND puts the
// default action back).
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};
// A stop signal came (and the command has not ended).
bool stop_requested();

}  // namespace relaysim::live
