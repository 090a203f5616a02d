#include "live/outbox/world.h"

#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include <stdexcept>

#include "live/json_api.h"
#include "live/outbox/api.h"
#include "model/core/assert.h"
#include "sim/outbox/spec.h"

namespace relaysim::live::outbox {

namespace {

using Fates = sim::outbox::DownstreamFates;
using Fate = Fates::Fate;

const sim::outbox::OutboxSpec& outbox_spec(const sim::Scenario& s) {
  const auto* spec = dynamic_cast<const sim::outbox::OutboxSpec*>(&s.spec());
  if (spec == nullptr) throw std::invalid_argument("not an outbox scenario");
  return *spec;
}

}  // namespace

OutboxWorldServer::OutboxWorldServer(boost::asio::io_context& io, const sim::Scenario& scenario,
                                     OutboxWorldOptions options)
    : io_(io),
      options_(std::move(options)),
      started_(clock_.now()),
      fates_(outbox_spec(scenario).downstream, scenario.seed),
      store_(options_.effects, Durability::full) {
  if (!options_.receipts.empty()) {
    receipts_.open(options_.receipts, std::ios::out | std::ios::app);
    if (!receipts_) throw std::invalid_argument("--receipts: cannot open " + options_.receipts + " for writing");
    receipts_ << dump_json(nlohmann::json{{"world", {{"scenario", scenario.name}, {"seed", scenario.seed},
                                                     {"system", "outbox"}, {"started_ns", to_ns(started_)}}}});
    receipts_.flush();
  }
  server_ = std::make_unique<HttpServer>(io, listen_endpoint(options_.listen, "--listen"),
                                         [this](const Incoming& in, Respond respond) { handle(in, std::move(respond)); });
}

OutboxWorldServer::~OutboxWorldServer() = default;

void OutboxWorldServer::handle(const Incoming& in, Respond respond) {
  const std::string_view path = in.target.substr(0, in.target.find('?'));
  if (path == "/healthz") return respond(json_response(200, nlohmann::json{{"status", "ok"}}));
  if (path == "/downstream") {
    if (in.method != "POST") return respond(method_not_allowed("POST"));
    return downstream(in, std::move(respond));
  }
  respond(error_response(404, "no such resource in this world: " + std::string(path).substr(0, 200)));
}

void OutboxWorldServer::downstream(const Incoming& in, Respond respond) {
  std::string problem;
  const std::optional<relaysim::outbox::Record> record = read_record_body(in.body, options_.platform, problem);
  if (!record) return respond(error_response(400, "not a record the relay sends (docs/live.md): " + problem));
  const Time now = kTimeZero + (clock_.now() - started_);
  const sim::outbox::DownstreamFates::Decision d = fates_.decide(now, options_.platform.handle_timeout);
  ++handlings_;
  if (d.arrives()) {
    run_after(io_, d.arrives_in, [this, r = *record, fate = d.fate] {
      const Time at = kTimeZero + (clock_.now() - started_);
      const std::uint64_t before = store_.effects_committed();
      const relaysim::outbox::Applied a = relaysim::outbox::apply_once(
          store_, relaysim::outbox::Effect{r.ref(), r.key, r.version, r.attempt, clock_.now()},
          [fate] { return fate == Fate::die; });
      if (!receipts_.is_open()) return;
      receipts_ << dump_json(nlohmann::json{{"at_ns", to_ns(at)},
                                            {"shard", r.shard},
                                            {"id", r.id},
                                            {"attempt", r.attempt},
                                            {"key", r.key},
                                            {"version", r.version},
                                            {"fence", r.fence},
                                            {"fate", Fates::kFateNames[fate]},
                                            {"inbox", to_string(a)},
                                            {"applied", store_.effects_committed() - before}});
      receipts_.flush();
    });
  } else if (receipts_.is_open()) {
    receipts_ << dump_json(nlohmann::json{{"at_ns", to_ns(now)}, {"shard", record->shard}, {"id", record->id},
                                          {"attempt", record->attempt}, {"fate", Fates::kFateNames[d.fate]}});
    receipts_.flush();
  }
  using relaysim::outbox::Handled;
  switch (d.answer) {
    case Handled::done:
      return run_after(io_, d.answer_in, [respond = std::move(respond)]() mutable {
        respond(json_response(200, nlohmann::json{{"handled", true}}));
      });
    case Handled::failed:
      return run_after(io_, d.answer_in, [respond = std::move(respond)]() mutable {
        respond(error_response(503, "the downstream failed: nothing was applied; try again"));
      });
    case Handled::rejected:
      return run_after(io_, d.answer_in, [respond = std::move(respond)]() mutable {
        respond(error_response(422, "the downstream rejects this message for good"));
      });
    case Handled::timeout: break;
  }
  // No answer: the consumer's own timeout ends its wait; the connection is closed after `hold`.
  run_after(io_, std::max(options_.hold, d.answer_in), [respond = std::move(respond)]() mutable {
    Response dropped;
    dropped.drop = true;
    respond(std::move(dropped));
  });
}

}  // namespace relaysim::live::outbox
