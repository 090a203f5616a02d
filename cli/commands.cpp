#include "cli/commands.h"
#include "live/machine.h"
#include "cli/outputs.h"

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "model/core/assert.h"
#include "model/store/store_error.h"
#include "sim/capacity.h"
#include "sim/database.h"
#include "sim/summary.h"
#include "sim/report/text.h"
#include "sim/run.h"
#include "sim/loader.h"
#include "sim/scenario/units.h"
#include "sim/system.h"

namespace relaysim::cli {

using live::StopSignals;
using live::default_memory_limit;
using live::human_bytes;
using live::memory_limit_of;
using live::resident_memory;
using live::stop_requested;

using namespace relaysim::sim;

int fail_usage(const std::string& message) {
  std::cerr << "relaysim: " << message << "\n";
  return kExitInvalid;
}

int fail_incomplete(const std::string& message) {
  std::cerr << "relaysim: " << message << "\n";
  return kExitIncomplete;
}

std::optional<std::uint64_t> parse_u64(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

namespace {

// ---- the JSON output ------------------------------------------------------------------------

// The descriptor a path names when it is one of this process's own -- /dev/stdout, /dev/fd/3,
// /proc/self/fd/3, or a symlink to one -- or -1. Such a path must be written through the
// descriptor: opening it anew would start at offset 0 of a file the shell opened for appending,
// and renaming over it would unlink what the shell redirected to.
int own_descriptor(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec).lexically_normal();
  const std::string self = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (int hop = 0; hop < 40 && !ec; ++hop) {
    const std::string text = p.string();
    static const std::pair<const char*, int> kStd[] = {{"/dev/stdin", 0}, {"/dev/stdout", 1}, {"/dev/stderr", 2}};
    for (const auto& [name, fd] : kStd) {
      if (text == name) return fd;
    }
    for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"), self}) {
      if (text.rfind(prefix, 0) == 0) {
        if (const auto n = parse_u64(text.substr(prefix.size())); n && *n < 1u << 20) return static_cast<int>(*n);
      }
    }
    if (!fs::is_symlink(p, ec)) break;
    const fs::path next = fs::read_symlink(p, ec);
    p = (next.is_absolute() ? next : p.parent_path() / next).lexically_normal();
  }
  return -1;
}

// Where --json goes, checked before the run, so a run is never lost to an output path that turns
// out to be unwritable at the end. "-" (and /dev/stdout) is standard output. A regular file (or a
// new name) is written to a temporary name beside it and renamed, so a reader never sees half a
// file; through a symlink the rename lands on the file it points to, and the link stays. A FIFO,
// a character device such as /dev/null and a descriptor of this process (the pipe of a shell's
// >(...)) are written through: renaming over them would replace them with a plain file.
class JsonOutput {
 public:
  std::optional<std::string> open(const std::string& path, const std::string& scenario_file, const std::string& database) {
    namespace fs = std::filesystem;
    path_ = path;
    if (path == "-") return std::nullopt;
    if (path.empty()) return "--json needs a path (or '-' for standard output)";
    if (const int fd = own_descriptor(path); fd >= 0) {
      if (fd == STDOUT_FILENO) {
        path_ = "-";
        return std::nullopt;
      }
      const int flags = ::fcntl(fd, F_GETFL);
      if (flags < 0) return "cannot write --json " + path + ": " + std::strerror(errno);
      if ((flags & O_ACCMODE) == O_RDONLY) return "--json " + path + " is open for reading only; give a file name or '-'";
      fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
      if (fd_ < 0) return "cannot write --json " + path + ": " + std::strerror(errno);
      return std::nullopt;
    }
    std::error_code ec;
    if (fs::is_directory(path, ec)) return "--json " + path + " is a directory; give a file name";
    for (const std::string& other : {scenario_file, database}) {
      if (other.empty() || other == ":memory:" || other == "-") continue;
      const fs::path mine = fs::weakly_canonical(path, ec);
      const fs::path theirs = fs::weakly_canonical(other, ec);
      const bool same = (fs::exists(path, ec) && fs::equivalent(path, other, ec)) || (!mine.empty() && mine == theirs);
      if (same) {
        return "--json " + path + " is the " + (other == scenario_file ? "scenario file" : "database") +
               "; the result would overwrite it";
      }
    }
    struct stat target {};
    const bool exists = ::stat(path.c_str(), &target) == 0;
    if (!exists && errno != ENOENT) return "cannot write --json " + path + ": " + std::strerror(errno);
    if (exists && S_ISFIFO(target.st_mode)) return open_fifo(path);
    if (exists && S_ISCHR(target.st_mode)) {
      fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0) return "cannot write --json " + path + ": " + std::strerror(errno);
      return std::nullopt;
    }
    if (exists && !S_ISREG(target.st_mode)) {
      return "--json " + path + " is " + (S_ISBLK(target.st_mode) ? "a block device" : "a socket") +
             "; give a file name, a FIFO or '-'";
    }
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      if (!exists) return "--json " + path + " is a symlink to nothing; give a file name";
      final_ = fs::canonical(path, ec).string();
      if (ec) return "cannot write --json " + path + ": " + ec.message();
    } else {
      final_ = path;
    }
    temp_ = final_ + ".XXXXXX";
    fd_ = ::mkstemp(temp_.data());
    if (fd_ < 0) {
      temp_.clear();
      return "cannot write --json " + path + ": " + std::strerror(errno);
    }
    return std::nullopt;
  }
  ~JsonOutput() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty()) ::unlink(temp_.c_str());
  }
  JsonOutput() = default;
  JsonOutput(const JsonOutput&) = delete;
  JsonOutput& operator=(const JsonOutput&) = delete;

  bool to_stdout() const { return path_ == "-"; }

  // Returns what went wrong, or nothing.
  std::optional<std::string> write(const std::string& text) {
    if (to_stdout()) {
      std::cout << text << "\n" << std::flush;
      return std::cout ? std::nullopt : std::optional<std::string>("cannot write the JSON to standard output");
    }
    RELAYSIM_ASSERT(fd_ >= 0, "--json is opened before the run");
    std::string data = text + "\n";
    const char* p = data.data();
    std::size_t left = data.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        return failed();
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    if (!temp_.empty()) ::fchmod(fd_, 0644);
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) return failed();
    if (!temp_.empty() && std::rename(temp_.c_str(), final_.c_str()) != 0) return failed();
    temp_.clear();
    return std::nullopt;
  }

 private:
  std::string failed() const { return "cannot write --json " + path_ + ": " + std::strerror(errno); }

  // A FIFO with no reader would block the open for ever, silently: say what it waits for.
  std::optional<std::string> open_fifo(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0 && errno == ENXIO) {
      std::cerr << "relaysim: waiting for a reader of the FIFO " << path << " (--json)\n";
      fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    }
    if (fd_ < 0 && errno == EINTR) return "stopped while waiting for a reader of the FIFO " + path + " (--json)";
    if (fd_ < 0) return "cannot write --json " + path + ": " + std::strerror(errno);
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    return std::nullopt;
  }

  std::string path_;   // as given
  std::string final_;  // the file the rename lands on: path_, or what its symlink points to
  std::string temp_;   // empty when writing straight through to a device or a pipe
  int fd_ = -1;
};

