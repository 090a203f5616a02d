// The SMS gateway's recipient directory, live: an SQLite file the world writes from its scenario
// and serve reads (`serve.directory`), the model's Directory port on it.
//
// A real gateway reads its users from its own database; here that database is the world's, so
// that a live run's campaigns choose from the very users the simulator's directory holds (the
// scenario's `sms.directory`, drawn from its seed) and the judge's oracle knows the truth of each.
// The file's schema lives here only:
//
//   users(idx, recipient, last_active, tags, utc_offset, region, opt_in, opted_out)
//   names(kind, position, name)      -- the vocabulary: kind 0 a region, 1 a tag
//
// Times are Unix nanoseconds: the simulator's `last_active` (relative to the start of its run) from
// the run's epoch (run_epoch), which is where the judge puts the start of a live run.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "model/sms/config.h"
#include "model/sms/directory.h"
#include "model/store/sqlite_db.h"
#include "sim/sms/directory.h"

namespace relaysim::live::sms {

// Where a live SMS run that started at `t` puts its time zero, for the world's directory and for
// the judge: the latest time on or before `t` that is a whole number of days and of every width
// the gateway's limits and sync-to-async rules bucket time by, so that the judge's times keep
// their time of day (quiet hours are one) and fall into the buckets the gateway's did; Unix time
// itself when no such time is after 1970.
Time run_epoch(Time t, const relaysim::sms::PlatformConfig& platform, const relaysim::sms::BusinessPolicy& business);

// Writes `directory`'s users, as of the start of a run that starts at `epoch`, to a new file at
// `path` (one already there is replaced). Throws StoreError.
void write_directory(const std::string& path, const sim::sms::SimDirectory& directory, Time epoch);

class SqliteDirectory final : public relaysim::sms::Directory {
 public:
  // Opens a file write_directory wrote. Throws StoreError, or std::invalid_argument naming the
  // file when it is not a directory.
  explicit SqliteDirectory(const std::string& path);

  const relaysim::sms::Vocabulary& vocabulary() const override { return vocabulary_; }
  std::uint64_t size() const override { return size_; }
  std::size_t read(std::uint64_t from, std::span<relaysim::sms::UserRecord> out) override;
  bool opted_out(relaysim::sms::Recipient recipient) override;
  std::int32_t utc_offset(relaysim::sms::Recipient recipient) override;

 private:
  std::optional<relaysim::sms::UserRecord> find(relaysim::sms::Recipient recipient);

  Db db_;
  relaysim::sms::Vocabulary vocabulary_;
  std::uint64_t size_ = 0;
  std::unique_ptr<Db::Statement> read_, by_recipient_;
};

}  // namespace relaysim::live::sms
