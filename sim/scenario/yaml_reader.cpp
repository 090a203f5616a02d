#include "sim/scenario/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "sim/scenario/units.h"

namespace relaysim::sim {

namespace {

// The UTF-8 character at s[i]: its code point and how many bytes it takes; `length` 0 when the
// bytes there are not UTF-8 (overlong forms, surrogates and values past U+10FFFF are not).
struct Utf8Char {
  std::uint32_t cp = 0;
  std::size_t length = 0;
};

Utf8Char decode_utf8(std::string_view s, std::size_t i) {
  RELAYSIM_ASSERT(i < s.size(), "a character at a place in the text");
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return {c, 1};
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 1;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 2;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 3;
    cp = c & 0x07;
  } else {
    return {};
  }
  for (std::size_t k = 1; k <= n; ++k) {
    if (i + k >= s.size()) return {};
    const auto d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return {};
    cp = cp << 6 | (d & 0x3F);
  }
  const std::uint32_t min = n == 1 ? 0x80 : n == 2 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, n + 1};
}

// A control character: C0 but tab, line feed and carriage return (line breaks and indentation),
// DEL, and C1 but NEL. YAML allows none of them raw in a file; on a terminal an ESC or a CSI starts
// a command, and a NUL cuts a C string short.
bool control_character(std::uint32_t cp) {
  return (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F && cp != 0x85);
}

std::string code_point(std::uint32_t cp) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
  return hex;
}

// A message is printed to a terminal, so control characters (and bytes that are not UTF-8) from
// the file are shown as <U+001B> and <0xFF> instead of being obeyed.
std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Char c = decode_utf8(text, i);
    if (c.length == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", static_cast<unsigned>(static_cast<unsigned char>(text[i])));
      out += hex;
      ++i;
    } else if (c.cp == '\r' || control_character(c.cp)) {
      out += "<" + code_point(c.cp) + ">";
      i += c.length;
    } else {
      out.append(text, i, c.length);
      i += c.length;
    }
  }
  return out;
}

}  // namespace

ScenarioError::ScenarioError(std::string file, int line, int column, std::string key, std::string problem)
    : std::runtime_error(printable(file + (line > 0 ? ":" + std::to_string(line) + ":" + std::to_string(column) : "") +
                                   ": " + (key.empty() ? "" : key + ": ") + problem)),
      file_(std::move(file)), line_(line), column_(column), key_(std::move(key)), problem_(std::move(problem)) {}

void Reader::fail(const YAML::Node& at, const std::string& path, const std::string& problem) const {
  fail_mark(at.IsDefined() ? at.Mark() : YAML::Mark::null_mark(), path, problem);
}

void Reader::fail_mark(const YAML::Mark& m, const std::string& path, const std::string& problem) const {
  throw ScenarioError(file_, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, path, problem);
}

std::string Reader::suggestion(std::string_view word, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_d = SIZE_MAX;
  for (const auto& candidate : known) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_d) {
      best_d = d;
      best = candidate;
    }
  }
  if (best_d == 0 || best_d >= word.size() || best_d > std::max<std::size_t>(2, word.size() / 3)) return "";
  return "; did you mean '" + best + "'?";
}

namespace {
std::string what_it_is(const YAML::Node& n) {
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  if (n.IsScalar()) {
    const std::string v = n.Scalar();
    return "the single value '" + (v.size() > 60 ? v.substr(0, 60) + "..." : v) + "'";
  }
  return "nothing";
}
std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}
}  // namespace

std::string Reader::scalar(const YAML::Node& n, const std::string& path, std::string_view expected) const {
  if (!n.IsDefined() || n.IsNull()) fail(n, path, "has no value; expected " + std::string(expected));
  if (!n.IsScalar()) fail(n, path, "expected " + std::string(expected) + ", got " + what_it_is(n));
  // "?" is a plain scalar, "!" a quoted one; anything else is an explicit tag (!!binary, !!float,
  // !mine), which scenarios do not use and which would otherwise be silently ignored.
  if (const std::string& tag = n.Tag(); !tag.empty() && tag != "?" && tag != "!") {
    fail(n, path, "a YAML tag (" + tag + ") is not used in scenarios; write the value alone");
  }
  // The raw text has no control characters (parse_yaml), but an escape inside double quotes
  // ("\e[2J", "\x00") makes one; names and descriptions reach terminals.
  const std::string& value = n.Scalar();
  for (std::size_t i = 0; i < value.size();) {
    const Utf8Char c = decode_utf8(value, i);
    if (c.length == 0) break;  // cannot happen: escapes decode to UTF-8
    if (c.cp == '\r' || control_character(c.cp)) {
      fail(n, path, "holds a control character (" + code_point(c.cp) + "), written as an escape; scenario text is printable");
    }
    i += c.length;
  }
  return value;
}