// ---- progress -------------------------------------------------------------------------------

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A bar on a terminal; a line every few seconds otherwise (a CI log).
class Progress {
 public:
  Progress(Clock::time_point started, Duration total, bool tty) : started_(started), total_(total), tty_(tty) {}

  void update(Time now, std::uint64_t events) {
    const double wall = since(started_);
    const double done = std::min(1.0, to_seconds(now) / std::max(1e-9, to_seconds(total_)));
    if (tty_) {
      if (wall - last_ < 0.1) return;
      last_ = wall;
      const int bar = static_cast<int>(done * 30);
      std::fprintf(stderr, "\r  [%-30.*s] %3.0f%%  virtual %s  wall %.1fs  %.3g events", bar,
                   "##############################", done * 100, format_time(now).c_str(), wall,
                   static_cast<double>(events));
      shown_ = true;
    } else {
      if (wall - last_ < 5.0) return;
      last_ = wall;
      std::fprintf(stderr, "relaysim: %3.0f%%  virtual %s of %s  wall %.0fs  %.3g events\n", done * 100,
                   format_time(now).c_str(), format_duration(total_).c_str(), wall, static_cast<double>(events));
    }
    std::fflush(stderr);
  }
  void clear() {
    if (shown_) std::fprintf(stderr, "\r%*s\r", 110, "");
    shown_ = false;
  }

