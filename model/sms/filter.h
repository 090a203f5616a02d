// Filter: the small language a marketing campaign chooses its recipients with, parsed once against
// the directory's vocabulary and then tested against every user the campaign walks.
//
//   filter   = or ;
//   or       = and { "or" and } ;
//   and      = not { "and" not } ;
//   not      = "not" not | "(" or ")" | test ;
//   test     = "all"                                    every user
//            | "opt_in"                                 consented to marketing at sign-up
//            | "region" ( "=" | "!=" ) name
//            | "region" "in" "[" name { "," name } "]"
//            | "tags" "has" name
//            | "last_active" ( "<" | ">" ) duration ;   "< 30d": active within the last 30 days
//   name     = letters, digits, '_' and '-' | '"' any but '"' '"' ;
//   duration = digits ( "s" | "m" | "h" | "d" ) ;
//
// e.g. `region in [eu, uk] and tags has vip and last_active < 30d and not tags has churned`.
// Keywords are lower case; `and` binds tighter than `or`. A region or tag the directory does not
// know is an error, as is anything unexpected, each with the byte offset where it was found, so a
// scenario or an API answer can point at it. Users who opted out are never chosen, whatever the
// filter says: that is not the filter's business (model/sms/node.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/core/time.h"
#include "model/sms/directory.h"

namespace relaysim::sms {

struct FilterError {
  std::size_t offset = 0;  // bytes into the text
  std::string message;
  std::size_t column() const { return offset + 1; }
};

class Filter {
 public:
  // The deepest nesting of parentheses and `not` a filter may have.
  static constexpr int kMaxDepth = 32;
  // The most answers its evaluation holds at once (matches() keeps them as the bits of a word).
  // A level of `a or b and (c or d and (...))` leaves at most two pending, so kMaxDepth keeps
  // every filter the parser takes within it; the parser also counts them as it emits the program,
  // and refuses a filter that would need more where it would.
  static constexpr int kMaxPending = 64;
  static_assert(2 * kMaxDepth <= kMaxPending, "the nesting a filter may have fits the evaluator's stack");
  static constexpr std::size_t kMaxLength = 4096;

  static std::variant<Filter, FilterError> parse(std::string_view text, const Vocabulary& vocabulary);

  // Whether `user` is chosen, judged at `now` (last_active is relative to it).
  bool matches(const UserRecord& user, Time now) const;

  // The text it was parsed from.
  const std::string& text() const { return text_; }

 private:
  enum class Op : std::uint8_t { all, opt_in, region_in, tags_has, active_within, inactive_for, negate, both, either };
  struct Step {
    Op op = Op::all;
    std::uint64_t mask = 0;  // region_in, tags_has
    Duration age{};          // active_within, inactive_for
  };
  friend class FilterParser;
  std::string text_;
  std::vector<Step> program_;  // postfix
};

}  // namespace relaysim::sms
