#include "live/outbox/redis_log.h"

#include <hiredis/hiredis.h>

#include <charconv>
#include <random>

#include "live/outbox_log_script.h"
#include "model/core/assert.h"

namespace relaysim::live::outbox {

namespace asio = boost::asio;
using relaysim::outbox::Delivery;
using relaysim::outbox::MemberId;
using relaysim::outbox::Poll;
using relaysim::outbox::Produced;
using relaysim::outbox::ProducerId;
using relaysim::outbox::Record;

namespace {

const RedisScript& log_script() {
  static const RedisScript script(kOutboxLogScript);
  return script;
}

std::string_view text_of(const redisReply& r) { return {r.str, r.len}; }

template <class T>
bool read_number(std::string_view& text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc{}) return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  if (!text.empty()) {
    if (text.front() != ' ') return false;
    text.remove_prefix(1);
  }
  return true;
}

}  // namespace

std::string record_text(const Record& r) {
  return std::to_string(r.shard) + ' ' + std::to_string(r.id) + ' ' + std::to_string(r.attempt) + ' ' +
         std::to_string(r.type) + ' ' + std::to_string(r.key) + ' ' + std::to_string(r.version) + ' ' +
         std::to_string(r.fence) + ' ' + std::to_string(to_ns(r.created_at));
}

std::optional<Record> record_of(std::string_view text) {
  Record r;
  std::int64_t created = 0;
  if (!read_number(text, r.shard) || !read_number(text, r.id) || !read_number(text, r.attempt) ||
      !read_number(text, r.type) || !read_number(text, r.key) || !read_number(text, r.version) ||
      !read_number(text, r.fence) || !read_number(text, created) || !text.empty()) {
    return std::nullopt;
  }
  r.created_at = time_from_ns(created);
  return r;
}

RedisLog::RedisLog(asio::io_context& io, const Clock& clock, RedisAddress address, RedisLogOptions options,
                   std::uint32_t pod, sim::outbox::WorldEvents* truth)
    : io_(io), clock_(clock), scripts_(io, std::move(address)), options_(std::move(options)), pod_(pod), truth_(truth),
      key_("{" + options_.topic + "}"), alive_(std::make_shared<bool>(true)) {
  RELAYSIM_ASSERT(options_.partitions >= 1 && !options_.topic.empty(), "a topic has a name and partitions");
  RELAYSIM_ASSERT(kLiveSessionTimeout.holds(options_.session_timeout) && options_.max_poll_interval > Duration::zero() &&
                      options_.call_timeout > Duration::zero() && options_.poll_retry > Duration::zero(),
                  "a live session within its bounds, and a poll interval, a call's timeout and a retry longer than zero");
  // Ids a random prefix apart: another process's (or this one's before a restart) never meet them.
  std::random_device device;
  id_prefix_ = ((std::uint64_t{device()} << 32 | device()) & 0x3fff'ffffULL) << 32;
  if (id_prefix_ == 0) id_prefix_ = std::uint64_t{1} << 32;
}

RedisLog::~RedisLog() {
  *alive_ = false;
  for (auto& [id, m] : members_) {
    if (m.retry) m.retry->cancel();
    if (m.heartbeat) m.heartbeat->cancel();
  }
}

std::uint64_t RedisLog::next_id() {
  ++id_counter_;
  RELAYSIM_ASSERT(id_counter_ < (std::uint64_t{1} << 32), "ids of one log object fit their counter");
  return id_prefix_ | id_counter_;
}

void RedisLog::produce(ProducerId producer, std::uint32_t partition, std::span<const Record> records,
                       std::uint64_t first_sequence, Duration timeout, ProduceCallback done) {
  RELAYSIM_ASSERT(partition < options_.partitions && !records.empty(), "a produce names a partition and has records");
  RELAYSIM_ASSERT(timeout > Duration::zero() && static_cast<bool>(done), "a produce has a timeout and someone to answer");
  std::vector<std::string> args = {"produce", std::to_string(options_.partitions), std::to_string(producer),
                                   std::to_string(partition), std::to_string(first_sequence)};
  for (const Record& r : records) args.push_back(record_text(r));
  auto call = std::make_shared<Produce>(Produce{{records.begin(), records.end()}, producer, partition, first_sequence,
                                                std::move(done)});
  scripts_.run(log_script(), {key_}, std::move(args), timeout,
               [this, alive = alive_, call](KvStatus status, const redisReply* reply) {
                 if (*alive) produced(*call, status, reply);
               });
}

void RedisLog::produced(Produce& call, KvStatus status, const redisReply* reply) {
  if (status != KvStatus::ok) {
    ++failures_;
    return call.done(status == KvStatus::unavailable ? Produced::unavailable : Produced::timeout);
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != call.records.size()) {
    ++failures_;
    return call.done(Produced::timeout);  // not the script's answer: it may have written
  }
  const Time now = clock_.now();
  for (std::size_t i = 0; truth_ != nullptr && i < reply->elements; ++i) {
    const redisReply& e = *reply->element[i];
    if (e.type != REDIS_REPLY_INTEGER) continue;
    const std::uint64_t seq = call.first_sequence + i;
    if (e.integer >= 0) {
      truth_->emit(sim::outbox::LogAppended{call.partition, static_cast<std::uint64_t>(e.integer), call.records[i],
                                            call.producer, seq, now});
    } else {
      truth_->emit(sim::outbox::LogDeduped{call.partition, call.records[i], call.producer, seq, e.integer == -1, now});
    }
  }
  call.done(Produced::ok);
}

MemberId RedisLog::join() {
  const MemberId id = next_id();
  members_.emplace(id, Member{});
  return id;
}

std::vector<std::string> RedisLog::group_args(std::string_view op, MemberId member) const {
  return {std::string(op), std::to_string(options_.partitions),
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(options_.max_poll_interval).count()),
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(options_.session_timeout).count()),
          std::to_string(member)};
}

