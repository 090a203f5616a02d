#include "model/outbox/inbox.h"

#include <algorithm>

#include "model/core/assert.h"
#include "model/core/mutants.h"
#include "model/outbox/mutants.h"

namespace relaysim::outbox {

Applied apply_once(EffectStore& store, const Effect& e, InplaceFunction<bool(), 16> dies) {
  if (planted(mutant::no_inbox)) {
    store.begin();
    store.apply(e);
    if (dies()) {
      store.rollback();
      return Applied::died;
    }
    store.commit();
    return Applied::applied;
  }
  if (planted(mutant::inbox_outside_effect_tx)) {
    store.begin();
    if (store.in_inbox(kTopic, e.message)) {
      store.rollback();
      return Applied::duplicate;
    }
    store.apply(e);
    store.commit();
    if (dies()) return Applied::died;  // the effect is in, the inbox row never will be
    store.begin();
    store.insert_inbox(kTopic, e.message);
    store.commit();
    return Applied::applied;
  }
  store.begin();
  if (!store.insert_inbox(kTopic, e.message)) {
    store.rollback();
    return Applied::duplicate;
  }
  store.apply(e);
  if (dies()) {
    store.rollback();  // neither the effect nor the inbox row: the redelivery applies it
    return Applied::died;
  }
  store.commit();
  return Applied::applied;
}

void MemoryEffectStore::begin() {
  RELAYSIM_ASSERT(!open_, "one effect transaction at a time");
  open_ = true;
}

bool MemoryEffectStore::insert_inbox(std::string_view, MessageRef m) {
  RELAYSIM_ASSERT(open_, "an inbox row is written inside a transaction");
  if (in_inbox(kTopic, m)) return false;
  for (std::uint64_t s : staged_inbox_) {
    if (s == m.packed()) return false;
  }
  staged_inbox_.push_back(m.packed());
  return true;
}

std::uint32_t& MemoryEffectStore::row(MessageRef m) {
  if (rows_.size() <= m.shard) rows_.resize(m.shard + 1);
  std::vector<std::uint32_t>& shard = rows_[m.shard];
  if (shard.size() <= m.id) shard.resize(std::max<std::size_t>(m.id + 1, shard.size() * 2), 0);
  return shard[m.id];
}

bool MemoryEffectStore::in_inbox(std::string_view, MessageRef m) { return (row(m) & 1U) != 0; }

void MemoryEffectStore::apply(const Effect& e) {
  RELAYSIM_ASSERT(open_, "an effect is applied inside a transaction");
  staged_effects_.push_back(e.message.packed());
}

void MemoryEffectStore::commit() {
  RELAYSIM_ASSERT(open_, "commit needs an open transaction");
  for (std::uint64_t m : staged_inbox_) row(MessageRef::unpack(m)) |= 1U;
  for (std::uint64_t m : staged_effects_) row(MessageRef::unpack(m)) += 2U;
  committed_ += staged_effects_.size();
  rollback();
}

void MemoryEffectStore::rollback() {
  staged_inbox_.clear();
  staged_effects_.clear();
  open_ = false;
}

std::uint64_t MemoryEffectStore::effects(MessageRef m) { return row(m) >> 1; }

SqliteEffectStore::SqliteEffectStore(const std::string& path, Durability durability) : db_(path, durability) {
  db_.exec(R"sql(
CREATE TABLE IF NOT EXISTS inbox_message (
  topic   TEXT    NOT NULL,
  message INTEGER NOT NULL,
  PRIMARY KEY (topic, message)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS effect (
  message INTEGER NOT NULL,
  key     INTEGER NOT NULL,
  version INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  at      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS effect_message ON effect (message);
)sql");
}

SqliteEffectStore::~SqliteEffectStore() {
  tx_.reset();
  insert_inbox_.reset();
  in_inbox_.reset();
  apply_.reset();
  effects_.reset();
}

void SqliteEffectStore::begin() {
  RELAYSIM_ASSERT(!tx_, "one effect transaction at a time");
  staged_ = 0;
  tx_.emplace(db_);
}

bool SqliteEffectStore::insert_inbox(std::string_view topic, MessageRef m) {
  RELAYSIM_ASSERT(tx_, "an inbox row is written inside a transaction");
  Db::Statement& s = db_.prepared(insert_inbox_, "INSERT OR IGNORE INTO inbox_message (topic, message) VALUES (?1, ?2)");
  s.bind(1, topic).bind(2, m.packed()).run();
  db_.wrote();
  return db_.changes() == 1;
}

bool SqliteEffectStore::in_inbox(std::string_view topic, MessageRef m) {
  Db::Statement& s = db_.prepared(in_inbox_, "SELECT 1 FROM inbox_message WHERE topic = ?1 AND message = ?2");
  ResetOnExit reset(s);
  s.bind(1, topic).bind(2, m.packed());
  return s.step();
}

void SqliteEffectStore::apply(const Effect& e) {
  RELAYSIM_ASSERT(tx_, "an effect is applied inside a transaction");
  Db::Statement& s = db_.prepared(apply_, "INSERT INTO effect (message, key, version, attempt, at) VALUES (?1, ?2, ?3, ?4, ?5)");
  s.bind(1, e.message.packed()).bind(2, e.key).bind(3, e.version).bind(4, std::uint32_t{e.attempt}).bind(5, e.at).run();
  db_.wrote();
  ++staged_;
}

void SqliteEffectStore::commit() {
  RELAYSIM_ASSERT(tx_, "commit needs an open transaction");
  tx_->commit();
  tx_.reset();
  committed_ += staged_;
  staged_ = 0;
}

void SqliteEffectStore::rollback() {
  tx_.reset();
  staged_ = 0;
}

std::uint64_t SqliteEffectStore::effects(MessageRef m) {
  Db::Statement& s = db_.prepared(effects_, "SELECT count(*) FROM effect WHERE message = ?1");
  ResetOnExit reset(s);
  s.bind(1, m.packed());
  s.step();
  return static_cast<std::uint64_t>(s.i64(0));
}

}  // namespace relaysim::outbox
