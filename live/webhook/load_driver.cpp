#include "live/webhook/load_driver.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "model/core/assert.h"
#include "sim/webhook/spec.h"

namespace relaysim::live::webhook {

namespace sw = relaysim::sim::webhook;

LoadDriver::LoadDriver(boost::asio::io_context& io, const sim::Scenario& scenario, std::vector<std::string> targets,
                       std::string key, const std::string& calls, Time started,
                       std::function<void(std::uint64_t calls)> done)
    : started_(started),
      until_(kTimeZero + scenario.duration),
      targets_(std::move(targets)),
      authorization_("Bearer " + std::move(key)),
      // Serve listens on loopback; the driver's calls carry no tenant's URL.
      caller_(io, AddressPolicy{true, true, false}),
      load_(sw::spec_of(scenario).load, sw::spec_of(scenario).cxid_count(), scenario.seed,
            [this](const sw::ClientKey& k, std::string_view cxid, std::string_view request_id, std::string_view payload) {
              send(k, cxid, request_id, payload);
            }),
      timer_(io),
      calls_(calls, std::ios::out | std::ios::trunc),
      done_(std::move(done)) {
  if (targets_.empty()) throw std::invalid_argument("--drive: no serve to call");
  for (std::string& t : targets_) {
    while (!t.empty() && t.back() == '/') t.pop_back();
  }
  if (!calls_) throw std::invalid_argument("--calls: cannot open " + calls + " for writing");
  load_.install(kernel_);
}

void LoadDriver::tick() {
  const Time now = kTimeZero + (clock_.now() - started_);
  kernel_.run_until(std::min(now, until_));
  // Over at the scenario's end, or once its segments have made their last call.
  if (now >= until_ || kernel_.pending() == 0) {
    load_over_ = true;
    finish_if_done();
    return;
  }
  timer_.expires_after(kTick);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) tick();
  });
}

void LoadDriver::send(const sw::ClientKey& key, std::string_view cxid, std::string_view request_id, std::string_view payload) {
  nlohmann::json call{{"cxid", cxid}, {"request_id", request_id}, {"key", key.request},
                      {"payload", nlohmann::json::parse(payload)}};
  const std::string body =
      nlohmann::json{{"cxid", cxid}, {"request_id", request_id}, {"payload", call["payload"]}}.dump();
  const std::string url = targets_[sent_ % targets_.size()] + "/v1/webhooks";
  ++sent_;
  call["sent_ns"] = to_ns(clock_.now());
  const OutgoingHeader headers[] = {{"Authorization", authorization_}, {"Content-Type", "application/json"}};
  caller_.call("POST", url, headers, body, std::chrono::seconds(30),
               [this, call = std::move(call)](HttpReply&& reply) mutable {
                 call["answered_ns"] = to_ns(clock_.now());
                 call["status"] = reply.error == NetError::none ? reply.status : 0;
                 const nlohmann::json answer = nlohmann::json::parse(reply.body, nullptr, false);
                 const bool has = answer.is_object();
                 call["id"] = has && answer.contains("id") ? answer["id"] : nlohmann::json(nullptr);
                 call["duplicate"] = has && answer.contains("duplicate") && answer["duplicate"].is_boolean() &&
                                     answer["duplicate"].get<bool>();
                 calls_ << call.dump() << '\n';
                 ++answered_;
                 finish_if_done();
               });
}

void LoadDriver::finish_if_done() {
  if (!load_over_ || answered_ < sent_ || !done_) return;
  calls_.flush();
  auto done = std::move(done_);
  done_ = nullptr;
  done(sent_);
}

}  // namespace relaysim::live::webhook
