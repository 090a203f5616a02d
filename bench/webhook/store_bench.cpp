// The webhook stores' operations per second, on both stores.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "model/webhook/memory_store.h"
#include "model/webhook/sqlite_store.h"
#include "sim/scenario/scenario.h"

namespace relaysim::bench {
namespace {

using namespace relaysim::webhook;

enum class Op { create, claim, complete };

std::unique_ptr<Store> make(sim::StoreKind kind) {
  // The SQLite store as simulations use it (in memory, no fsync): this measures the SQL work.
  if (kind == sim::StoreKind::sqlite) return std::make_unique<SqliteStore>(":memory:", Durability::off);
  return std::make_unique<MemoryStore>();
}

// Each iteration: a fresh store, prepared (untimed) up to the operation, then `n` of it timed.
void BM_StoreOp(benchmark::State& state, sim::StoreKind kind, Op op, std::int64_t n) {
  const Time t = Time{} + std::chrono::seconds(1);
  std::vector<std::string> keys(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) keys[static_cast<std::size_t>(i)] = "r" + std::to_string(i);
  std::vector<ClaimToken> tokens(static_cast<std::size_t>(n));
  AttemptRow attempt;
  attempt.number = 1;
  attempt.resolved_url = "https://endpoint-17.example/hooks/cx17";
  attempt.http_status = 200;
  RequestRow row;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Store> store = make(kind);
    auto create_all = [&] {
      for (std::int64_t i = 0; i < n; ++i) {
        store->create({"cx17", keys[static_cast<std::size_t>(i)], "{\"seq\":1}", t, t + std::chrono::hours(24)});
      }
    };
    auto claim_all = [&] {
      for (std::int64_t i = 0; i < n; ++i) {
        store->claim_due(t, 0, std::chrono::minutes(2), row);
        tokens[row.id - 1] = row.claim_token;
      }
    };
    if (op != Op::create) create_all();
    if (op == Op::complete) claim_all();
    state.ResumeTiming();
    switch (op) {
      case Op::create: create_all(); break;
      case Op::claim: claim_all(); break;
      case Op::complete:
        for (std::int64_t i = 0; i < n; ++i) {
          attempt.request = static_cast<RequestId>(i + 1);
          attempt.claim_token = tokens[static_cast<std::size_t>(i)];  // the attempt was made under this claim
          store->complete(attempt.request, tokens[static_cast<std::size_t>(i)],
                          Completion{&attempt, Status::delivered, Reason::ok, t, t, t, {}});
        }
        break;
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
}

}  // namespace

void register_store_benchmarks() {
  const double min_time = quick() ? 0.05 : 0.5;
  for (const auto& [kind, name] : {std::pair{sim::StoreKind::memory, "memory"}, std::pair{sim::StoreKind::sqlite, "sqlite"}}) {
    const std::int64_t n = kind == sim::StoreKind::memory ? 100'000 : (quick() ? 5'000 : 20'000);
    for (const auto& [op, op_name] : {std::pair{Op::create, "create"}, std::pair{Op::claim, "claim"}, std::pair{Op::complete, "complete"}}) {
      benchmark::RegisterBenchmark((std::string("store/") + name + "/" + op_name).c_str(), BM_StoreOp, kind, op, n)
          ->MinTime(min_time)->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace relaysim::bench
