#include "model/sms/filter.h"

#include <algorithm>
#include <charconv>

#include "model/core/assert.h"

namespace relaysim::sms {

namespace {

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

std::string list_of(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

// A recursive-descent parser over the grammar in filter.h. Every failure throws a FilterError at
// the offending token; parse() turns it into the result.
class FilterParser {
 public:
  FilterParser(std::string_view text, const Vocabulary& vocabulary) : text_(text), vocabulary_(vocabulary) {}

  Filter run() {
    Filter f;
    f.text_ = std::string(text_);
    out_ = &f.program_;
    if (text_.size() > Filter::kMaxLength) {
      fail(Filter::kMaxLength, "a filter is at most " + std::to_string(Filter::kMaxLength) + " bytes");
    }
    next();
    if (kind_ == Token::end) fail(start_, "empty filter; `all` chooses every user");
    parse_or();
    if (kind_ != Token::end) fail(start_, "expected `and`, `or` or the end, got " + describe());
    return f;
  }

 private:
  enum class Token : std::uint8_t { end, word, quoted, number_unit, symbol };

  [[noreturn]] void fail(std::size_t at, std::string message) { throw FilterError{at, std::move(message)}; }

  std::string describe() const {
    if (kind_ == Token::end) return "the end";
    return "'" + std::string(token_) + "'";
  }

  // Reads the next token into kind_, token_ (a view of the text; a quoted name without quotes)
  // and start_.
  void next() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) ++pos_;
    start_ = pos_;
    if (pos_ == text_.size()) {
      kind_ = Token::end;
      token_ = {};
      return;
    }
    const char c = text_[pos_];
    if (c == '"') {
      const std::size_t close = text_.find('"', pos_ + 1);
      if (close == std::string_view::npos) fail(pos_, "a quoted name is not closed");
      kind_ = Token::quoted;
      token_ = text_.substr(pos_ + 1, close - pos_ - 1);
      pos_ = close + 1;
      return;
    }
    if (c == '!' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '=') {
      kind_ = Token::symbol;
      token_ = text_.substr(pos_, 2);
      pos_ += 2;
      return;
    }
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == ',' || c == '=' || c == '<' || c == '>') {
      kind_ = Token::symbol;
      token_ = text_.substr(pos_, 1);
      ++pos_;
      return;
    }
    if (word_char(c)) {
      const std::size_t from = pos_;
      while (pos_ < text_.size() && word_char(text_[pos_])) ++pos_;
      token_ = text_.substr(from, pos_ - from);
      kind_ = (c >= '0' && c <= '9') ? Token::number_unit : Token::word;
      return;
    }
    fail(pos_, std::string("unexpected character '") + c + "'");
  }

  bool at_word(std::string_view w) const { return kind_ == Token::word && token_ == w; }
  bool at_symbol(std::string_view s) const { return kind_ == Token::symbol && token_ == s; }

  void expect_symbol(std::string_view s, std::string_view what) {
    if (!at_symbol(s)) fail(start_, "expected " + std::string(what) + ", got " + describe());
    next();
  }

  void emit(Filter::Op op, std::uint64_t mask = 0, Duration age = {}) {
    // The evaluation's stack as the program grows: a test pushes an answer, `and`/`or` take two
    // and leave one, `not` changes the top.
    if (op == Filter::Op::both || op == Filter::Op::either) {
      RELAYSIM_ASSERT(pending_ >= 2, "a binary step has two answers");
      --pending_;
    } else if (op != Filter::Op::negate && ++pending_ > Filter::kMaxPending) {
      fail(start_, "too deeply nested to evaluate: more than " + std::to_string(Filter::kMaxPending) +
                       " answers pending at once (write the nested groups first)");
    }
    out_->push_back({op, mask, age});
  }

  void parse_or() {
    parse_and();
    while (at_word("or")) {
      next();
      parse_and();
      emit(Filter::Op::either);
    }
  }

  void parse_and() {
    parse_not();
    while (at_word("and")) {
      next();
      parse_not();
      emit(Filter::Op::both);
    }
  }

  void parse_not() {
    if (++depth_ > Filter::kMaxDepth) {
      fail(start_, "nested more than " + std::to_string(Filter::kMaxDepth) + " deep");
    }
    if (at_word("not")) {
      next();
      parse_not();
      emit(Filter::Op::negate);
    } else if (at_symbol("(")) {
      next();
      parse_or();
      expect_symbol(")", "')'");
    } else {
      parse_test();
    }
    --depth_;
  }

  // A name from the vocabulary's `names`: its bit.
  std::uint64_t name(const std::vector<std::string>& names, std::string_view what) {
    if (kind_ != Token::word && kind_ != Token::quoted && kind_ != Token::number_unit) {
      fail(start_, "expected a " + std::string(what) + " name, got " + describe());
    }
    const auto it = std::find(names.begin(), names.end(), token_);
    if (it == names.end()) {
      fail(start_, "no " + std::string(what) + " is named '" + std::string(token_) + "' (" + std::string(what) +
                       "s: " + list_of(names) + ")");
    }
    next();
    return std::uint64_t{1} << static_cast<unsigned>(it - names.begin());
  }

