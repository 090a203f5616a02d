#include "sim/scenario/expect.h"

#include <charconv>
#include <cmath>

#include "model/core/assert.h"
#include "sim/scenario/units.h"

namespace relaysim::sim {

std::optional<std::string> parse_comparison(std::string_view s, Unit unit, CompareOp& op, double& value) {
  s = trim_blanks(s);
  const std::string whole(s);
  op = CompareOp::eq;
  static constexpr std::pair<std::string_view, CompareOp> kOps[] = {
      {"<=", CompareOp::le}, {">=", CompareOp::ge}, {"==", CompareOp::eq}, {"!=", CompareOp::ne},
      {"<", CompareOp::lt},  {">", CompareOp::gt},  {"=", CompareOp::eq}};
  for (const auto& [text, o] : kOps) {
    if (s.substr(0, text.size()) == text) {
      op = o;
      s.remove_prefix(text.size());
      break;
    }
  }
  s = trim_blanks(s);
  const bool percent = !s.empty() && s.back() == '%';
  if (percent) s = trim_blanks(s.substr(0, s.size() - 1));
  const char* examples = unit == Unit::count   ? "0, \"<= 10\", \">= 1\" or \"!= 0\" (a count)"
                         : unit == Unit::ratio   ? "\"100%\", \"< 0.1%\" or \">= 99.9%\" (a ratio)"
                         : unit == Unit::seconds ? "\"< 30s\", \"<= 2m\" or \"== 0s\" (a time)"
                                                 : "\"< 1.5\", \">= 1\" or \"== 2\" (a number)";
  const std::string usage = std::string("expected a comparison such as ") + examples + ", got '" + whole + "'";
  if (s.empty()) return usage;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  const bool plain = ec == std::errc{} && end == s.data() + s.size() && std::isfinite(value);
  switch (unit) {
    case Unit::count:
      if (percent) return "is a count, not a percentage: '" + whole + "'";
      if (!plain) return usage;
      if ((value < 0 && op != CompareOp::gt && op != CompareOp::ge && op != CompareOp::ne) ||
          (value != std::floor(value) && op == CompareOp::eq) || (op == CompareOp::lt && value <= 0)) {
        return "is a count, a whole number from 0 up, so '" + whole + "' can never hold";
      }
      return std::nullopt;
    case Unit::ratio:
      if (!plain) return usage;
      if (percent) value /= 100.0;
      if (value < 0 || value > 1) {
        return "is a ratio between 0% and 100%, so '" + whole + "' is outside it" +
               (!percent && value > 1 && value <= 100 ? "; did you mean '" + whole + "%'?" : "");
      }
      if ((op == CompareOp::lt && value == 0) || (op == CompareOp::gt && value == 1)) {
        return "is a ratio between 0% and 100%, so '" + whole + "' can never hold";
      }
      return std::nullopt;
    case Unit::seconds: {
      if (percent) return "is a time, not a percentage: '" + whole + "'";
      if (!plain) {
        double seconds = 0;
        if (!parse_duration_seconds(s, seconds)) return "expected a comparison with a time such as \"< 30s\" or \"<= 2m\"";
        value = seconds;
      }
      if (value < 0 || (op == CompareOp::lt && value == 0)) return "is a time, never negative, so '" + whole + "' can never hold";
      return std::nullopt;
    }
    case Unit::number:
      if (percent || !plain) return usage;
      return std::nullopt;
  }
  return usage;
}

bool holds(const Expectation& e, double actual) {
  RELAYSIM_ASSERT(std::isfinite(e.value), "an expectation compares with a number");
  // Compared with a little tolerance for the rounding of what was written ("0.1%").
  const double eps = 1e-12 * std::max(1.0, std::fabs(e.value));
  switch (e.op) {
    case CompareOp::lt: return actual < e.value - eps;
    case CompareOp::le: return actual <= e.value + eps;
    case CompareOp::gt: return actual > e.value + eps;
    case CompareOp::ge: return actual + eps >= e.value;
    case CompareOp::eq: return std::fabs(actual - e.value) <= eps;
    case CompareOp::ne: return std::fabs(actual - e.value) > eps;
  }
  return false;
}

}  // namespace relaysim::sim
