// LoadDriver: `relaysim world --drive` — the scenario's own clients (sim/webhook/load.h: the same
// arrivals, keys, duplicates and conflicts, from the same seed) calling serve's API on the wall
// clock, on the world's time, so that a live run meets the load its simulated twin meets.
//
// Each call is POST /v1/webhooks with the admin key, to the serve processes in turn, and is
// written when answered as one JSON line of the client calls `relaysim judge` reads (docs/live.md):
// the key's number, cxid, request_id, payload, when it was sent and answered, the status, the id
// and whether it was a duplicate. A call is not retried: a refused or unanswered one is recorded
// as such, as the simulator's clients record a call no pod took.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "live/clock.h"
#include "live/http_call.h"
#include "sim/kernel/kernel.h"
#include "sim/scenario/scenario.h"
#include "sim/webhook/load.h"

namespace relaysim::live::webhook {

class LoadDriver {
 public:
  // `targets`: serve's base URLs (http://127.0.0.1:8080); `started`: the world's start on the live
  // clock (its time zero); `done` runs once every call the scenario's load makes (up to its
  // duration, or its segments' end) has been answered. Throws std::invalid_argument when `calls` cannot be written.
  LoadDriver(boost::asio::io_context& io, const sim::Scenario& scenario, std::vector<std::string> targets, std::string key,
             const std::string& calls, Time started, std::function<void(std::uint64_t calls)> done);
  LoadDriver(const LoadDriver&) = delete;
  LoadDriver& operator=(const LoadDriver&) = delete;

  void start() { tick(); }

 private:
  // How often the driver runs the load's kernel up to the wall clock: arrivals are sent within
  // this of their time (the platform's own clock times each request from its arrival).
  static constexpr Duration kTick = std::chrono::milliseconds(2);

  void tick();
  void send(const sim::webhook::ClientKey& key, std::string_view cxid, std::string_view request_id, std::string_view payload);
  void finish_if_done();

  LiveClock clock_;
  Time started_;
  Time until_;  // the scenario's duration, on the world's time
  std::vector<std::string> targets_;
  std::string authorization_;
  HttpCaller caller_;
  sim::Kernel kernel_;
  sim::webhook::LoadGenerator load_;
  boost::asio::steady_timer timer_;
  std::ofstream calls_;
  std::function<void(std::uint64_t)> done_;
  std::uint64_t sent_ = 0;
  std::uint64_t answered_ = 0;
  bool load_over_ = false;
};

}  // namespace relaysim::live::webhook