 private:
  Clock::time_point started_;
  Duration total_;
  bool tty_;
  double last_ = 0;
  bool shown_ = false;
};


std::optional<Scenario> load(const std::string& file, const std::vector<std::string>& sets = {}) {
  try {
    std::vector<Override> overrides;
    for (const std::string& set : sets) overrides.push_back(parse_override(set));
    return load_scenario(file, overrides);
  } catch (const ScenarioError& e) {
    std::cerr << "relaysim: invalid scenario: " << e.what() << "\n";
    return std::nullopt;
  }
}


// --scale 1:N: appends to `sets` the values that make `s` N times smaller (System::scaled) and a
// name that says so. Returns the problem, or nothing.
std::optional<std::string> scale_sets(const Scenario& s, const std::string& scale, std::vector<std::string>& sets) {
  std::uint32_t n = 0;
  const std::string_view digits = std::string_view(scale).substr(std::min<std::size_t>(2, scale.size()));
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (scale.substr(0, 2) != "1:" || digits.empty() || digits[0] == '0' || ec != std::errc{} ||
      end != digits.data() + digits.size() || n > 999'999) {
    return "--scale: expected 1:N with N a whole number from 1 to 999999, such as 1:10, got '" + scale + "'";
  }
  const std::optional<std::vector<std::string>> values = s.system->scaled(s, n);
  if (!values) return "--scale: a scenario of the " + std::string(s.system->name()) + " system cannot be scaled";
  sets.insert(sets.end(), values->begin(), values->end());
  sets.push_back("name=" + nlohmann::json(s.name + " at 1:" + std::to_string(n)).dump());  // quoted: any name reads back
  return std::nullopt;
}

// The command line, checked before anything else: nothing is run on a mistake in it. Returns the
// problem, or nothing.
std::optional<std::string> read_run_options(const RunArgs& args, RunOptions& options, double& memory_limit) {
  if (args.seed) {
    options.seed = parse_u64(*args.seed);
    if (!options.seed) return "--seed: expected a whole number from 0 to 18446744073709551615, got '" + *args.seed + "'";
  }
  if (args.max_events) {
    const auto n = parse_u64(*args.max_events);
    if (!n || *n == 0) return "--max-events: expected a whole number from 1 to 18446744073709551615, got '" + *args.max_events + "'";
    options.max_events = *n;
  }
  std::string problem;
  const std::optional<double> limit = memory_limit_of(args.memory_limit, problem);
  if (!limit) return problem;
  memory_limit = *limit;
  if (args.interval) {
    if (!args.timeseries) return "--interval goes with --timeseries";
    if (!parse_duration(*args.interval, options.series_interval) || options.series_interval <= Duration{}) {
      return "--interval: expected a span of time such as 10s, 1m or 1h, got '" + *args.interval + "'";
    }
  }
  if (args.store == "memory") options.store = StoreKind::memory;
  if (args.store == "sqlite") options.store = StoreKind::sqlite;
  if (args.sqlite_path) {
    if (args.store == "memory") return "--sqlite-path goes with the SQLite store, not --store memory";
    if (args.sqlite_path->empty()) return "--sqlite-path needs a path";
    options.store = StoreKind::sqlite;
    options.sqlite_path = *args.sqlite_path;
  } else if (args.overwrite) {
    return "--overwrite goes with --sqlite-path";
  }
  return std::nullopt;
}

// "about 1.2 GiB, most of it for 2000000 requests held at once (1.1 GiB)"
std::string footprint_text(const Footprint& f) {
  const Footprint::Part most = f.largest();
  return "about " + human_bytes(f.bytes()) + ", most of it for " + most.what + " (" + human_bytes(most.bytes) + ")";
}

