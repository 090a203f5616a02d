#include "sim/scenario/schema.h"

#include <cstdio>
#include <sstream>

#include "model/core/utf8.h"

namespace relaysim::sim {

std::string write_duration(Duration d) {
  const std::int64_t ns = d.count();
  if (ns == 0) return "0s";
  struct Unit {
    std::int64_t ns;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86'400'000'000'000, "d"}, {3'600'000'000'000, "h"}, {60'000'000'000, "m"},
                                    {1'000'000'000, "s"},      {1'000'000, "ms"},         {1'000, "us"}};
  for (const Unit& u : kUnits) {
    if (ns % u.ns == 0) return std::to_string(ns / u.ns) + u.name;
  }
  return std::to_string(ns) + "ns";
}

std::string write_number(double v) {
  if (v == static_cast<double>(static_cast<long long>(v)) && v > -1e15 && v < 1e15) {
    return std::to_string(static_cast<long long>(v));
  }
  // The shortest text that reads back as the same double.
  for (int digits = 1; digits <= 17; ++digits) {
    char shorter[40];
    std::snprintf(shorter, sizeof shorter, "%.*g", digits, v);
    if (std::strtod(shorter, nullptr) == v) return shorter;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

Codec<Duration> duration_codec() {
  return {"duration",
          [](const Reader& r, const YAML::Node& n, const std::string& p, Duration& v) { v = r.duration(n, p); },
          [](YAML::Emitter& e, const Duration& v, const Duration&) { e << write_duration(v); },
          {}};
}

Codec<Time> time_codec() {
  return {"time",
          [](const Reader& r, const YAML::Node& n, const std::string& p, Time& v) { v = r.time(n, p); },
          [](YAML::Emitter& e, const Time& v, const Time&) { e << write_duration(v.time_since_epoch()); },
          {}};
}

Codec<double> rate_codec() {
  return {"rate",
          [](const Reader& r, const YAML::Node& n, const std::string& p, double& v) { v = r.rate(n, p); },
          [](YAML::Emitter& e, const double& v, const double&) { e << write_number(v) + "/s"; },
          {}};
}

Codec<double> fraction_codec() {
  return {"fraction",
          [](const Reader& r, const YAML::Node& n, const std::string& p, double& v) { v = r.fraction(n, p); },
          [](YAML::Emitter& e, const double& v, const double&) { e << write_number(v); },
          {}};
}

Codec<double> number_codec(double lo, double hi) {
  return {"number, " + write_number(lo) + " to " + write_number(hi),
          [lo, hi](const Reader& r, const YAML::Node& n, const std::string& p, double& v) { v = r.number(n, p, lo, hi); },
          [](YAML::Emitter& e, const double& v, const double&) { e << write_number(v); },
          {}};
}

Codec<bool> flag_codec() {
  return {"`true` | `false`",
          [](const Reader& r, const YAML::Node& n, const std::string& p, bool& v) { v = r.flag(n, p); },
          [](YAML::Emitter& e, const bool& v, const bool&) { e << (v ? "true" : "false"); },
          {}};
}

Codec<std::string> text_codec() {
  return {"text",
          [](const Reader& r, const YAML::Node& n, const std::string& p, std::string& v) { v = r.scalar(n, p, "text"); },
          [](YAML::Emitter& e, const std::string& v, const std::string&) { e << YAML::DoubleQuoted << v; },
          {}};
}

Codec<std::string> name_codec() {
  return {"text",
          [](const Reader& r, const YAML::Node& n, const std::string& p, std::string& v) {
            v = r.scalar(n, p, "a name");
            if (v.find_first_not_of(" \t") == std::string::npos) r.fail(n, p, "must not be empty");
            // A name reaches CSV headers, reports, metric names (latency_p99_s[NAME]) and log
            // lines: one line of text, nothing that closes a bracket.
            if (v.size() > 200) r.fail(n, p, "must be at most 200 bytes long");
            for (char c : v) {
              const auto u = static_cast<unsigned char>(c);
              if (u < 0x20 || u == 0x7F) r.fail(n, p, "must not hold a control character (a newline, a tab)");
              if (c == '[' || c == ']') r.fail(n, p, "must not hold '[' or ']' (they delimit a name in a metric's name)");
            }
            if (!relaysim::valid_utf8(v)) r.fail(n, p, "must be valid UTF-8");
          },
          [](YAML::Emitter& e, const std::string& v, const std::string&) { e << YAML::DoubleQuoted << v; },
          {}};
}

std::string render_markdown(const std::vector<DocTable>& tables) {
  std::ostringstream o;
  auto cell = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '|') out += "\\|";
      else out += c;
    }
    return out;
  };
  for (const DocTable& t : tables) {
    o << "### `" << (t.path.empty() ? "(top level)" : t.path) << "`\n\n";
    if (!t.intro.empty()) o << t.intro << "\n\n";
    o << "| key | value | meaning | default |\n|---|---|---|---|\n";
    for (const DocTable::Row& r : t.rows) {
      o << "| `" << r.key << "` | " << cell(r.kind) << " | " << cell(r.meaning) << " | " << cell(r.default_text) << " |\n";
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace relaysim::sim
