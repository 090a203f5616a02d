// FlatIndex: an open-addressing hash multimap from a 64-bit key to a nonzero 64-bit value.
//
// Why not std::unordered_map: the stores and the oracle index one entry per live request, tens of
// millions in a long run. A node-based map costs an allocation and ~64 bytes per entry and chases
// a pointer per lookup; this table is one array of 16-byte entries (linear probing, at most 3/4
// full) and allocates only when it doubles. Boost 1.81's unordered_flat_map would do, but Debian 12
// ships Boost 1.74.
//
// It is a multimap on purpose: callers index by a 64-bit hash of a longer key (an idempotency key)
// and confirm the match themselves, so two keys with the same hash are both kept and both found.
// Erasing uses backward shifting, so there are no tombstones and lookups never slow down.
#pragma once

#include <cstdint>
#include <vector>

#include "model/core/random.h"

namespace relaysim {

class FlatIndex {
 public:
  // Calls `visit(value)` for each entry under `key` until it returns true; returns that value, or 0.
  template <class Visit>
  std::uint64_t find(std::uint64_t key, Visit&& visit) const {
    if (size_ == 0) return 0;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const Entry& e = table_[i];
      if (e.value == 0) return 0;
      if (e.key == key && visit(e.value)) return e.value;
    }
  }

  // Adds (key, value); an existing entry under the same key is kept. `value` must not be 0.
  void insert(std::uint64_t key, std::uint64_t value) {
    if ((size_ + 1) * 4 > table_.size() * 3) grow();
    place(key, value);
    ++size_;
  }

  // Removes the entry (key, value); false if there is none.
  bool erase(std::uint64_t key, std::uint64_t value) {
    if (size_ == 0) return false;
    std::size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (table_[i].value == 0) return false;
      if (table_[i].key == key && table_[i].value == value) break;
    }
    // Backward shift: pull later entries of the probe run into the hole unless that would move
    // one before its home slot.
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (table_[j].value == 0) break;
      const std::size_t h = home(table_[j].key);
      const bool movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
      if (movable) {
        table_[i] = table_[j];
        i = j;
      }
    }
    table_[i] = Entry{};
    --size_;
    return true;
  }

  // Starts loading the memory a lookup of `key` will read first (a hint; changes nothing).
  void prefetch(std::uint64_t key) const {
    if (!table_.empty()) __builtin_prefetch(&table_[home(key)]);
  }

  std::size_t size() const { return size_; }

 private:
  struct Entry {
    std::uint64_t key = 0;
    std::uint64_t value = 0;  // 0: an empty slot
  };

  std::size_t home(std::uint64_t key) const { return static_cast<std::size_t>(mix64(key)) & mask_; }

  void place(std::uint64_t key, std::uint64_t value) {
    std::size_t i = home(key);
    while (table_[i].value != 0) i = (i + 1) & mask_;
    table_[i] = Entry{key, value};
  }

  void grow() {
    std::vector<Entry> old = std::move(table_);
    table_.assign(old.empty() ? 16 : old.size() * 2, Entry{});
    mask_ = table_.size() - 1;
    for (const Entry& e : old) {
      if (e.value != 0) place(e.key, e.value);
    }
  }

  std::vector<Entry> table_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace relaysim
