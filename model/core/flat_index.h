// FlatIndex: an open-addressing hash multimap from a 64-bit key to a nonzero 64-bit value; and
// CompactFlatIndex, the same in half the memory for hashed keys and 32-bit values.
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
//
// CompactFlatIndex keeps only the key's top 32 bits (a tag) and a 32-bit value: 8-byte entries, so
// a table of millions of keys — far bigger than the caches, a miss per lookup — is half the size
// and misses less. Its keys must be hashes (every bit as good as any other), and since two keys
// can share a tag, `visit` must confirm every match, as the idempotency indexes do anyway.
#pragma once

#include <cstdint>
#include <vector>

#include "model/core/assert.h"
#include "model/core/big_memory.h"
#include "model/core/random.h"

namespace relaysim {

template <class Word>
class BasicFlatIndex {
 public:
  // Calls `visit(value)` for each entry under `key` until it returns true; returns that value, or 0.
  template <class Visit>
  std::uint64_t find(std::uint64_t key, Visit&& visit) const {
    if (size_ == 0) return 0;
    const Word t = tag(key);
    for (std::size_t i = home(t);; i = (i + 1) & mask_) {
      const Entry& e = table_[i];
      if (e.value == 0) return 0;
      if (e.key == t && visit(std::uint64_t{e.value})) return e.value;
    }
  }

  // Adds (key, value); an existing entry under the same key is kept. `value` must not be 0.
  void insert(std::uint64_t key, std::uint64_t value) {
    RELAYSIM_ASSERT(value != 0 && value == static_cast<Word>(value), "a value fits the index's word and is not 0");
    if ((size_ + 1) * 4 > table_.size() * 3) grow();
    place(tag(key), static_cast<Word>(value));
    ++size_;
  }

  // Removes the entry (key, value); false if there is none.
  bool erase(std::uint64_t key, std::uint64_t value) {
    if (size_ == 0) return false;
    const Word t = tag(key);
    std::size_t i = home(t);
    for (;; i = (i + 1) & mask_) {
      if (table_[i].value == 0) return false;
      if (table_[i].key == t && table_[i].value == value) break;
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
    if (!table_.empty()) __builtin_prefetch(&table_[home(tag(key))]);
  }

  std::size_t size() const { return size_; }

 private:
  struct Entry {
    Word key = 0;    // the key, or its top bits
    Word value = 0;  // 0: an empty slot
  };

  static Word tag(std::uint64_t key) { return static_cast<Word>(key >> (64 - 8 * sizeof(Word))); }
  std::size_t home(Word tag) const { return static_cast<std::size_t>(mix64(tag)) & mask_; }

  void place(Word key, Word value) {
    std::size_t i = home(key);
    while (table_[i].value != 0) i = (i + 1) & mask_;
    table_[i] = Entry{key, value};
  }

  void grow() {
    Table old = std::move(table_);
    table_.assign(old.empty() ? 16 : old.size() * 2, Entry{});
    mask_ = table_.size() - 1;
    for (const Entry& e : old) {
      if (e.value != 0) place(e.key, e.value);
    }
  }

  using Table = std::vector<Entry, BigAllocator<Entry>>;
  Table table_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

using FlatIndex = BasicFlatIndex<std::uint64_t>;
using CompactFlatIndex = BasicFlatIndex<std::uint32_t>;

}  // namespace relaysim
