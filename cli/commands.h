// The commands of the relaysim command line (cli/main.cpp parses the arguments).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/queueing/mmc.h"

namespace relaysim::cli {

inline constexpr int kExitPass = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitInvalid = 2;
inline constexpr int kExitIncomplete = 3;
inline constexpr int kExitInterrupted = 130;

struct RunArgs {
  std::string file;
  std::optional<std::string> seed;          // checked here: CLI11 wraps -1 for unsigned options
  std::string store;                        // "", memory or sqlite
  std::optional<std::string> sqlite_path;
  bool overwrite = false;
  std::optional<std::string> json_path;     // "-": standard output
  std::optional<std::string> max_events;
  std::optional<std::string> memory_limit;  // a size, or "none"
  bool force = false;                       // run even when the estimate is above the memory limit
  bool quiet = false;
  std::vector<std::string> sets;            // key.path=value, over the file's own
  std::optional<std::string> scale;         // 1:N, after the sets
  std::optional<std::string> timeseries;    // a .csv file, or a result directory
  std::optional<std::string> interval;      // the time series' window
  std::optional<std::string> start_time;    // Unix seconds series.om stamps the run's start with
};

struct MmcArgs {
  sim::MmcParams params;
  std::optional<std::string> seed;
  bool json = false;
};

// Says what is wrong on stderr, as "relaysim: MESSAGE", and returns the exit status: the command
// line or an input is invalid (nothing was run), or a command ran and could not finish.
int fail_usage(const std::string& message);
int fail_incomplete(const std::string& message);

int run_command(const RunArgs& args);
int validate_command(const std::vector<std::string>& files, const std::vector<std::string>& sets = {});
int metrics_command(const std::optional<std::string>& system);
int reference_command();
int mmc_command(MmcArgs args);

// A whole number from 0 to 2^64 - 1, exactly as written (no sign, no spaces, no hex).
std::optional<std::uint64_t> parse_u64(const std::string& text);

}  // namespace relaysim::cli
