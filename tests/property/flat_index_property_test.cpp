// FlatIndex against std::unordered_multimap: any sequence of inserts, finds and erases, with keys
// drawn from a small range so that collisions, long probe runs and wrap-around all happen.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <unordered_map>

#include "model/core/flat_index.h"

namespace relaysim {
namespace {

struct Op {
  int kind;  // 0 insert, 1 erase, 2 find
  std::uint64_t key;
  std::uint64_t value;
};

RC_GTEST_PROP(FlatIndexProperty, AgreesWithAMultimap, ()) {
  const auto ops = *rc::gen::container<std::vector<Op>>(rc::gen::construct<Op>(
      rc::gen::inRange(0, 3), rc::gen::inRange<std::uint64_t>(0, 40), rc::gen::inRange<std::uint64_t>(1, 6)));
  FlatIndex index;
  std::unordered_multimap<std::uint64_t, std::uint64_t> model;
  for (const Op& op : ops) {
    auto [lo, hi] = model.equal_range(op.key);
    const auto match = std::find_if(lo, hi, [&](const auto& kv) { return kv.second == op.value; });
    switch (op.kind) {
      case 0:
        index.insert(op.key, op.value);
        model.emplace(op.key, op.value);
        break;
      case 1:
        RC_ASSERT(index.erase(op.key, op.value) == (match != hi));
        if (match != hi) model.erase(match);
        break;
      default: {
        const std::uint64_t found = index.find(op.key, [&](std::uint64_t v) { return v == op.value; });
        RC_ASSERT(found == (match != hi ? op.value : 0));
      }
    }
    RC_ASSERT(index.size() == model.size());
  }
  // Every entry is still reachable after all the shifting.
  for (const auto& [k, v] : model) {
    RC_ASSERT(index.find(k, [&](std::uint64_t x) { return x == v; }) == v);
  }
}

}  // namespace
}  // namespace relaysim