// Whether a run estimated at `f` is refused under `limit` (bytes; 0: no limit) unless forced.
bool over_limit(const Footprint& f, double limit) { return limit > 0 && f.bytes() > limit; }

// What the run will hold, against what it may use: refused above the limit (unless forced), a
// warning above half of it. Returns the refusal, or nothing.
std::optional<std::string> check_footprint(const Footprint& f, double limit, const RunArgs& args) {
  if (over_limit(f, limit) && !args.force) {
    return "this scenario would hold " + footprint_text(f) + ", more than the " + human_bytes(limit) +
           " it may use; " + f.largest().advice +
           " (or raise --memory-limit, or --force a run that the limit will stop if it must)";
  }
  if (over_limit(f, limit / 2) && !args.quiet) {
    std::cerr << "relaysim: warning: this scenario may hold " << footprint_text(f) << ", of the " << human_bytes(limit)
              << " it may use; " << f.largest().advice << "\n";
  }
  // A few events a firing at a few million events a second: past a billion firings, hours.
  if (f.timer_firings > 1e9 && !args.quiet) {
    const double hours = f.timer_firings * 3 / 3e6 / 3600;
    std::cerr << "relaysim: warning: the system's own timers fire about " << fmt("%.2g", f.timer_firings)
              << " times in this scenario, on the order of " << fmt(hours < 10 ? "%.1f" : "%.0f", hours) << " hours at a few million events a second; "
              << f.timers_advice << "\n";
  }
  return std::nullopt;
}

// Stops the run on Ctrl-C, and before the machine runs out of memory (looked at five times a
// second: reading /proc costs more than a few thousand events).
struct StopWatch {
  Clock::time_point started;
  double limit = 0;  // bytes; 0: none
  double checked_at = 0;
  double resident = 0;
  bool over = false;
  bool stop() {
    if (stop_requested()) return true;
    if (limit > 0 && since(started) - checked_at >= 0.2) {
      checked_at = since(started);
      resident = resident_memory();
      over = resident > limit;
    }
    return over;
  }
};

// Whether two paths name one file: the same file if both exist, else the same place. A FIFO, a
// device or a descriptor of this process (/dev/stdout) is written through, never replaced: such
// a path is no file of its own (JsonOutput judges those).
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const std::string& p : {a, b}) {
    if (own_descriptor(p) >= 0) return false;
    const fs::file_status st = fs::status(p, ec);
    if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st)) return false;
  }
  if (fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec)) return true;
  const fs::path x = fs::weakly_canonical(a, ec);
  const fs::path y = fs::weakly_canonical(b, ec);
  return !x.empty() && x == y;
}

int exit_status(const RunResult& r) {
  switch (r.ending) {
    case Ending::out_of_memory:
    case Ending::store_failure: return kExitIncomplete;
    case Ending::interrupted: return kExitInterrupted;
    default: return r.pass() ? kExitPass : kExitFail;
  }
}

// A time series of more rows than this is a mistake: a second's window over a month. Returns the
// refusal, or nothing.
std::optional<std::string> check_series_rows(const RunArgs& args, const RunOptions& options, const Scenario& scenario) {
  constexpr double kMaxRows = 1e6;
  if (args.timeseries) {
    RELAYSIM_ASSERT(options.series_interval > Duration{}, "a window is longer than zero");
    if (to_seconds(scenario.duration) / to_seconds(options.series_interval) > kMaxRows) {
      return "--interval " + format_duration(options.series_interval) + " over " + format_duration(scenario.duration) +
             " makes more than a million rows; choose a longer --interval";
    }
  }
  return std::nullopt;
}