Duration Reader::duration(const YAML::Node& n, const std::string& path) const {
  const std::string s = scalar(n, path, "a duration");
  double seconds = 0;
  if (!parse_duration_seconds(s, seconds)) {
    fail(n, path, "expected a duration such as 250ms, 30s, 15m, 2h or 1d, got '" + s + "'");
  }
  Duration d{};
  if (!parse_duration(s, d)) {
    fail(n, path, "must be at most 3650d (ten years), got '" + s + "'");
  }
  return d;
}

Time Reader::time(const YAML::Node& n, const std::string& path) const {
  const Duration d = duration(n, path);
  if (run_duration_ > Duration::zero() && d >= run_duration_) {
    fail(n, path, "is not before the end of the run (duration " + format_duration(run_duration_) + "): it would never happen");
  }
  return Time{} + d;
}

double Reader::rate(const YAML::Node& n, const std::string& path) const {
  const std::string s = scalar(n, path, "a rate");
  double r = 0;
  if (!parse_rate(s, r)) fail(n, path, "expected a rate such as 800/s, 30/min or 100/h, got '" + s + "'");
  if (r > kMaxRatePerSecond) {
    fail(n, path, "must be at most 1000000000/s (one call per nanosecond, the clock's resolution), got '" + s + "'");
  }
  if (r > 0 && 1.0 / r > to_seconds(kMaxDuration)) {
    fail(n, path, "is one call every " + format_number(1.0 / r / 86400.0) +
                      " days, longer than any run can be (3650d); write 0/s for no calls, got '" + s + "'");
  }
  return r;
}

double Reader::fraction(const YAML::Node& n, const std::string& path) const {
  const std::string s = scalar(n, path, "a fraction");
  double f = 0;
  if (!parse_fraction(s, f)) fail(n, path, "expected a fraction between 0% and 100% (or 0 to 1), got '" + s + "'");
  return f;
}

double Reader::number(const YAML::Node& n, const std::string& path, double lo, double hi) const {
  RELAYSIM_ASSERT(lo <= hi, "a range's low end is not above its high end");
  const std::string s = scalar(n, path, "a number");
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    fail(n, path, "must be between " + format_number(lo) + " and " + format_number(hi) + ", got " + s);
  }
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v)) {
    fail(n, path, "expected a number, got '" + s + "'");
  }
  if (!(v >= lo && v <= hi)) {
    fail(n, path, "must be between " + format_number(lo) + " and " + format_number(hi) + ", got " + s);
  }
  return v;
}

std::uint64_t Reader::integer(const YAML::Node& n, const std::string& path, std::uint64_t lo, std::uint64_t hi) const {
  RELAYSIM_ASSERT(lo <= hi, "a range's low end is not above its high end");
  const std::string s = scalar(n, path, "a whole number");
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const bool digits = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || (ec != std::errc{} && ec != std::errc::result_out_of_range) || end != s.data() + s.size()) {
    fail(n, path, "expected a whole number, got '" + s + "'");
  }
  if (ec == std::errc::result_out_of_range || v < lo || v > hi) {
    fail(n, path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + s);
  }
  return v;
}

bool Reader::flag(const YAML::Node& n, const std::string& path) const {
  return choice<bool>(n, path, {{"true", true}, {"false", false}});
}

// ---- Map --------------------------------------------------------------------------------------

