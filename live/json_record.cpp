#include "live/json_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace relaysim::live {

nlohmann::json parse_object(const std::string& text, const std::string& where) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw std::invalid_argument(where + ": not a JSON object");
  return j;
}

Time world_time(Time unix_time, const char* name, Duration shift, const std::string& where) {
  const Time t = unix_time - shift;
  if (t < kTimeZero) {
    throw std::invalid_argument(where + ": '" + name + "' is " + format_duration(kTimeZero - t) +
                                " before the world started: start relaysim world first");
  }
  return t;
}

Time world_time(const nlohmann::json& j, const char* name, Duration shift, const std::string& where) {
  return world_time(Time{Duration{field<std::int64_t>(j, name, where)}}, name, shift, where);
}

Duration world_started(const nlohmann::json& world, std::string_view scenario, std::uint64_t seed, std::string_view system,
                       std::string_view whose, const std::string& where) {
  if (!world.is_object()) throw std::invalid_argument(where + ": 'world' is not an object");
  const std::string served = world.contains("system") ? field<std::string>(world, "system", where) : "webhook";
  if (served != system) {
    throw std::invalid_argument(where + ": the world served a " + served + " scenario, not " + std::string(whose));
  }
  const std::string name = field<std::string>(world, "scenario", where);
  const auto drawn = field<std::uint64_t>(world, "seed", where);
  if (name != scenario || drawn != seed) {
    throw std::invalid_argument(where + ": these are the receipts of world '" + name + "' (seed " + std::to_string(drawn) +
                                "), not of the scenario '" + std::string(scenario) + "' (seed " + std::to_string(seed) + ")");
  }
  const Duration started{field<std::int64_t>(world, "started_ns", where)};
  if (started < Duration::zero()) throw std::invalid_argument(where + ": field 'started_ns' is negative");
  if (started > Duration::max() / 2) throw std::invalid_argument(where + ": 'started_ns' is past any real run's time");
  return started;
}

LineFile::LineFile(const std::string& path, const char* option)
    : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
  if (fd_ < 0) throw std::invalid_argument(std::string(option) + ": cannot open " + path + ": " + std::strerror(errno));
}

LineFile::~LineFile() { ::close(fd_); }

void LineFile::append(const std::string& lines) {
  for (std::size_t done = 0; done < lines.size();) {
    const ssize_t n = ::write(fd_, lines.data() + done, lines.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      intact_ = false;  // a full disk: the log ends here, the service goes on (the judge will say)
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace relaysim::live