void RedisLog::leave(MemberId member) {
  const auto it = members_.find(member);
  if (it != members_.end()) {
    if (it->second.retry) it->second.retry->cancel();
    if (it->second.heartbeat) it->second.heartbeat->cancel();
    members_.erase(it);
  }
  scripts_.run(log_script(), {key_}, group_args("leave", member), options_.call_timeout,
               [this, alive = alive_](KvStatus status, const redisReply*) {
                 if (*alive && status != KvStatus::ok) ++failures_;
               });
}

void RedisLog::commit(MemberId member, std::uint64_t generation, std::uint32_t partition, std::uint64_t offset) {
  RELAYSIM_ASSERT(partition < options_.partitions, "a partition of the log");
  std::vector<std::string> args = group_args("commit", member);
  args.push_back(std::to_string(generation));
  args.push_back(std::to_string(partition));
  args.push_back(std::to_string(offset));
  scripts_.run(log_script(), {key_}, std::move(args), options_.call_timeout,
               [this, alive = alive_, member, partition, offset](KvStatus status, const redisReply* reply) {
                 if (!*alive) return;
                 if (status != KvStatus::ok) {
                   ++failures_;
                 } else if (truth_ != nullptr && reply->type == REDIS_REPLY_INTEGER) {
                   // 1: the member still owned the partition in its generation, and the offset
                   // moved (or stayed, if a larger one was committed before); 0: refused.
                   truth_->emit(sim::outbox::GroupCommitted{partition, offset, member, reply->integer == 1, clock_.now()});
                 }
               });
}

void RedisLog::poll(MemberId member, std::uint32_t max_records, Duration wait, PollCallback done) {
  RELAYSIM_ASSERT(max_records > 0 && static_cast<bool>(done), "a poll asks for a record or more and has someone to answer");
  Member& m = members_[member];
  RELAYSIM_ASSERT(!m.done, "one poll at a time per member");
  m.done = std::move(done);
  m.max = max_records;
  m.deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait);
  ask(member);
}

void RedisLog::ask(MemberId member) {
  const Member& m = members_.at(member);
  std::vector<std::string> args = group_args("poll", member);
  args.push_back(std::to_string(pod_));
  args.push_back(std::to_string(m.max));
  args.push_back(std::to_string(m.generation));
  for (const auto& [partition, next] : m.next) {
    args.push_back(std::to_string(partition));
    args.push_back(std::to_string(next));
  }
  scripts_.run(log_script(), {key_}, std::move(args), options_.call_timeout,
               [this, alive = alive_, member](KvStatus status, const redisReply* reply) {
                 if (*alive) polled(member, status, reply);
               });
}

