// An enum's names, declared once beside the enum as a table of (value, name) rows. Its
// to_string, its parsing, the scenario's choice of it and its count all read that one table, so
// none can drift from the others, and the compiler refuses a table that misses, repeats or
// reorders an enumerator:
//
//   enum class Status : std::uint8_t { pending, failed };
//   inline constexpr auto kStatusNames = names<Status>({{Status::pending, "pending"}, {Status::failed, "failed"}});
//   constexpr std::string_view to_string(Status s) { return kStatusNames[s]; }
//
// The same check serves any table with one row per enumerator (enum_rows): the invariants'
// titles, for one.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

namespace relaysim {

namespace names_detail {

// Whether `Value` is one of its enum's enumerators. A compiler spells a named value by its name
// in the function's signature and any other value as a cast: "[with auto Value = ns::E::a]"
// against "[with auto Value = (ns::E)6]" (GCC and Clang alike).
template <auto Value>
consteval bool is_enumerator() {
  const std::string_view signature = __PRETTY_FUNCTION__;
  const std::size_t at = signature.find("Value = ");
  return at != std::string_view::npos && signature[at + 8] != '(';
}

}  // namespace names_detail

// One row of a table by enum: the enumerator and what the table says of it.
template <class E, class T>
struct Row {
  E value;
  T data;
};

// The rows' data in E's order, indexed by the enumerator's value. The rows must be E's
// enumerators from 0 in declaration order, each once, and all of them: a table that breaks this
// does not compile (the enumerators count from 0 without gaps, as every enum here does).
template <class E, class T, std::size_t N>
consteval std::array<T, N> enum_rows(const Row<E, T> (&rows)[N]) {
  static_assert(std::is_enum_v<E>);
  static_assert(!names_detail::is_enumerator<static_cast<E>(N)>(),
                "the table misses an enumerator: it must have one row for each, in the enum's order");
  std::array<T, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    if (rows[i].value != static_cast<E>(i)) throw "the table's rows must follow the enum's order, one per enumerator";
    out[i] = rows[i].data;
  }
  return out;
}

// The names of E's enumerators.
template <class E, std::size_t N>
class Names {
 public:
  // How many enumerators E has.
  static constexpr int count = static_cast<int>(N);

  consteval explicit Names(const std::array<std::string_view, N>& names) : names_(names) {
    for (std::size_t i = 0; i < N; ++i) {
      if (names_[i].empty()) throw "every enumerator needs a name";
      for (std::size_t j = 0; j < i; ++j) {
        if (names_[j] == names_[i]) throw "two enumerators have one name";
      }
    }
  }

  // The name of `e`; "?" for a value no enumerator has (a corrupted byte, say).
  constexpr std::string_view operator[](E e) const {
    const auto i = static_cast<std::size_t>(e);
    return i < N ? names_[i] : std::string_view("?");
  }
  // The enumerator named `name`, if one is.
  constexpr std::optional<E> parse(std::string_view name) const {
    for (std::size_t i = 0; i < N; ++i) {
      if (names_[i] == name) return static_cast<E>(i);
    }
    return std::nullopt;
  }
  // Every name, in the enum's order.
  constexpr std::span<const std::string_view> all() const { return names_; }

 private:
  std::array<std::string_view, N> names_;
};

template <class E, std::size_t N>
consteval Names<E, N> names(const Row<E, std::string_view> (&rows)[N]) {
  return Names<E, N>(enum_rows(rows));
}

}  // namespace relaysim
