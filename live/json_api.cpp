#include "live/json_api.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <charconv>
#include <ctime>
#include <unordered_set>
#include <vector>

#include "model/core/assert.h"
#include "model/core/short_text.h"

namespace relaysim::live {

using nlohmann::json;

std::string dump_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

Response json_response(int status, const json& body) {
  RELAYSIM_ASSERT(status >= 200 && status <= 599, "an answer has an HTTP status");
  Response r;
  r.status = status;
  r.body = dump_json(body);
  return r;
}

std::optional<std::uint64_t> whole_number(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// Reads JSON as the parser would (without building anything), and refuses what it would read
// without complaint but change: a name given twice in one object (the parser keeps the last, so the
// payload stored and delivered would differ from the one sent) and an integer beyond 64 bits (read
// as a double, it loses digits, and two different numbers would compare equal); and nesting deeper
// than kMaxJsonDepth (printing and freeing JSON recurse). `problem` says which, or why it is not JSON.
namespace {

class StrictJson final : public nlohmann::json_sax<json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t& text) override {
    if (text.find_first_of(".eE") != string_t::npos) return true;  // a fraction: a double by nature
    problem = "the integer " + text.substr(0, 40) + (text.size() > 40 ? "..." : "") +
              " does not fit in 64 bits: send it as a string";
    return false;
  }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    names_.emplace_back();
    return deeper();
  }
  bool key(string_t& name) override {
    if (names_.back().insert(name).second) return true;
    problem = "the name \"" + name.substr(0, 80) + "\" is given twice in one object";
    return false;
  }
  bool end_object() override {
    names_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return deeper(); }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    problem = std::string("the body is not JSON: ") + e.what();
    return false;
  }

  std::string problem;

 private:
  bool deeper() {
    if (++depth_ <= kMaxJsonDepth) return true;
    problem = "the body nests deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return false;
  }

  int depth_ = 0;
  std::vector<std::unordered_set<std::string>> names_;
};

}  // namespace

std::optional<Response> only_fields(const nlohmann::json& body, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : body.items()) {
    bool known = false;
    for (const std::string_view a : allowed) known = known || key == a;
    if (!known) {
      std::string names;
      for (const std::string_view a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      return error_response(400, "unknown field '" + key.substr(0, 80) + "' (the fields are " + names + ")");
    }
  }
  return std::nullopt;
}

bool is_json_media_type(std::string_view content_type) {
  const std::string_view media = content_type.substr(0, content_type.find(';'));
  std::string lower;
  for (const char c : media) {
    if (c != ' ' && c != '\t') lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return lower == "application/json";
}

Response method_not_allowed(std::string_view allowed) {
  RELAYSIM_ASSERT(!allowed.empty(), "a refused method names the one allowed");
  Response r = error_response(405, "this endpoint takes " + std::string(allowed));
  r.headers.emplace_back("Allow", std::string(allowed));
  return r;
}

Response unauthorized(std::string_view reason) {
  Response r = error_response(401, reason);
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"relaysim\"");
  return r;
}

Response store_failed(const StoreError& e) {
  Response r = error_response(503, "the store failed (" + std::string(e.what()) + "); try again");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

std::optional<Response> read_json_body(const Incoming& in, json& out) {
  if (!is_json_media_type(in.header("content-type"))) {
    return error_response(415, "the body must be JSON, sent with Content-Type: application/json");
  }
  StrictJson strict;
  if (!json::sax_parse(in.body, &strict)) return error_response(400, strict.problem);
  try {
    out = json::parse(in.body);
  } catch (const json::exception& e) {
    return error_response(400, std::string("the body is not JSON: ") + e.what());
  }
  return std::nullopt;
}

std::string format_utc(Time t) {
  const std::int64_t ns = to_ns(t);
  const std::time_t seconds = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[48];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  ShortText<64> out;
  out << std::string_view(text, n) << ".";
  const auto millis = static_cast<std::uint64_t>((ns % 1'000'000'000) / 1'000'000);
  out << (millis < 100 ? "0" : "") << (millis < 10 ? "0" : "") << millis << "Z";
  return std::string(out.view());
}

std::optional<std::string> percent_decoded(std::string_view text) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size() || hex(text[i + 1]) < 0 || hex(text[i + 2]) < 0) return std::nullopt;
    out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
    i += 2;
  }
  return out;
}

std::optional<Time> parse_utc(std::string_view text) {
  const auto digits = [&](std::size_t at, std::size_t n, int& out) {
    if (at + n > text.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (text.size() < 20 || !digits(0, 4, year) || text[4] != '-' || !digits(5, 2, month) || text[7] != '-' ||
      !digits(8, 2, day) || text[10] != 'T' || !digits(11, 2, hour) || text[13] != ':' || !digits(14, 2, minute) ||
      text[16] != ':' || !digits(17, 2, second)) {
    return std::nullopt;
  }
  std::int64_t nanos = 0;
  std::size_t at = 19;
  if (text[at] == '.') {
    const std::size_t from = ++at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9' && at - from < 9) {
      nanos = nanos * 10 + (text[at] - '0');
      ++at;
    }
    if (at == from) return std::nullopt;
    for (std::size_t n = at - from; n < 9; ++n) nanos *= 10;
  }
  if (at + 1 != text.size() || text[at] != 'Z') return std::nullopt;
  if (year < 1970 || year > 2261 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return std::nullopt;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day < 1 || day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return std::nullopt;
  // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
  const int y = year - (month <= 2 ? 1 : 0);
  const int era = y / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const std::int64_t days = std::int64_t{era} * 146097 + doe - 719468;
  const std::int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second;
  return Time{} + std::chrono::nanoseconds(seconds * 1'000'000'000 + nanos);
}

}  // namespace relaysim::live
