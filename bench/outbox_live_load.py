#!/usr/bin/env python3
"""The outbox relay live under load, on loopback: business operations per second through
`POST /v1/orders` and their latency, and messages relayed per second (published, consumed,
handled by the downstream, finished in their shard), on the servers the end-to-end test starts
(tests/live/outbox_e2e.py: a private PostgreSQL cluster with a database per shard, etcd, Redis
with fsync always, the world of outbox-quickstart, two pods).

    outbox_live_load.py RELAYSIM [--seconds 10] [--clients 8] [--ordering per_key|none]

Clients are processes, each with one keep-alive connection to one of the pods in turn, sending
operations back to back (one message each, none rolled back). Operations per second counts the
201 answers over the window; messages relayed per second is the growth of the handled messages
in the shards over the same window, and again over the drain of the backlog once the clients
stop. The shipped file's `ordering: per_key` handles one record of a partition at a time (12
partitions: at most 12 handlings at once); `--ordering none` lets every consumer slot work.
PostgreSQL runs with fsync off here (as in the tests), so a commit costs no disk flush.
A benchmark, not a test: it judges nothing. reports/performance.md keeps its figures."""
import argparse
import http.client
import json
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "live"))
import outbox_e2e  # noqa: E402


def client(port, seconds, first_key, out):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    latencies = []
    key = first_key
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        key += 1
        body = json.dumps({"key": key % 100_000})
        started = time.monotonic()
        conn.request("POST", "/v1/orders", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        if response.status == 201:
            latencies.append(time.monotonic() - started)
    out.put(latencies)


def handled(run):
    return outbox_e2e.statuses(run.pg).get(2, 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("relaysim")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--ordering", choices=("per_key", "none"), default="per_key")
    args = parser.parse_args()
    outbox_e2e.RELAYSIM = os.path.abspath(args.relaysim)
    run = outbox_e2e.Run(outbox_e2e.LEASE_S, outbox_e2e.SESSION_S,
                         changes=(("ordering: per_key", f"ordering: {args.ordering}"),))
    out = multiprocessing.Queue()
    before = handled(run)
    started = time.monotonic()
    workers = [multiprocessing.Process(target=client, args=(run.ports[1 + i % 2], args.seconds, i * 1_000_000, out))
               for i in range(args.clients)]
    for w in workers:
        w.start()
    latencies = []
    for _ in workers:
        latencies += out.get()
    for w in workers:
        w.join()
    window = time.monotonic() - started
    during = handled(run) - before
    committed = len(latencies)
    drain_started = time.monotonic()
    counts = outbox_e2e.wait_for("the backlog to drain", lambda: run.all_final(before + committed), timeout=600)
    drained = time.monotonic() - drain_started
    latencies.sort()
    pct = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    backlog = committed - during
    drain = f"{backlog / max(drained, 1e-9):,.0f} messages/s" if backlog >= 100 else "too few to make a rate of"
    print(f"outbox_live_load: ordering {args.ordering}, {args.clients} clients, {window:.1f} s: "
          f"{committed / window:,.0f} operations/s committed (latency p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms); "
          f"{during / window:,.0f} messages/s relayed meanwhile; the backlog of {backlog} drained in {drained:.1f} s "
          f"({drain}); {counts.get(2, 0)} handled, {counts.get(3, 0)} failed", flush=True)
    run.end()


if __name__ == "__main__":
    main()