// No two outputs (nor an output and the scenario file) are one file: one would replace the
// other without a word. Returns the refusal, or nothing.
std::optional<std::string> check_outputs_apart(const RunArgs& args, const std::string& database) {
  std::vector<std::pair<std::string, std::string>> files;  // what, path
  if (args.file != "-") files.emplace_back("the scenario file", args.file);
  if (database != ":memory:") files.emplace_back("the database (--sqlite-path)", database);
  if (args.json_path && *args.json_path != "-") files.emplace_back("the --json output", *args.json_path);
  if (args.timeseries) {
    files.emplace_back("the --timeseries output", *args.timeseries);
    for (const std::string& f : RunOutputs::files_of(*args.timeseries)) {
      if (f != *args.timeseries) files.emplace_back("a --timeseries output", f);
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (std::size_t j = i + 1; j < files.size(); ++j) {
      if (!same_file(files[i].second, files[j].second)) continue;
      return files[j].first + " " + files[j].second + " is " + files[i].first + "; one would overwrite the other";
    }
  }
  return std::nullopt;
}

// Opens --json and --timeseries before the run, and points the run's sinks at the time series.
// Returns the problem, or nothing.
std::optional<std::string> open_outputs(const RunArgs& args, const Scenario& as_run, const std::string& database,
                                        JsonOutput& json, RunOutputs& outputs, RunOptions& options) {
  double start_s = 0;
  if (args.start_time) {
    // Up to the last second of year 9999, as Prometheus's tools read a timestamp.
    constexpr std::uint64_t kLatest = 253'402'300'799;
    const auto t = parse_u64(*args.start_time);
    if (!t || *t > kLatest) return "--start-time: expected Unix seconds from 0 to " + std::to_string(kLatest) + ", got '" + *args.start_time + "'";
    if (!args.timeseries || RunOutputs::files_of(*args.timeseries).size() == 1) {
      return "--start-time stamps series.om: it goes with --timeseries DIR";
    }
    start_s = static_cast<double>(*t);
  }
  if (args.json_path) {
    if (auto problem = json.open(*args.json_path, args.file, database)) return problem;
  }
  if (args.timeseries) {
    if (auto problem = outputs.open(*args.timeseries, as_run, start_s)) return problem;
    options.series = &outputs;
    if (outputs.directory()) options.records = &outputs;
  }
  return std::nullopt;
}

// Takes the database for the run and labels it with the run's start. Returns the problem, or nothing.
std::optional<std::string> start_database(const std::string& database, bool overwrite, const Scenario& as_run,
                                          DatabaseLock& database_lock) {
  if (auto problem = prepare_database(database, overwrite, database_lock)) return problem;
  try {
    record_run_start(database, as_run);
  } catch (const StoreError& e) {
    return std::string("cannot use the database: ") + e.what();
  }
  return std::nullopt;
}

// The run itself: with progress unless quiet, stopped by Ctrl-C or when it holds more than
// `memory_limit`. Returns its result, or nothing (having said why) when it failed.
std::optional<RunResult> simulate(const Scenario& scenario, RunOptions options, bool quiet, Clock::time_point started,
                                  double memory_limit, const Footprint& footprint) {
  Progress progress(started, scenario.duration, !quiet && isatty(STDERR_FILENO) != 0);
  if (!quiet) options.progress = [&progress](Time now, std::uint64_t events) { progress.update(now, events); };
  StopWatch watch{started, memory_limit};
  options.should_stop = [&watch] { return watch.stop(); };
  RunResult result;
  try {
    result = run_scenario(scenario, std::move(options));
  } catch (const std::exception& failure) {
    progress.clear();
    std::cerr << "relaysim: the run failed: " << failure.what() << "\n";
    return std::nullopt;
  }
  progress.clear();
  if (watch.over && result.ending == Ending::interrupted) {
    result.ending = Ending::out_of_memory;
    result.failure = "the run held " + human_bytes(watch.resident) + ", more than its memory limit of " +
                     human_bytes(memory_limit) + " (--memory-limit); " + footprint.largest().advice;
  }
  return result;
}

// Prints the summary, writes the outputs, labels the database with the run's end and says how an
// unfinished run ended. Returns the exit status: an output that could not be written makes a
// passing run incomplete.
int finish_run(const RunArgs& args, const RunResult& result, const WallStats& wall, JsonOutput& json,
               RunOutputs& outputs, const std::string& database) {
  if (!args.quiet) print_summary(json.to_stdout() ? std::cerr : std::cout, result, wall);
  int status = exit_status(result);
  if (args.json_path) {
    if (const auto problem = json.write(json_text(to_json(result, wall)))) {
      std::cerr << "relaysim: " << *problem << "\n";
      if (status == kExitPass) status = kExitIncomplete;
    }
  }
  if (args.timeseries) {
    if (const auto problem = outputs.finish(result, wall)) {
      std::cerr << "relaysim: " << *problem << "\n";
      if (status == kExitPass) status = kExitIncomplete;
    }
  }
  try {
    record_run_end(database, result);
  } catch (const StoreError& e) {
    std::cerr << "relaysim: cannot label the database with the run's end: " << e.what() << "\n";
    if (status == kExitPass) status = kExitIncomplete;
  }
  if (result.ending == Ending::out_of_memory) std::cerr << "relaysim: out of memory: " << result.failure << "\n";
  if (result.ending == Ending::store_failure) std::cerr << "relaysim: store failure: " << result.failure << "\n";
  if (result.ending == Ending::interrupted) std::cerr << "relaysim: interrupted at virtual " << format_time(result.end) << "\n";
  return status;
}

}  // namespace