Map::Map(const Reader& r, const YAML::Node& node, std::string path, std::vector<std::string> known)
    : r_(r), node_(node), path_(std::move(path)), known_(std::move(known)) {
  const std::string where = path_.empty() ? "(top level)" : path_;
  if (!node.IsDefined() || node.IsNull()) r.fail(node, where, "has no value; expected a mapping of keys to values");
  if (!node.IsMap()) r.fail(node, where, "expected a mapping of keys to values, got " + what_it_is(node));
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) r.fail(it->first, where, "a key must be a plain name, not " + what_it_is(it->first));
    const std::string k = it->first.Scalar();
    if (!seen.insert(k).second) r.fail(it->first, child(k), "the key appears twice");
  }
}

YAML::Node Map::operator[](const std::string& key) const {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.Scalar() == key) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool Map::has(const std::string& key) const {
  const YAML::Node v = (*this)[key];
  if (!v.IsDefined()) return false;
  if (v.IsNull()) r_.fail(v, child(key), "has no value (give it one, or leave the key out)");
  return true;
}

YAML::Node Map::required(const std::string& key) const {
  if (!(*this)[key].IsDefined()) r_.fail(node_, child(key), "is required but missing");
  has(key);  // a value, not a bare key
  return (*this)[key];
}

void Map::fail_at(const std::string& dotted, const std::string& problem) const {
  YAML::Node at = node_;
  std::size_t pos = 0;
  while (at.IsMap() && pos != std::string::npos) {
    const std::size_t dot = dotted.find('.', pos);
    const YAML::Node next = at[dotted.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos)];
    if (!next.IsDefined()) break;
    at = next;
    pos = dot == std::string::npos ? std::string::npos : dot + 1;
  }
  r_.fail(at, child(dotted), problem);
}

void Map::refuse(const std::vector<ConfigError>& problems, const std::string& section) const {
  if (problems.empty()) return;
  const ConfigError& first = problems.front();
  fail_at(section.empty() ? first.key : section + "." + first.key, first.message);
}

void Map::check_keys() const {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = it->first.Scalar();
    if (std::find(known_.begin(), known_.end(), k) != known_.end()) continue;
    std::string all;
    for (const auto& c : known_) all += (all.empty() ? "" : ", ") + c;
    if (k == "<<") r_.fail(it->first, child(k), "YAML merge keys (<<: *name) are not supported in scenarios; write the keys out");
    r_.fail(it->first, child(k), "unknown key" + Reader::suggestion(k, known_) + " (expected one of: " + all + ")");
  }
}

// ---- parsing ----------------------------------------------------------------------------------

namespace {

// The line and column (1-based) of byte `pos` in `text`.
std::pair<int, int> line_column(std::string_view text, std::size_t pos) {
  RELAYSIM_ASSERT(pos <= text.size(), "a place in the text");
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(pos - line_start) + 1};
}

// Where the text stops being a YAML character stream, and why: a byte that is not UTF-8, or a
// character YAML does not allow in a file (the control characters; U+FFFE and U+FFFF; a
// byte-order mark after the start). yaml-cpp reads such bytes into values unchecked.
struct TextProblem {
  std::size_t pos = std::string_view::npos;
  std::string what;
};

TextProblem unprintable(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const Utf8Char c = decode_utf8(s, i);
    if (c.length == 0) return {i, "the file is not valid UTF-8 text here (a scenario is UTF-8)"};
    if (control_character(c.cp) || c.cp == 0xFFFE || c.cp == 0xFFFF) {
      return {i, "a control character (" + code_point(c.cp) + ") in the file; a scenario is printable text"};
    }
    if (c.cp == 0xFEFF && i != 0) return {i, "a byte-order mark (U+FEFF) inside the file; one may only open it"};
    i += c.length;
  }
  return {};
}