  Duration duration() {
    if (kind_ != Token::number_unit) fail(start_, "expected a duration such as 30d, got " + describe());
    const std::string_view t = token_;
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
    const std::string_view unit(end, static_cast<std::size_t>(t.data() + t.size() - end));
    std::int64_t seconds = 0;
    if (unit == "s") {
      seconds = 1;
    } else if (unit == "m") {
      seconds = 60;
    } else if (unit == "h") {
      seconds = 3600;
    } else if (unit == "d") {
      seconds = 86400;
    } else {
      fail(start_, "expected a duration with a unit s, m, h or d, got " + describe());
    }
    constexpr std::uint64_t kMaxDays = 100 * 366;  // a century
    if (ec != std::errc{} || n > kMaxDays * 86400 / static_cast<std::uint64_t>(seconds)) {
      fail(start_, "a duration of at most 100 years, got " + describe());
    }
    next();
    return std::chrono::seconds(static_cast<std::int64_t>(n) * seconds);
  }

  void parse_test() {
    if (at_word("all")) {
      next();
      emit(Filter::Op::all);
    } else if (at_word("opt_in")) {
      next();
      emit(Filter::Op::opt_in);
    } else if (at_word("region")) {
      next();
      if (at_symbol("=") || at_symbol("!=")) {
        const bool negated = token_ == "!=";
        next();
        emit(Filter::Op::region_in, name(vocabulary_.regions, "region"));
        if (negated) emit(Filter::Op::negate);
      } else if (at_word("in")) {
        next();
        expect_symbol("[", "'['");
        std::uint64_t mask = name(vocabulary_.regions, "region");
        while (at_symbol(",")) {
          next();
          mask |= name(vocabulary_.regions, "region");
        }
        expect_symbol("]", "',' or ']'");
        emit(Filter::Op::region_in, mask);
      } else {
        fail(start_, "expected '=', '!=' or `in` after `region`, got " + describe());
      }
    } else if (at_word("tags")) {
      next();
      if (!at_word("has")) fail(start_, "expected `has` after `tags`, got " + describe());
      next();
      emit(Filter::Op::tags_has, name(vocabulary_.tags, "tag"));
    } else if (at_word("last_active")) {
      next();
      if (!at_symbol("<") && !at_symbol(">")) fail(start_, "expected '<' or '>' after `last_active`, got " + describe());
      const bool within = token_ == "<";
      next();
      emit(within ? Filter::Op::active_within : Filter::Op::inactive_for, 0, duration());
    } else {
      fail(start_, "expected a test (all, opt_in, region, tags, last_active), `not` or '(', got " + describe());
    }
  }

  std::string_view text_;
  const Vocabulary& vocabulary_;
  std::vector<Filter::Step>* out_ = nullptr;
  std::size_t pos_ = 0;
  std::size_t start_ = 0;
  Token kind_ = Token::end;
  std::string_view token_;
  int depth_ = 0;
  int pending_ = 0;  // answers the program so far leaves on the evaluation's stack
};

std::variant<Filter, FilterError> Filter::parse(std::string_view text, const Vocabulary& vocabulary) {
  RELAYSIM_ASSERT(vocabulary.regions.size() <= kMaxDirectoryNames && vocabulary.tags.size() <= kMaxDirectoryNames,
                  "a vocabulary's names fit a 64-bit mask");
  try {
    return FilterParser(text, vocabulary).run();
  } catch (FilterError& e) {
    return std::move(e);
  }
}

bool Filter::matches(const UserRecord& user, Time now) const {
  // The program is postfix; the parser bounds its stack (kMaxPending), so it fits 64 bits.
  std::uint64_t stack = 0;
  int depth = 0;
  for (const Step& s : program_) {
    bool v = false;
    switch (s.op) {
      case Op::all: v = true; break;
      case Op::opt_in: v = user.opt_in; break;
      case Op::region_in: v = user.region < 64 && ((s.mask >> user.region) & 1U) != 0; break;
      case Op::tags_has: v = (user.tags & s.mask) != 0; break;
      case Op::active_within: v = user.last_active > now - s.age; break;
      case Op::inactive_for: v = user.last_active <= now - s.age; break;
      case Op::negate:
        stack ^= 1U;
        continue;
      case Op::both:
      case Op::either: {
        const bool b = (stack & 1U) != 0;
        stack >>= 1;
        --depth;
        const bool a = (stack & 1U) != 0;
        v = s.op == Op::both ? a && b : a || b;
        stack = (stack & ~std::uint64_t{1}) | (v ? 1U : 0U);
        continue;
      }
    }
    RELAYSIM_ASSERT(depth < kMaxPending, "a filter's stack fits 64 bits (the parser refuses more)");
    stack = stack << 1 | (v ? 1U : 0U);
    ++depth;
  }
  RELAYSIM_ASSERT(depth == 1, "a filter leaves one answer");
  return (stack & 1U) != 0;
}

}  // namespace relaysim::sms
