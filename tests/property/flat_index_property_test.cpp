// FlatIndex and CompactFlatIndex against std::unordered_multimap: any sequence of inserts, finds
// and erases, with keys drawn from a small range so that collisions, long probe runs and
// wrap-around all happen.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "model/core/dense_id_map.h"
#include "model/core/flat_index.h"

namespace relaysim {
namespace {

struct Op {
  int kind;  // 0 insert, 1 erase, 2 find
  std::uint64_t key;
  std::uint64_t value;
};

// Runs `ops` on `Index` and on a multimap keyed by what the index tells apart: `seen(key)`.
template <class Index>
void agrees_with_a_multimap(const std::vector<Op>& ops, std::uint64_t (*key_of)(const Op&),
                            std::uint64_t (*seen)(std::uint64_t)) {
  Index index;
  std::unordered_multimap<std::uint64_t, std::uint64_t> model;
  for (const Op& op : ops) {
    const std::uint64_t key = key_of(op);
    auto [lo, hi] = model.equal_range(seen(key));
    const auto match = std::find_if(lo, hi, [&](const auto& kv) { return kv.second == op.value; });
    switch (op.kind) {
      case 0:
        index.insert(key, op.value);
        model.emplace(seen(key), op.value);
        break;
      case 1:
        RC_ASSERT(index.erase(key, op.value) == (match != hi));
        if (match != hi) model.erase(match);
        break;
      default: {
        const std::uint64_t found = index.find(key, [&](std::uint64_t v) { return v == op.value; });
        RC_ASSERT(found == (match != hi ? op.value : 0));
      }
    }
    RC_ASSERT(index.size() == model.size());
  }
  // Every entry is still reachable after all the shifting.
  for (const auto& [k, v] : model) {
    RC_ASSERT(index.find(k, [value = v](std::uint64_t x) { return x == value; }) == v);
  }
}

std::vector<Op> some_ops() {
  return *rc::gen::container<std::vector<Op>>(rc::gen::construct<Op>(
      rc::gen::inRange(0, 3), rc::gen::inRange<std::uint64_t>(0, 40), rc::gen::inRange<std::uint64_t>(1, 6)));
}

RC_GTEST_PROP(FlatIndexProperty, AgreesWithAMultimap, ()) {
  agrees_with_a_multimap<FlatIndex>(
      some_ops(), [](const Op& op) { return op.key; }, [](std::uint64_t key) { return key; });
}

// The compact index keeps a key's top 32 bits only: keys that differ below them are the same key
// to it (its callers confirm each match), so the model is keyed by the top bits. The low bits vary
// with the value, so such keys are made and must still be found.
RC_GTEST_PROP(FlatIndexProperty, CompactAgreesWithAMultimapOnTopBits, ()) {
  agrees_with_a_multimap<CompactFlatIndex>(
      some_ops(), [](const Op& op) { return op.key << 32 | op.value * 0x9e37; },
      [](std::uint64_t key) { return key >> 32 << 32; });
}

// DenseIdMap against std::map: increasing ids with gaps, erased in any order, so the window
// slides, wraps around its ring and grows.
RC_GTEST_PROP(DenseIdMapProperty, AgreesWithAMap, ()) {
  const auto ops = *rc::gen::container<std::vector<Op>>(rc::gen::construct<Op>(
      rc::gen::inRange(0, 3), rc::gen::inRange<std::uint64_t>(0, 4), rc::gen::inRange<std::uint64_t>(0, 200)));
  DenseIdMap index;
  std::map<std::uint64_t, std::uint32_t> model;
  std::uint64_t next = 1;
  for (const Op& op : ops) {
    switch (op.kind) {
      case 0: {  // insert the next id after a gap of op.key
        next += op.key;
        const auto slot = static_cast<std::uint32_t>(op.value);
        RC_ASSERT(index.accepts(next));
        index.insert(next, slot);
        model[next] = slot;
        ++next;
        break;
      }
      case 1: {  // erase an id near the oldest, mapped or not
        const std::uint64_t id = model.empty() ? op.value : model.begin()->first + op.value % 8;
        index.erase(id);
        model.erase(id);
        break;
      }
      default: {
        const auto it = model.find(op.value);
        RC_ASSERT(index.find(op.value) == (it == model.end() ? DenseIdMap::kNone : it->second));
      }
    }
    RC_ASSERT(index.size() == model.size());
    RC_ASSERT(!index.accepts(next - 1) || next == 1);
  }
  for (const auto& [id, slot] : model) RC_ASSERT(index.find(id) == slot);
}

}  // namespace
}  // namespace relaysim