// yaml-cpp reads a quoted scalar that is never closed to the end of the file, swallowing every
// key after it. A quoted scalar must end where YAML says it ends; find one that does not.
void check_quotes(const Reader& r, const YAML::Node& n, std::string_view text, int depth) {
  if (depth > 200) return;  // yaml-cpp's own depth guard stops deeper documents before here
  if (n.IsScalar()) {
    const YAML::Mark m = n.Mark();
    if (m.is_null() || m.pos < 0 || static_cast<std::size_t>(m.pos) >= text.size()) return;
    const char q = text[static_cast<std::size_t>(m.pos)];
    if (q != '"' && q != '\'') return;
    for (std::size_t i = static_cast<std::size_t>(m.pos) + 1; i < text.size(); ++i) {
      if (q == '"' && text[i] == '\\') {
        ++i;
      } else if (text[i] == q) {
        if (q == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
          ++i;  // '' is an escaped quote inside single quotes
          continue;
        }
        return;
      }
    }
    r.fail_mark(m, "", std::string("a quoted value starts here and is never closed (missing ") + q + ")");
  }
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      check_quotes(r, it->first, text, depth + 1);
      check_quotes(r, it->second, text, depth + 1);
    }
  } else if (n.IsSequence()) {
    for (auto it = n.begin(); it != n.end(); ++it) check_quotes(r, *it, text, depth + 1);
  }
}

// The quoted scalars of a YAML text, judged from the text alone: [start, end] of each, end at the
// closing quote, or npos when it is never closed. A quote starts a scalar only where a value can.
std::vector<std::pair<std::size_t, std::size_t>> quoted_spans(std::string_view t) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  char open = 0;
  char prev = '\n';  // the last character that is not a space, outside quotes
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (open != 0) {
      if (open == '"' && c == '\\') {
        ++i;
      } else if (c == open) {
        if (open == '\'' && i + 1 < t.size() && t[i + 1] == '\'') {
          ++i;
        } else {
          open = 0;
          prev = c;
          spans.back().second = i;
        }
      }
      continue;
    }
    if (c == '#' && (i == 0 || t[i - 1] == ' ' || t[i - 1] == '\n' || t[i - 1] == '\t')) {
      while (i + 1 < t.size() && t[i + 1] != '\n') ++i;
      continue;
    }
    if ((c == '"' || c == '\'') && std::string_view(":-[{,?\n").find(prev) != std::string_view::npos) {
      open = c;
      spans.emplace_back(i, std::string_view::npos);
      continue;
    }
    if (c != ' ' && c != '\t') prev = c;
  }
  return spans;
}

// When YAML cannot be parsed, a quote left open is the usual cause: the quoted value swallows
// the lines after it until some later quote. The span that runs over several lines and ends
// before the error (or never ends) is the suspect.
std::optional<std::size_t> suspect_quote(std::string_view t, std::size_t error_pos) {
  std::optional<std::size_t> suspect;
  for (const auto& [start, end] : quoted_spans(t)) {
    if (start > error_pos) break;
    const std::size_t last = end == std::string_view::npos ? t.size() : end;
    if (t.substr(start, last - start).find('\n') != std::string_view::npos) suspect = start;
  }
  return suspect;
}

// The values a document holds, counting each use of an alias anew (as reading it does): YAML
// aliases that repeat each other ("billion laughs") make a small file expand without bound, and
// an alias inside the value it names makes it endless. Stops at the limits.
struct ValueCount {
  std::size_t values = 0;
  bool too_deep = false;
  YAML::Mark deepest = YAML::Mark::null_mark();  // where the nesting passed kMaxDepth
  void count(const YAML::Node& n, int depth) {
    if (++values > kMaxValues || too_deep) return;
    if (depth > kMaxDepth) {
      too_deep = true;
      deepest = n.Mark();
      return;
    }
    if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end() && values <= kMaxValues && !too_deep; ++it) {
        count(it->first, depth + 1);
        count(it->second, depth + 1);
      }
    } else if (n.IsSequence()) {
      for (auto it = n.begin(); it != n.end() && values <= kMaxValues && !too_deep; ++it) count(*it, depth + 1);
    }
  }
  static constexpr int kMaxDepth = 64;
};

std::string too_deep_message() {
  return "nests values more than " + std::to_string(ValueCount::kMaxDepth) +
         " deep; a scenario needs a handful (an alias used inside the value it names nests without end)";
}

