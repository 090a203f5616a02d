// A lifecycle: the states an entity passes through and the moves between them, declared once as a
// table beside the states themselves. The model asserts its moves against it where it makes
// them, the simulator's oracle checks every move a run makes against it, and the docs draw it
// (`relaysim lifecycles`, rendered by Graphviz in the build): the table, the code and the picture
// cannot drift apart.
#pragma once

#include <optional>
#include <type_traits>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/assert.h"

namespace relaysim {

template <class State>
struct Move {
  std::optional<State> from;  // nothing: the entity comes into being in `to`
  State to;
  std::string_view on;  // what makes the move, for people: "claimed when due"
};

// Does `table` allow the move from `from` (nothing: creation) to `to`?
// (The state type is the table's: `from` and `to` convert to it.)
template <class State, std::size_t N>
constexpr bool allows(const Move<State> (&table)[N], std::optional<std::type_identity_t<State>> from, std::type_identity_t<State> to) {
  for (const Move<State>& m : table) {
    if (m.from == from && m.to == to) return true;
  }
  return false;
}

// A lifecycle as the docs draw it: states by name.
struct LifecycleDiagram {
  std::string name;   // "webhook-request": the file it is drawn in
  std::string title;  // "A webhook request"
  struct Edge {
    std::string from;  // "": creation
    std::string to;
    std::string on;
  };
  std::vector<Edge> edges;
  std::vector<std::string> final_states;  // drawn with a double border
};

// The diagram of `table`, naming states with `name_of` (the states' to_string); a state no move
// leaves is final.
template <class State, std::size_t N, class NameOf>
LifecycleDiagram diagram_of(std::string name, std::string title, const Move<State> (&table)[N], NameOf name_of) {
  RELAYSIM_ASSERT(!name.empty(), "a diagram is drawn in a file it names");
  LifecycleDiagram d{std::move(name), std::move(title), {}, {}};
  for (const Move<State>& m : table) d.edges.push_back({m.from ? std::string(name_of(*m.from)) : std::string(), std::string(name_of(m.to)), std::string(m.on)});
  for (const Move<State>& m : table) {
    bool leaves = false;
    for (const Move<State>& n : table) leaves = leaves || (n.from == m.to && n.to != m.to);
    const std::string s(name_of(m.to));
    bool listed = false;
    for (const std::string& f : d.final_states) listed = listed || f == s;
    if (!leaves && !listed) d.final_states.push_back(s);
  }
  return d;
}

}  // namespace relaysim
