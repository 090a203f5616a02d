#!/usr/bin/env python3
"""Prints the performance figures and their targets from a relaysim_bench JSON file, plus the
SimPy comparison's and the whole-scenario runs' JSON (bench/day_run.py) when given. With
repetitions, the median of each figure is used.

  bench/summarize.py BENCH.json [SIMPY.json [RUN.json ...]]
"""
import json
import sys


def load(path):
    with open(path) as f:
        data = json.load(f)
    figures = {}
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") != "median":
                continue
        elif any(x.get("run_name") == name and x.get("run_type") == "aggregate" for x in data["benchmarks"]):
            continue  # a single repetition; its median is reported instead
        figures[name.split("/min_time")[0].split("/iterations")[0].split("/repeats")[0]] = b
    return data.get("context", {}), figures


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    context, f = load(sys.argv[1])
    def optional(i):
        if len(sys.argv) <= i:
            return None
        with open(sys.argv[i]) as extra:
            return json.load(extra)

    simpy = optional(2)
    runs = [optional(i) for i in range(3, len(sys.argv))]
    day = next((r for r in runs if r["file"].endswith("flaky-endpoints-1k-24h.yaml")), None)
    rows = []

    def row(figure, value, unit, target=None, ok=None):
        rows.append((figure, value, unit, target or "", "" if ok is None else ("met" if ok else "MISSED")))

    def get(name, counter):
        b = f.get(name)
        return None if b is None or counter not in b else b[counter]

    for n in (100, 10000, 1000000):
        v = get(f"kernel/hold/{n}", "events_per_s")
        if v is not None:
            row(f"kernel hold model, {n:,} pending", f"{v:,.0f}", "events/s")
    # The radix buckets against a 4-ary heap at every size, each pair from the same run: the kernel
    # against itself on the heap (the kernel before the buckets and their look-ahead), and the
    # event queue alone. No target at 100: there the queue never leaves its heap, and both rows
    # run the same code.
    for prefix, fast, slow, what in (("kernel hold", "kernel/hold/{}", "kernel/hold/heap_only/{}",
                                      "kernel / kernel on a 4-ary heap only"),
                                     ("event queue hold", "event_queue/hold/buckets/{}", "event_queue/hold/heap_only/{}",
                                      "with buckets / 4-ary heap only")):
        for n, target in ((100, None), (10000, None), (1000000, 3.0)):
            b, h = get(fast.format(n), "events_per_s"), get(slow.format(n), "events_per_s")
            if b and h:
                row(f"{prefix}, {n:,} pending: {what}", f"{b / h:.2f}", "ratio",
                    None if target is None else f">= {target}", None if target is None else b / h >= target)
    k, h = get("mmc/kernel", "customers_per_s"), get("mmc/hand_written_loop", "customers_per_s")
    if k and h:
        row("M/M/c through the kernel", f"{k:,.0f}", "customers/s")
        row("M/M/c hand-written priority_queue loop", f"{h:,.0f}", "customers/s")
        row("M/M/c kernel / hand-written loop", f"{k / h:.2f}", "ratio", ">= 0.5", k / h >= 0.5)
        row("M/M/c mean wait (kernel | Erlang C)",
            f"{get('mmc/kernel', 'mean_wait_s'):.4f} | {get('mmc/kernel', 'erlang_c_wait_s'):.4f}", "s")
    if simpy:
        row("M/M/c SimPy", f"{simpy['simpy']['customers_per_second']:,.0f}", "customers/s")
        row("M/M/c relaysim / SimPy", f"{simpy['ratio']:.0f}", "ratio", ">= 50", simpy["ratio"] >= 50)
        row("M/M/c mean wait (SimPy | relaysim | Erlang C)",
            f"{simpy['simpy']['mean_wait_s']:.4f} | {simpy['relaysim']['mean_wait_s']:.4f} | {simpy['erlang_c_wait_s']:.4f}", "s")
    targets = {("healthy", "memory"): 1_000_000, ("healthy", "sqlite"): 50_000}
    for scenario in ("healthy", "faulty"):
        for store in ("memory", "sqlite"):
            v = get(f"pipeline/{scenario}/{store}", "requests_per_s")
            if v is None:
                continue
            t = targets.get((scenario, store))
            row(f"pipeline, {scenario} scenario, {store} store", f"{v:,.0f}", "requests/s",
                f">= {t:,}" if t else None, v >= t if t else None)
    # The day-long scenario's first minutes, extrapolated: the only figure for its target in
    # --quick mode (no day.json); beside the real run's, a check on the estimate.
    v, est, n = (get("pipeline/day/memory", c) for c in ("requests_per_s", "full_run_s_estimate", "requests"))
    if v is not None and est is not None:
        row("pipeline, flaky-endpoints-1k-24h.yaml cut short, memory store", f"{v:,.0f}", "requests/s")
        row(f"flaky-endpoints-1k-24h.yaml: estimated from its first {n:,.0f} requests", f"{est:.0f}", "s wall",
            "<= 180" if not day else None, est <= 180 if not day else None)
    # Whole scenarios run by bench/day_run.py: the longest wall time each may take, and memory.
    run_targets = {"flaky-endpoints-1k-24h.yaml": 180, "capacity-serviceb-45m.yaml": 60}
    for run in runs:
        name = run["file"].rsplit("/", 1)[-1]
        most = run_targets.get(name)
        row(f"{name}: {int(run['requests']):,} requests ({run['verdict']})", f"{run['wall_seconds']:.0f}", "s wall",
            f"<= {most}" if most else None, run["wall_seconds"] <= most and run["verdict"] == "pass" if most else None)
        if "steal_share" in run:
            row(f"{name}: CPU time stolen by the hypervisor", f"{100 * run['steal_share']:.0f}", "%")
        gib = run["peak_rss_bytes"] / 2**30
        row(f"{name}: peak memory", f"{gib:.2f}", "GiB", "<= 4", gib <= 4)
    v = get("memory/bytes_per_pending_request/1000000", "bytes_per_pending")
    if v is not None:
        row("in-memory store, backlog of 1,000,000", f"{v:.0f}", "bytes/pending request", "<= 256", v <= 256)
    sms_targets = {"memory": 500_000, "sqlite": 50_000}
    for store in ("memory", "sqlite"):
        v = get(f"sms/healthy/{store}", "messages_per_s")
        if v is not None:
            row(f"SMS gateway, sms-quickstart's load, {store} store", f"{v:,.0f}", "messages/s",
                f">= {sms_targets[store]:,}", v >= sms_targets[store])
    b = f.get("sms/campaign/memory")
    if b is not None and "real_time" in b:
        seconds = b["real_time"] * {"s": 1, "ms": 1e-3}.get(b.get("time_unit", "s"), 1)
        row(f"sms-marketing-campaign: {b.get('messages', 0):,.0f} messages", f"{seconds:.1f}", "s wall", "< 30",
            seconds < 30)
    for n in (1000000, 200000):
        v = get(f"memory/bytes_per_pending_message/{n}", "bytes_per_pending")
        if v is not None:
            row(f"SMS in-memory store, backlog of {n:,}", f"{v:.0f}", "bytes/pending message", "<= 256", v <= 256)
    outbox_targets = {"memory": 500_000, "sqlite": 30_000}
    for store in ("memory", "sqlite"):
        v = get(f"outbox/healthy/{store}", "messages_per_s")
        if v is not None:
            row(f"outbox relay, outbox-quickstart's load, {store} store", f"{v:,.0f}", "messages/s",
                f">= {outbox_targets[store]:,}", v >= outbox_targets[store])
    for n in (1000000, 200000):
        v = get(f"memory/bytes_per_outbox_row/{n}", "bytes_per_pending")
        if v is not None:
            row(f"outbox in-memory store, backlog of {n:,}", f"{v:.0f}", "bytes/pending row")
    b = f.get("planning/timeseries_overhead")
    if b is not None and "overhead" in b:
        v = b["overhead"]
        row("time series and records of a run (healthy, a row a minute)", f"{100 * v:+.1f}", "% wall time", "<= +10",
            v <= 0.10)
    b = f.get("planning/sweep_efficiency")
    if b is not None and "efficiency" in b:
        v = b["efficiency"]
        row(f"sweep of {b.get('runs', 0):,.0f} short runs on {b.get('cores', 0):.0f} cores", f"{100 * v:.0f}",
            "% parallel efficiency", ">= 90", v >= 0.90)
    for store in ("memory", "sqlite"):
        for op in ("create", "claim", "complete"):
            v = get(f"store/{store}/{op}", "items_per_second")
            if v is not None:
                row(f"store {store}: {op}", f"{v:,.0f}", "ops/s")
    for what in ("breaker", "limiter"):
        v = get(f"resilience/{what}", "decisions_per_s")
        if v is not None:
            row(f"{what} decisions", f"{v:,.0f}", "decisions/s")

    cpus = context.get("num_cpus", "?")
    print(f"relaysim performance ({cpus} CPUs at {context.get('mhz_per_cpu', '?')} MHz, {context.get('date', '')})")
    w = [max(len(str(r[i])) for r in rows) for i in range(5)]
    for r in rows:
        print(f"  {r[0]:<{w[0]}}  {r[1]:>{w[1]}}  {r[2]:<{w[2]}}  {r[3]:<{w[3]}}  {r[4]}")
    missed = [r[0] for r in rows if r[4] == "MISSED"]
    print(f"targets: {sum(1 for r in rows if r[4] == 'met')} met, {len(missed)} missed")
    errors = [name for name, b in f.items() if b.get("error_occurred")]
    for name in errors:
        print(f"error: benchmark {name} failed: {f[name].get('error_message', '?')}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