int run_command(const RunArgs& args) {
  // From the start, not only once the run begins: a stop asked for while the scenario is read
  // ends the run at its first step, with its summary, rather than killing the process.
  const StopSignals signals;
  RunOptions options;
  double memory_limit = 0;
  if (const auto problem = read_run_options(args, options, memory_limit)) return fail_usage(*problem);
  std::optional<Scenario> scenario = load(args.file, args.sets);
  if (!scenario) return kExitInvalid;
  if (args.scale) {
    // The smaller copy is read like any --set: a value it would make invalid is refused.
    std::vector<std::string> sets = args.sets;
    if (const auto problem = scale_sets(*scenario, *args.scale, sets)) return fail_usage(*problem);
    std::optional<Scenario> scaled = load(args.file, sets);
    if (!scaled) return kExitInvalid;
    if (!args.quiet) {
      std::cerr << "relaysim: --scale " << *args.scale << " sets";
      for (std::size_t i = args.sets.size(); i < sets.size(); ++i) std::cerr << (i > args.sets.size() ? ", " : " ") << sets[i];
      std::cerr << "\n";
      for (const std::string& drift : scale_drift(*scenario, *scaled)) std::cerr << "relaysim: warning: " << drift << "\n";
    }
    scenario = std::move(scaled);
  }
  if (const auto problem = check_series_rows(args, options, *scenario)) return fail_usage(*problem);
  Scenario as_run = *scenario;
  if (options.seed) as_run.seed = *options.seed;
  if (options.store) as_run.store = *options.store;
  const std::string database = as_run.store == StoreKind::sqlite ? options.sqlite_path : ":memory:";
  // Every refusal comes before prepare_database, which with --overwrite removes the earlier run.
  const Footprint footprint = as_run.system->footprint(as_run, database == ":memory:");
  if (const auto problem = check_footprint(footprint, memory_limit, args)) return fail_usage(*problem);
  if (!args.quiet) {
    for (const queueing::StationLoad& st : capacity_check(as_run)) {
      if (!st.station.stable()) std::cerr << "relaysim: warning: " << overload_warning(st) << "\n";
    }
  }
  if (const auto problem = check_outputs_apart(args, database)) return fail_usage(*problem);
  RunOutputs outputs;
  JsonOutput json;
  if (const auto problem = open_outputs(args, as_run, database, json, outputs, options)) return fail_usage(*problem);
  DatabaseLock database_lock;  // held until the run's last write
  if (const auto problem = start_database(database, args.overwrite, as_run, database_lock)) return fail_usage(*problem);

  const auto started = Clock::now();
  const std::optional<RunResult> result =
      simulate(*scenario, std::move(options), args.quiet, started, memory_limit, footprint);
  if (!result) return kExitIncomplete;
  WallStats wall;
  wall.seconds = since(started);
  return finish_run(args, *result, wall, json, outputs, database);
}

