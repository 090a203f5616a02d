// Fakes for driving the live SMS gateway's API in one process, with no sockets and no time
// passing by itself: the API unit tests (tests/live/sms_api_test.cpp) and the fuzz target
// (tests/fuzz/sms_api_fuzz.cpp) share them.
#pragma once

#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include "model/core/ports.h"
#include "model/resilience/kv.h"
#include "model/sms/ports.h"

namespace relaysim::live::sms::testing {

// Timers that never fire: a test moves time by hand, and nothing is due by itself.
class StillTimers final : public Timers {
 public:
  TimerId schedule_at(Time, TimerCallback) override { return TimerId{++next_}; }
  void cancel(TimerId) override {}

 private:
  std::uint64_t next_ = 0;
};

// Providers whose answers wait until answer_all() gives them all `outcome` (never inline).
class HeldProviders final : public relaysim::sms::Providers {
 public:
  std::size_t count() const override { return 2; }
  void submit(relaysim::sms::ProviderId, const relaysim::sms::Submit&, Duration, relaysim::sms::SubmitCallback done) override {
    pending.push_back(std::move(done));
  }
  void answer_all(relaysim::sms::SubmitClass outcome = relaysim::sms::SubmitClass::accepted) {
    while (!pending.empty()) {
      relaysim::sms::SubmitCallback done = std::move(pending.back());
      pending.pop_back();
      done(outcome);
    }
  }
  std::vector<relaysim::sms::SubmitCallback> pending;
};

// A key-value store no call may reach: no shared limit is configured.
class NoLimits final : public KeyValue {
 public:
  void limit(std::string_view, const LimiterSpec&, LimitOp, std::uint32_t, std::uint64_t, Duration,
             LimitCallback) override {
    std::abort();
  }
};

}  // namespace relaysim::live::sms::testing