// Where the text holds more than one document, read from the text because YAML::LoadAll loops
// for ever on some malformed streams (yaml-cpp 0.7, fixed upstream in 2024): a `---` after a
// document has begun (even an empty one, opened by an earlier `---`), content after a `...`, or a
// `%` directive after content -- yaml-cpp ends the document at the directive and would silently
// drop every line after it.
TextProblem document_problem(std::string_view t, bool& content) {
  bool begun = false;    // a `---` or content has opened the first document
  content = false;       // the first document has content
  bool ended = false;    // a `...` closed it
  std::size_t pos = 0;
  while (pos < t.size()) {
    const std::size_t eol = std::min(t.find('\n', pos), t.size());
    const std::string_view line = t.substr(pos, eol - pos);
    auto marker = [&](std::string_view m) {
      return line.substr(0, 3) == m && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
    };
    const std::size_t first = line.find_first_not_of(" \t");
    const bool blank = first == std::string_view::npos || line[first] == '#';
    if (marker("---")) {
      if (begun || ended) {
        return {pos, "a second YAML document; a scenario file holds exactly one (remove this '---' line)"};
      }
      begun = true;
      const std::size_t after = line.find_first_not_of(" \t", 3);
      content = after != std::string_view::npos && line[after] != '#';
    } else if (marker("...")) {
      ended = begun || content;
    } else if (!blank && line[0] == '%') {
      if (begun || content) {
        return {pos, "a YAML directive (a line starting with '%') inside the scenario would end it here, dropping every line "
                     "after it; a scenario needs no directives (remove the line)"};
      }
    } else if (!blank) {
      if (ended) return {pos, "content after the '...' that ends the YAML document; a scenario file holds exactly one"};
      begun = content = true;
    }
    pos = eol + 1;
  }
  return {};
}

}  // namespace

YAML::Node parse_yaml(std::string_view original, const std::string& file) {
  const Reader r(file);
  // Line ends are LF from here on: a CR left at the end of a value would be read into it
  // ("0\r" is not a number), and CR alone is a line break in YAML too. A byte-order mark that
  // opens the file (Windows editors write one) is dropped, so the scans below see the text.
  std::string normalised;
  normalised.reserve(original.size());
  const std::size_t start = original.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  for (std::size_t i = start; i < original.size(); ++i) {
    if (original[i] != '\r') {
      normalised += original[i];
    } else if (i + 1 >= original.size() || original[i + 1] != '\n') {
      normalised += '\n';
    }
  }
  const std::string_view text = normalised;
  bool content = false;  // anything but comments, blank lines and markers
  for (const TextProblem& problem : {unprintable(text), document_problem(text, content)}) {
    if (problem.pos != std::string_view::npos) {
      const auto [line, column] = line_column(text, problem.pos);
      throw ScenarioError(file, line, column, "", problem.what);
    }
  }
  YAML::Node root;
  try {
    root = YAML::Load(normalised);
  } catch (const std::bad_alloc&) {
    throw ScenarioError(file, 0, 0, "",
                        "holds more values than there is memory to read them; a scenario needs a few hundred");
  } catch (const YAML::DeepRecursion& e) {
    r.fail_mark(e.mark, "", too_deep_message());
  } catch (const YAML::ParserException& e) {
    const std::size_t at = e.mark.pos < 0 ? text.size() : static_cast<std::size_t>(e.mark.pos);
    if (const auto quote = suspect_quote(text, at)) {
      const auto [line, column] = line_column(text, *quote);
      throw ScenarioError(file, line, column, "",
                          std::string("a quoted value starts here and runs on over the next lines; is its closing ") +
                              text[*quote] + " missing? (the YAML reader stopped at line " +
                              std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
    }
    r.fail_mark(e.mark, "", "not valid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) {
    // yaml-cpp reads some malformed text (a stray ',') as an empty document: say which it was.
    throw ScenarioError(file, 1, 1, "",
                        content ? "is not a scenario: the YAML reader found no value in it (a stray ',', ']' or '}'?)"
                                : "holds no scenario (the file is empty or only comments)");
  }
  ValueCount values;
  values.count(root, 0);
  if (values.too_deep) r.fail_mark(values.deepest, "", too_deep_message());
  if (values.values > kMaxValues) {
    throw ScenarioError(file, 1, 1, "",
                        "holds more than " + std::to_string(kMaxValues) +
                            " values once its aliases (*name) are expanded; a scenario needs a few hundred");
  }
  check_quotes(r, root, text, 0);
  return root;
}

}  // namespace relaysim::sim