int validate_command(const std::vector<std::string>& files, const std::vector<std::string>& sets) {
  int status = kExitPass;
  for (const auto& f : files) {
    const std::optional<Scenario> s = load(f, sets);
    if (!s) {
      status = kExitInvalid;
      continue;
    }
    const Footprint fp = s->system->footprint(*s, true);
    std::cout << f << ": ok (" << s->name << "): system " << s->system->name() << ", about "
              << format_value(Unit::count, std::round(fp.calls)) << " client calls, " << footprint_text(fp) << "\n";
    if (const double limit = default_memory_limit(); over_limit(fp, limit)) {
      std::cerr << "relaysim: warning: " << f << " needs more than the " << human_bytes(limit)
                << " a run may use here, so `run` will refuse it; " << fp.largest().advice << "\n";
    }
    for (const queueing::StationLoad& st : capacity_check(*s)) {
      std::cout << "  capacity: " << describe(st) << "\n";
      if (!st.station.stable()) std::cerr << "relaysim: warning: " << f << ": " << overload_warning(st) << "\n";
    }
  }
  return status;
}

namespace {
// What a percentile metric is worth, from the histogram it is read from.
std::string percentile_resolution() {
  return "A percentile (latency_p99_s) is read from a histogram whose buckets are at most " +
         fmt("%.2g", LatencyHistogram::kResolution * 100) + "% of their durations wide, inside its bucket.";
}
}  // namespace

int metrics_command(const std::optional<std::string>& only) {
  if (only && find_system(*only) == nullptr) {
    std::string all;
    for (const System* s : systems()) all += (all.empty() ? "" : ", ") + std::string(s->name());
    return fail_usage("--system: no system is named '" + *only + "' (the systems: " + all + ")");
  }
  std::printf("%s\n\n", percentile_resolution().c_str());
  for (const System* s : systems()) {
    if (only && s->name() != *only) continue;
    std::printf("system %s: %s\n", std::string(s->name()).c_str(), std::string(s->title()).c_str());
    for (const MetricInfo& m : s->metrics()) {
      std::printf("  %-28s %-8s %s\n", std::string(m.name).c_str(), std::string(to_string(m.unit)).c_str(),
                  std::string(m.meaning).c_str());
    }
    std::printf("  and for one %s, NAME[GROUP]:\n", std::string(s->group_dimension()).c_str());
    for (const MetricInfo& m : group_metric_infos()) {
      const std::string name = std::string(m.name) + "[...]";
      std::printf("  %-28s %-8s %s\n", name.c_str(), std::string(to_string(m.unit)).c_str(), std::string(m.meaning).c_str());
    }
  }
  return kExitPass;
}

