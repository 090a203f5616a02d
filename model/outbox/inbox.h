// The inbox: how a consumer's effect is applied once per message, however often the log
// delivers it (seed 002's `inbox_message(topic, key)`).
//
// The effect is a change to a database the consumer's side owns (EffectStore: the downstream's
// tables, with the inbox among them). apply_once() writes the inbox row and the effect in ONE
// transaction: a message already in the inbox changes nothing, and a handler that dies before the
// commit leaves neither. That is the whole trick; writing the inbox row in a transaction of its
// own, or not at all, lets a redelivered message apply its effect again (the mutants
// `inbox_outside_effect_tx` and `no_inbox`, model/outbox/mutants.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/core/function.h"
#include "model/core/names.h"
#include "model/core/time.h"
#include "model/outbox/types.h"
#include "model/store/sqlite_db.h"

namespace relaysim::outbox {

// What handling one message changes.
struct Effect {
  MessageRef message;
  EntityKey key = 0;
  std::uint64_t version = 0;
  std::uint16_t attempt = 0;  // the attempt whose handling applied it
  Time at{};
};

// The consumer side's database: the inbox and the effects. begin() opens a transaction that
// commit() makes visible and rollback() (or a failure) undoes.
class EffectStore {
 public:
  virtual ~EffectStore() = default;
  virtual void begin() = 0;
  // Inserts the inbox row; false when it is there already (nothing inserted).
  virtual bool insert_inbox(std::string_view topic, MessageRef message) = 0;
  virtual bool in_inbox(std::string_view topic, MessageRef message) = 0;
  virtual void apply(const Effect& e) = 0;
  virtual void commit() = 0;
  virtual void rollback() = 0;
  // How many times `message`'s effect was applied (committed).
  virtual std::uint64_t effects(MessageRef message) = 0;
  // Effects committed, all messages: what a transaction added is what it really applied.
  std::uint64_t effects_committed() const { return committed_; }

 protected:
  std::uint64_t committed_ = 0;
};

enum class Applied : std::uint8_t {
  applied,    // the effect is committed, with its inbox row
  duplicate,  // the inbox held the message already: nothing changed
  died,       // the handler died before it finished (what is committed depends on the code)
};
inline constexpr auto kAppliedNames = names<Applied>({
    {Applied::applied, "applied"}, {Applied::duplicate, "duplicate"}, {Applied::died, "died"}});
constexpr std::string_view to_string(Applied a) { return kAppliedNames[a]; }

// The topic the relay's records go to: the inbox's first key column.
inline constexpr std::string_view kTopic = "outbox_request";

// Applies `e` once. `dies()` is asked where a handler can die after writing the effect and before
// it is done (the simulator injects it; the live shell never dies on purpose).
Applied apply_once(EffectStore& store, const Effect& e, InplaceFunction<bool(), 16> dies);

class MemoryEffectStore final : public EffectStore {
 public:
  void begin() override;
  bool insert_inbox(std::string_view topic, MessageRef message) override;
  bool in_inbox(std::string_view topic, MessageRef message) override;
  void apply(const Effect& e) override;
  void commit() override;
  void rollback() override;
  std::uint64_t effects(MessageRef message) override;

 private:
  // One topic (kTopic). By shard, then by message id: ids are handed out densely per shard, so a
  // word per message — its effects << 1 | in the inbox — is all the table needs, where two hash
  // sets of every message handled cost two allocations and two cache misses per message.
  std::vector<std::vector<std::uint32_t>> rows_;
  std::uint32_t& row(MessageRef m);
  bool open_ = false;
  std::vector<std::uint64_t> staged_inbox_;
  std::vector<std::uint64_t> staged_effects_;
};

class SqliteEffectStore final : public EffectStore {
 public:
  SqliteEffectStore(const std::string& path, Durability durability);
  ~SqliteEffectStore() override;
  void begin() override;
  bool insert_inbox(std::string_view topic, MessageRef message) override;
  bool in_inbox(std::string_view topic, MessageRef message) override;
  void apply(const Effect& e) override;
  void commit() override;
  void rollback() override;
  std::uint64_t effects(MessageRef message) override;
  Db& db() { return db_; }

 private:
  Db db_;
  std::optional<Db::Transaction> tx_;
  std::uint64_t staged_ = 0;  // effects written in the open transaction
  std::unique_ptr<Db::Statement> insert_inbox_, in_inbox_, apply_, effects_;
};

}  // namespace relaysim::outbox