void RedisLog::polled(MemberId member, KvStatus status, const redisReply* reply) {
  const auto it = members_.find(member);
  if (it == members_.end() || !it->second.done) return;  // it left meanwhile
  Member& m = it->second;
  deliveries_.clear();
  bool evicted = false;
  if (status == KvStatus::ok && reply->type == REDIS_REPLY_ARRAY && reply->elements >= 2 && (reply->elements - 2) % 3 == 0 &&
      reply->element[0]->type == REDIS_REPLY_INTEGER && reply->element[1]->type == REDIS_REPLY_INTEGER) {
    const auto generation = static_cast<std::uint64_t>(reply->element[0]->integer);
    if (generation != m.generation) m.next.clear();  // a rebalance: read from the committed offsets
    m.generation = generation;
    evicted = reply->element[1]->integer == 1;
    for (std::size_t i = 2; i + 2 < reply->elements; i += 3) {
      const redisReply& p = *reply->element[i];
      const redisReply& o = *reply->element[i + 1];
      const redisReply& r = *reply->element[i + 2];
      std::optional<Record> record;
      if (p.type == REDIS_REPLY_INTEGER && o.type == REDIS_REPLY_INTEGER && r.type == REDIS_REPLY_STRING &&
          p.integer >= 0 && static_cast<std::uint64_t>(p.integer) < options_.partitions && o.integer >= 0) {
        record = record_of(text_of(r));
      }
      if (!record) {
        ++failures_;  // an entry no relay wrote: skipped
        continue;
      }
      deliveries_.push_back(Delivery{static_cast<std::uint32_t>(p.integer), static_cast<std::uint64_t>(o.integer), *record});
      m.next[deliveries_.back().partition] = deliveries_.back().offset + 1;
    }
    if (!evicted && !m.beating) {
      m.beating = true;
      beat(member);
    }
  } else {
    ++failures_;
  }
  if (evicted || !deliveries_.empty() || std::chrono::steady_clock::now() >= m.deadline) return answer(member, evicted);
  // Nothing yet: ask again soon, within the poll's wait.
  if (!m.retry) m.retry = std::make_unique<asio::steady_timer>(io_);
  m.retry->expires_at(std::min(m.deadline, std::chrono::steady_clock::now() +
                                               std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_.poll_retry)));
  m.retry->async_wait([this, alive = alive_, member](const boost::system::error_code& ec) {
    if (ec || !*alive || members_.count(member) == 0) return;
    ask(member);
  });
}

void RedisLog::answer(MemberId member, bool evicted) {
  Member& m = members_.at(member);
  PollCallback done = std::move(m.done);
  m.done = {};
  if (evicted) {
    m.beating = false;
    if (m.heartbeat) m.heartbeat->cancel();
  }
  done(Poll{m.generation, evicted, deliveries_});
  deliveries_.clear();
}

void RedisLog::beat(MemberId member) {
  Member& m = members_.at(member);
  if (!m.heartbeat) m.heartbeat = std::make_unique<asio::steady_timer>(io_);
  m.heartbeat->expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_.session_timeout / 3));
  m.heartbeat->async_wait([this, alive = alive_, member](const boost::system::error_code& ec) {
    if (ec || !*alive) return;
    const auto it = members_.find(member);
    if (it == members_.end() || !it->second.beating) return;
    scripts_.run(log_script(), {key_}, group_args("heartbeat", member), options_.call_timeout,
                 [this, alive, member](KvStatus status, const redisReply* reply) {
                   if (!*alive) return;
                   const auto x = members_.find(member);
                   if (x == members_.end()) return;
                   if (status != KvStatus::ok) ++failures_;
                   // Not a member (any more): the next poll says so; until then, no heartbeat.
                   x->second.beating = status != KvStatus::ok || (reply->type == REDIS_REPLY_INTEGER && reply->integer == 1);
                   if (x->second.beating) beat(member);
                 });
  });
}

}  // namespace relaysim::live::outbox
