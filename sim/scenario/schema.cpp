#include "sim/scenario/schema.h"

#include <cstdio>
#include <sstream>

#include "model/core/assert.h"
#include "model/core/utf8.h"

namespace relaysim::sim {

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
  RELAYSIM_ASSERT(lo <= hi, "a range's low end is not above its high end");
  return {"number, " + write_number(lo) + " to " + write_number(hi),
          [lo, hi](const Reader& r, const YAML::Node& n, const std::string& p, double& v) { v = r.number(n, p, lo, hi); },
          [](YAML::Emitter& e, const double& v, const double&) { e << write_number(v); },
          {}};
}

namespace {

// `c` with its values held to `b`: the kind says the range, a value outside is refused at its node.
template <class T>
Codec<T> bounded(Codec<T> c, const Bounds<T>& b, std::string range, std::string (*must)(const Bounds<T>&)) {
  RELAYSIM_ASSERT(!(b.hi < b.lo), "a bound's low end is not above its high end");
  RELAYSIM_ASSERT(static_cast<bool>(c.read) && must != nullptr, "a bounded value is read and explained");
  c.kind += ", " + range;
  auto read = c.read;
  c.read = [read, b, must](const Reader& r, const YAML::Node& n, const std::string& p, T& v) {
    read(r, n, p, v);
    if (!b.holds(v)) r.fail(n, p, must(b) + ", got " + r.scalar(n, p, "a value"));
  };
  return c;
}

// The range as the reference's kind column says it: "1ms to 1d", "over 0s, up to 3650d".
std::string range_text(const std::string& lo, const std::string& hi, bool lo_open) {
  return lo_open ? "over " + lo + ", up to " + hi : lo + " to " + hi;
}

std::string must_duration(const Bounds<Duration>& b) { return must_text(b); }
std::string must_number(const Bounds<double>& b) { return must_text(b); }
std::string must_share(const Bounds<double>& b) { return must_text_share(b); }
std::string must_rate(const Bounds<double>& b) { return must_text_rate(b); }

}  // namespace

Codec<Duration> duration_codec(const Bounds<Duration>& b) {
  return bounded(duration_codec(), b, range_text(write_duration(b.lo), write_duration(b.hi), b.lo_open), &must_duration);
}

Codec<double> rate_codec(const Bounds<double>& b) {
  return bounded(rate_codec(), b, range_text(write_number(b.lo) + "/s", write_number(b.hi) + "/s", b.lo_open), &must_rate);
}

Codec<double> fraction_codec(const Bounds<double>& b) {
  return bounded(fraction_codec(), b, range_text(write_number(b.lo * 100) + "%", write_number(b.hi * 100) + "%", b.lo_open),
                 &must_share);
}

Codec<double> number_codec(const Bounds<double>& b) {
  return bounded(number_codec(b.lo, b.hi), b, b.lo_open ? "over " + write_number(b.lo) : std::string(), &must_number);
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