int reference_command() {
  std::cout << "<!-- Generated by `relaysim reference`; a test keeps it equal to the program. -->\n\n";
  std::cout << "## Every key\n\n" << render_markdown(scenario_reference());
  for (const System* s : systems()) {
    std::cout << "## Metrics of the " << s->name() << " system\n\n";
    std::cout << "`expect:` may name each of these. A count is compared with a whole number, a ratio with a "
                 "percentage (or 0 to 1), seconds with a time (`30s`) or a number of seconds. "
              << percentile_resolution() << "\n\n";
    std::cout << "| metric | unit | meaning |\n|---|---|---|\n";
    for (const MetricInfo& m : s->metrics()) {
      std::cout << "| `" << m.name << "` | " << to_string(m.unit) << " | " << m.meaning << " |\n";
    }
    std::cout << "\nAnd the figures of one " << s->group_dimension() << ", written `NAME[GROUP]` with the "
              << s->group_dimension() << "'s name as the scenario gives it, counted as the summary's split by "
              << s->group_dimension() << " counts them:\n\n";
    std::cout << "| metric | unit | meaning |\n|---|---|---|\n";
    for (const MetricInfo& m : group_metric_infos()) {
      std::cout << "| `" << m.name << "[...]` | " << to_string(m.unit) << " | " << m.meaning << " |\n";
    }
    std::cout << "\n## Time series of the " << s->name() << " system\n\n";
    std::cout << "The columns of `series.csv` (`relaysim run --timeseries`; docs/outputs.md), after `start_s` and "
                 "`end_s`, the window's bounds in seconds of virtual time. A column named after a metric is that "
                 "metric over the window alone; the others are levels at the window's end or averages over it.\n\n";
    std::cout << "| column | unit | meaning |\n|---|---|---|\n";
    for (const SeriesColumn& c : s->series()) {
      std::cout << "| `" << c.name << "` | " << to_string(c.unit) << " | " << c.meaning << " |\n";
    }
    std::cout << "\nThen, when the scenario has from 2 to " << kGroupsApart << " " << s->group_dimension()
              << "s, these for each " << s->group_dimension() << ", written `NAME[GROUP]`:\n\n";
    std::cout << "| column | unit | meaning |\n|---|---|---|\n";
    for (const SeriesColumn& c : group_columns(*s)) {
      std::cout << "| `" << c.name << "[...]` | " << to_string(c.unit) << " | " << c.meaning << " |\n";
    }
    std::cout << "\n## Invariants of the " << s->name() << " system\n\n";
    std::cout << "The oracle checks them on every run; a violation fails the run whatever `expect:` says.\n\n";
    std::cout << "| id | promise |\n|---|---|\n";
    for (const InvariantInfo& i : s->invariants()) std::cout << "| " << i.id << " | " << i.title << " |\n";
    std::cout << "\n";
  }
  return kExitPass;
}

int mmc_command(MmcArgs args) {
  MmcParams& p = args.params;
  if (args.seed) {
    const auto seed = parse_u64(*args.seed);
    if (!seed) return fail_usage("mmc --seed: expected a whole number from 0 to 18446744073709551615, got '" + *args.seed + "'");
    p.seed = *seed;
  }
  // Rates from 0.001/s to a million per second: the clock counts nanoseconds, so mean times must
  // stay well above one, and the whole run well inside ten years.
  for (const auto& [name, v] : {std::pair<const char*, double>{"--lambda", p.lambda}, {"--mu", p.mu}}) {
    if (!std::isfinite(v) || v < 1e-3 || v > 1e6) {
      return fail_usage(std::string("mmc ") + name + ": must be between 0.001 and 1000000 per second");
    }
  }
  if (p.lambda >= p.mu * p.servers) {
    std::ostringstream o;
    o << "mmc: lambda must be below servers * mu (" << p.mu * p.servers
      << "), or the queue grows without bound and has no steady-state wait";
    return fail_usage(o.str());
  }
  if (static_cast<double>(p.customers) / p.lambda > to_seconds(kMaxDuration) / 2) {
    return fail_usage("mmc: " + std::to_string(p.customers) + " customers at this lambda last longer than ten years of virtual time");
  }
  const auto t0 = Clock::now();
  const MmcResult r = run_mmc(p);
  const double wall = std::max(since(t0), 1e-9);
  const double erlang = erlang_c_wait(p.lambda, p.mu, p.servers);
  const double per_s = static_cast<double>(r.customers) / wall;
  if (args.json) {
    const nlohmann::json j = {{"lambda", p.lambda},       {"mu", p.mu},
                              {"servers", p.servers},     {"customers", r.customers},
                              {"seed", p.seed},           {"events", r.events},
                              {"wall_seconds", wall},     {"customers_per_second", per_s},
                              {"mean_wait_s", r.mean_wait_s}, {"erlang_c_wait_s", erlang}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("M/M/%u  lambda %g/s  mu %g/s  %llu customers (seed %llu)\n", p.servers, p.lambda, p.mu,
                static_cast<unsigned long long>(r.customers), static_cast<unsigned long long>(p.seed));
    std::printf("  %.3f s wall, %.3g customers/s, %.3g events/s\n", wall, per_s, static_cast<double>(r.events) / wall);
    std::printf("  mean wait in queue %.6f s   (Erlang C: %.6f s)\n", r.mean_wait_s, erlang);
  }
  return kExitPass;
}

}  // namespace relaysim::cli
