// judge() of the files a run left and the shards' PostgreSQL databases; apart from the reading
// and replay (judge.cpp), which the fuzz target drives over memory stores without libpq.
#include "live/outbox/judge.h"

#include <memory>

#include "live/outbox/pg_store.h"

namespace relaysim::live::outbox {

Judgement judge(const JudgeInputs& in) {
  const OutboxServeConfig config = read_serve_config(in.config);
  const sim::Scenario scenario = scenario_as_run(in.scenario, config);
  std::vector<std::unique_ptr<PgStore>> stores;
  return judge(scenario, config, in.events, in.receipts, [&] {
    ShardsAtEnd shards;
    for (const std::string& conninfo : config.shards) {
      stores.push_back(std::make_unique<PgStore>(conninfo));
      shards.stores.push_back(stores.back().get());
      shards.rows.push_back(stores.back()->rows());
    }
    return shards;
  });
}

}  // namespace relaysim::live::outbox
