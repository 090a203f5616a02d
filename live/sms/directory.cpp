#include "live/sms/directory.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "model/core/assert.h"

namespace relaysim::live::sms {

namespace {

constexpr const char* kSchema =
    "CREATE TABLE users (idx INTEGER PRIMARY KEY, recipient INTEGER NOT NULL UNIQUE, last_active INTEGER NOT NULL,"
    " tags INTEGER NOT NULL, utc_offset INTEGER NOT NULL, region INTEGER NOT NULL, opt_in INTEGER NOT NULL,"
    " opted_out INTEGER NOT NULL);"
    "CREATE TABLE names (kind INTEGER NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL,"
    " PRIMARY KEY (kind, position));";

constexpr std::int64_t kDay = 24LL * 3600 * 1'000'000'000;

// A user's columns, in the order user_of reads them.
#define RELAYSIM_USER_COLUMNS "recipient, last_active, tags, utc_offset, region, opt_in, opted_out"

relaysim::sms::UserRecord user_of(const Db::Statement& q) {
  relaysim::sms::UserRecord u;
  u.recipient = static_cast<relaysim::sms::Recipient>(q.i64(0));
  u.last_active = q.time(1);
  u.tags = static_cast<std::uint64_t>(q.i64(2));
  u.utc_offset = static_cast<std::int32_t>(q.i64(3));
  u.region = static_cast<std::uint16_t>(q.i64(4));
  u.opt_in = q.i64(5) != 0;
  u.opted_out = q.i64(6) != 0;
  return u;
}

// `path`, once it is known to hold a directory: opening a file that is not there would make one.
const std::string& existing_directory(const std::string& path) {
  const DbInspection db = inspect_database(path);
  if (!db.holds({"users", "names"})) {
    throw std::invalid_argument("serve.directory: " + path + " is not a recipient directory relaysim world wrote" +
                                (!db.exists ? " (no such file: start relaysim world with --serve first)"
                                 : db.is_directory ? " (a directory)" : !db.is_sqlite ? " (" + db.error + ")" : ""));
  }
  return path;
}

}  // namespace

Time run_epoch(Time t, const relaysim::sms::PlatformConfig& platform, const relaysim::sms::BusinessPolicy& business) {
  __extension__ using u128 = unsigned __int128;
  const std::int64_t ns = to_ns(t);
  if (ns <= 0) return Time{};
  u128 period = kDay;
  const auto with = [&](Duration width) {
    const std::int64_t w = to_ns(width);
    if (w <= 0 || period == 0) return;
    // lcm(period, w) = period / gcd(period, w) * w, computed in 128 bits; past 2^63 no epoch after
    // 1970 is a multiple of it.
    std::uint64_t a = static_cast<std::uint64_t>(w), b = static_cast<std::uint64_t>(period % static_cast<u128>(w));
    while (b != 0) {
      const std::uint64_t r = a % b;
      a = b;
      b = r;
    }
    period = period / a * static_cast<u128>(w);
    if (period > static_cast<u128>(ns)) period = 0;
  };
  if (platform.cluster_limit) with(platform.cluster_limit->spec.window);
  if (business.limit) with(business.limit->window);
  const relaysim::sms::SyncAsyncConfig& s = platform.sync_to_async;
  with(std::max<Duration>(Duration{1}, s.latency.window / 10));
  with(std::max<Duration>(Duration{1}, s.error_rate.window / 10));
  with(std::chrono::seconds(1));  // the growth rule's whole seconds
  if (period == 0) return Time{};
  return time_from_ns(static_cast<std::int64_t>(static_cast<u128>(ns) / period * period));
}

void write_directory(const std::string& path, const sim::sms::SimDirectory& directory, Time epoch) {
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ignored);
  Db db(path, Durability::normal);
  db.exec(kSchema);
  Db::Transaction tx(db);
  Db::Statement name(db, "INSERT INTO names (kind, position, name) VALUES (?1, ?2, ?3)");
  const relaysim::sms::Vocabulary& v = directory.vocabulary();
  for (std::size_t i = 0; i < v.regions.size(); ++i) name.bind(1, 0).bind(2, static_cast<std::int64_t>(i)).bind(3, v.regions[i]).run();
  for (std::size_t i = 0; i < v.tags.size(); ++i) name.bind(1, 1).bind(2, static_cast<std::int64_t>(i)).bind(3, v.tags[i]).run();
  Db::Statement user(db, "INSERT INTO users (idx, recipient, last_active, tags, utc_offset, region, opt_in, opted_out)"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  for (std::uint64_t i = 0; i < directory.size(); ++i) {
    const relaysim::sms::UserRecord u = directory.user(i);
    user.bind(1, i).bind(2, u.recipient).bind(3, epoch + u.last_active.time_since_epoch()).bind(4, u.tags)
        .bind(5, u.utc_offset).bind(6, static_cast<int>(u.region)).bind(7, u.opt_in ? 1 : 0).bind(8, u.opted_out ? 1 : 0)
        .run();
  }
  tx.commit();
}

SqliteDirectory::SqliteDirectory(const std::string& path) : db_(existing_directory(path), Durability::normal) {
  try {
    Db::Statement names(db_, "SELECT kind, name FROM names ORDER BY kind, position");
    while (names.step()) {
      (names.i64(0) == 0 ? vocabulary_.regions : vocabulary_.tags).emplace_back(names.text_view(1));
    }
    Db::Statement count(db_, "SELECT COUNT(*) FROM users");
    RELAYSIM_ASSERT(count.step(), "a count has a row");
    size_ = static_cast<std::uint64_t>(count.i64(0));
  } catch (const StoreError& e) {
    throw std::invalid_argument("serve.directory: " + path + " is not a directory relaysim world wrote (" + e.what() + ")");
  }
  if (vocabulary_.regions.size() > relaysim::sms::kMaxDirectoryNames ||
      vocabulary_.tags.size() > relaysim::sms::kMaxDirectoryNames) {
    throw std::invalid_argument("serve.directory: " + path + " names more regions or tags than a filter can hold");
  }
}

std::size_t SqliteDirectory::read(std::uint64_t from, std::span<relaysim::sms::UserRecord> out) {
  Db::Statement& q = db_.prepared(read_,
      "SELECT " RELAYSIM_USER_COLUMNS " FROM users WHERE idx >= ?1 ORDER BY idx LIMIT ?2");
  ResetOnExit guard(q);
  q.bind(1, from).bind(2, static_cast<std::uint64_t>(out.size()));
  std::size_t n = 0;
  while (n < out.size() && q.step()) out[n++] = user_of(q);
  return n;
}

std::optional<relaysim::sms::UserRecord> SqliteDirectory::find(relaysim::sms::Recipient recipient) {
  Db::Statement& q = db_.prepared(by_recipient_,
      "SELECT " RELAYSIM_USER_COLUMNS " FROM users WHERE recipient = ?1");
  ResetOnExit guard(q);
  q.bind(1, recipient);
  if (!q.step()) return std::nullopt;
  return user_of(q);
}

bool SqliteDirectory::opted_out(relaysim::sms::Recipient recipient) {
  const std::optional<relaysim::sms::UserRecord> u = find(recipient);
  return u && u->opted_out;
}

std::int32_t SqliteDirectory::utc_offset(relaysim::sms::Recipient recipient) {
  const std::optional<relaysim::sms::UserRecord> u = find(recipient);
  return u ? u->utc_offset : 0;
}

}  // namespace relaysim::live::sms
