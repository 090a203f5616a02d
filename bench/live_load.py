#!/usr/bin/env python3
"""The live service under load, on loopback: acknowledged ingests per second and their latency
with synchronous=FULL and NORMAL (and NORMAL with the event log `relaysim judge` reads), deliveries per second to a fast local endpoint while ingesting and
from a backlog, next to the simulator's SQLite store figure (relaysim_bench's store/sqlite/create)
from the same sitting.

    live_load.py BUILD_DIR [--seconds 10] [--clients 16]

Clients are processes, each with one keep-alive connection, sending creates back to back. The
ingest latency is the client's (request written to answer read); deliveries per second is the
growth of relaysim_requests{status="delivered"} over the window. The backlog is built by a process
whose ServiceB never answers (so it holds back all but one request) and delivered by a second
process sharing the database. A benchmark, not a test: it
judges nothing. reports/performance.md keeps its figures.
"""
import argparse
import http.client
import json
import multiprocessing
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_line(process):
    line = process.stdout.readline()
    if not line:
        sys.exit(f"live_load: a process did not start: {process.stderr.read()}")
    return line


def client(port, seconds, index, out):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    latencies = []
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        body = json.dumps({"cxid": f"cx{(index * 7919 + n) % 1000}", "request_id": f"load-{index}-{n}",
                           "payload": {"n": n, "order": "A-1001", "amount": 42}})
        began = time.perf_counter()
        conn.request("POST", "/v1/webhooks", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        latencies.append(time.perf_counter() - began)
        if response.status != 202:
            sys.exit(f"live_load: a create answered {response.status}")
        n += 1
    out.put(latencies)


def delivered(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    return float(re.search(r'^relaysim_requests\{status="delivered"\} (\S+)$', text, re.M).group(1))


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def start_serve(relaysim, tmp, world_port, durability, concurrency, pod=1, platform="", events=False):
    port = free_port()
    config = os.path.join(tmp, f"serve-{pod}.yaml")
    with open(config, "w") as f:
        f.write(f"""serve:
  listen: 127.0.0.1:{port}
  database: {os.path.join(tmp, 'load.db')}
  durability: {durability}
  serviceb: http://127.0.0.1:{world_port}/serviceb
  allow_addresses: [loopback]
  pod: {pod}
platform:
  concurrency_per_pod: {concurrency}
{platform}""")
    log = ["--events", os.path.join(tmp, f"events-{pod}.jsonl")] if events else []
    serve = subprocess.Popen([relaysim, "serve", config] + log, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first_line(serve)
    return serve, port


def ingest(port, seconds, clients):
    """Creates from `clients` processes for `seconds`: (latencies, wall time)."""
    out = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=client, args=(port, seconds, i, out)) for i in range(clients)]
    began = time.time()
    for w in workers:
        w.start()
    latencies = []
    for _ in workers:
        latencies += out.get()
    for w in workers:
        w.join()
    return sorted(latencies), time.time() - began


def stop(serve):
    serve.send_signal(signal.SIGTERM)
    serve.wait(timeout=60)


def run(relaysim, world_port, durability, seconds, clients, events=False):
    tmp = tempfile.mkdtemp(prefix="relaysim-load-")
    serve, port = start_serve(relaysim, tmp, world_port, durability, 64, events=events)
    before = delivered(port)
    latencies, took = ingest(port, seconds, clients)
    after = delivered(port)
    stop(serve)
    return {"durability": durability, "events": events, "acks": len(latencies), "acks_per_s": len(latencies) / took,
            "p50_ms": percentile(latencies, 0.5) * 1e3, "p99_ms": percentile(latencies, 0.99) * 1e3,
            "delivered_per_s": (after - before) / took}


def status_count(port, status):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    return float(re.search(r'^relaysim_requests\{status="' + status + r'"\} (\S+)$', text, re.M).group(1))


def drain(relaysim, world_port, stuck_port, seconds, clients):
    """The dispatcher's own rate: a backlog is built by a process whose ServiceB never answers (it
    touches one request at a time), then a second process on the same database delivers it."""
    tmp = tempfile.mkdtemp(prefix="relaysim-drain-")
    builder, port = start_serve(relaysim, tmp, stuck_port, "normal", 1, 1, "  lookup_timeout: 1s\n")
    latencies, took_in = ingest(port, seconds, clients)
    stop(builder)
    serve, port = start_serve(relaysim, tmp, world_port, "normal", 64, 2)
    backlog = status_count(port, "pending")
    began = time.time()
    done = 0.0
    while time.time() - began < 300:
        done = delivered(port)
        if done >= backlog:
            break
        time.sleep(0.02)
    took = time.time() - began
    stop(serve)
    return {"backlog": backlog, "delivered": done, "seconds": took, "per_s": done / took,
            "ingest_per_s": len(latencies) / took_in, "ingest_p99_ms": percentile(latencies, 0.99) * 1e3}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    relaysim = os.path.join(args.build, "relaysim")
    bench = os.path.join(args.build, "relaysim_bench")
    simulated = subprocess.run([bench, "--benchmark_filter=^store/sqlite/create", "--benchmark_format=json"],
                               capture_output=True, text=True, check=True)
    creates = json.loads(simulated.stdout)["benchmarks"][0]["items_per_second"]
    world = subprocess.Popen([relaysim, "world", os.path.join(HERE, "scenarios", "live-fast-world.yaml"), "--listen",
                              "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    world_port = re.search(r"on http://127\.0\.0\.1:(\d+)", first_line(world)).group(1)
    rows = [run(relaysim, world_port, d, args.seconds, args.clients, events) for d, events in
            (("full", False), ("normal", False), ("normal", True))]
    stuck = subprocess.Popen([relaysim, "world", os.path.join(HERE, "scenarios", "live-stuck-serviceb.yaml"), "--listen",
                              "127.0.0.1:0", "--hold", "2s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stuck_port = re.search(r"on http://127\.0\.0\.1:(\d+)", first_line(stuck)).group(1)
    backlog = drain(relaysim, world_port, stuck_port, args.seconds, args.clients)
    for w in (world, stuck):
        w.send_signal(signal.SIGTERM)
        w.wait(timeout=10)
    print(f"{args.clients} clients, {args.seconds:g} s each, one serve process, loopback")
    print(f"{'':34} {'acks/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'delivered/s':>12}")
    for r in rows:
        print(f"live, synchronous={r['durability'].upper():6} {'--events' if r['events'] else '':14} {r['acks_per_s']:9.0f} {r['p50_ms']:8.2f} "
              f"{r['p99_ms']:8.2f} {r['delivered_per_s']:12.0f}")
    print(f"simulator's SQLite store, create (in memory, no sync) {creates:9.0f}")
    print(f"live, synchronous=NORMAL, nothing delivered meanwhile {backlog['ingest_per_s']:9.0f} {'':8} "
          f"{backlog['ingest_p99_ms']:8.2f}")
    print(f"a backlog of {backlog['backlog']:.0f} pending requests, delivered by one serve process (64 at once): "
          f"{backlog['delivered']:.0f} in {backlog['seconds']:.2f} s = {backlog['per_s']:.0f} deliveries/s")


if __name__ == "__main__":
    main()
