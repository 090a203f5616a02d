#!/usr/bin/env python3
"""The live service under load, on loopback: acknowledged ingests per second and their latency,
with synchronous=FULL and NORMAL, each with group commit off and on, in `--rounds` interleaved
rounds: first while every request is delivered to a fast local endpoint, then with deliveries held
back (ServiceB never answers), which leaves the service to ingest alone. Then NORMAL with the event
log `relaysim judge` reads, and a backlog delivered by one process to fast and to slow endpoints,
with a new connection for each delivery and with connections kept alive; next to the simulator's
SQLite store figure (relaysim_bench's store/sqlite/create) from the same sitting.

    live_load.py BUILD_DIR [--seconds 10] [--clients 16] [--rounds 1] [--busy-disk] [--only-ingest]

Clients are processes, each with one keep-alive connection, sending creates back to back with an
admin key (`relaysim keys CONFIG --admin`, made for each fresh database). The
ingest latency is the client's (request written to answer read); deliveries per second is the
growth of relaysim_requests{status="delivered"} over the window; writes per commit is the mean of
relaysim_commit_writes. `--busy-disk` keeps another process writing and syncing 64 MB files on the
same file system meanwhile, as on a shared machine: each fsync then waits much longer, which is
what group commit amortises. The backlog is built by a process whose ServiceB never answers (so it
holds back all but one request) and delivered by a second process sharing the database. A
benchmark, not a test: it judges nothing. reports/performance.md keeps its figures.
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


# The admin key of the service on each port (start_serve makes one; every call sends it).
KEYS = {}


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers={"Authorization": f"Bearer {KEYS[port]}"})
    return conn.getresponse().read().decode()


def client(port, key, seconds, index, out):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    latencies = []
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        body = json.dumps({"cxid": f"cx{(index * 7919 + n) % 1000}", "request_id": f"load-{index}-{n}",
                           "payload": {"n": n, "order": "A-1001", "amount": 42}})
        began = time.perf_counter()
        conn.request("POST", "/v1/webhooks", body=body,
                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
        response = conn.getresponse()
        response.read()
        latencies.append(time.perf_counter() - began)
        if response.status != 202:
            sys.exit(f"live_load: a create answered {response.status}")
        n += 1
    out.put(latencies)


def delivered(port):
    text = get(port, "/metrics")
    return float(re.search(r'^relaysim_requests\{status="delivered"\} (\S+)$', text, re.M).group(1))


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def start_serve(relaysim, tmp, world_port, durability, concurrency, pod=1, platform="", events=False, group=True,
                keep_alive="1s"):
    port = free_port()
    config = os.path.join(tmp, f"serve-{pod}.yaml")
    with open(config, "w") as f:
        f.write(f"""serve:
  listen: 127.0.0.1:{port}
  database: {os.path.join(tmp, 'load.db')}
  durability: {durability}
  group_commit: {"true" if group else "false"}
  keep_alive: {keep_alive}
  serviceb: http://127.0.0.1:{world_port}/serviceb
  allow_addresses: [loopback]
  pod: {pod}
platform:
  concurrency_per_pod: {concurrency}
{platform}""")
    made = subprocess.run([relaysim, "keys", config, "--admin"], capture_output=True, text=True, check=True)
    KEYS[port] = made.stdout.strip()
    log = ["--events", os.path.join(tmp, f"events-{pod}.jsonl")] if events else []
    serve = subprocess.Popen([relaysim, "serve", config] + log, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first_line(serve)
    return serve, port


def ingest(port, seconds, clients):
    """Creates from `clients` processes for `seconds`: (latencies, wall time)."""
    out = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=client, args=(port, KEYS[port], seconds, i, out)) for i in range(clients)]
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


def commit_writes(port):
    """Writes per commit, from the group commit histogram: nothing when no group committed."""
    text = get(port, "/metrics")
    total = float(re.search(r"^relaysim_commit_writes_sum (\S+)$", text, re.M).group(1))
    count = float(re.search(r"^relaysim_commit_writes_count (\S+)$", text, re.M).group(1))
    return total / count if count else None


def run(relaysim, world_port, durability, seconds, clients, events=False, group=True, stuck=False):
    """`stuck`: ServiceB never answers, so the process holds back all but one request."""
    tmp = tempfile.mkdtemp(prefix="relaysim-load-")
    if stuck:
        serve, port = start_serve(relaysim, tmp, world_port, durability, 1, 1, "  lookup_timeout: 1s\n", group=group)
    else:
        serve, port = start_serve(relaysim, tmp, world_port, durability, 64, events=events, group=group)
    before = delivered(port)
    latencies, took = ingest(port, seconds, clients)
    after = delivered(port)
    per_commit = commit_writes(port)
    stop(serve)
    return {"durability": durability, "events": events, "group": group, "acks": len(latencies),
            "acks_per_s": len(latencies) / took, "p50_ms": percentile(latencies, 0.5) * 1e3,
            "p99_ms": percentile(latencies, 0.99) * 1e3, "delivered_per_s": (after - before) / took,
            "writes_per_commit": per_commit}


def status_count(port, status):
    text = get(port, "/metrics")
    return float(re.search(r'^relaysim_requests\{status="' + status + r'"\} (\S+)$', text, re.M).group(1))


def drain(relaysim, world_port, stuck_port, seconds, clients, keep_alive="1s"):
    """The dispatcher's own rate: a backlog is built by a process whose ServiceB never answers (it
    touches one request at a time), then a second process on the same database delivers it, with
    connections kept alive for `keep_alive` (0s: a new one for each delivery)."""
    tmp = tempfile.mkdtemp(prefix="relaysim-drain-")
    builder, port = start_serve(relaysim, tmp, stuck_port, "normal", 1, 1, "  lookup_timeout: 1s\n")
    ingest(port, seconds, clients)
    stop(builder)
    serve, port = start_serve(relaysim, tmp, world_port, "normal", 64, 2, keep_alive=keep_alive)
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
    return {"backlog": backlog, "delivered": done, "seconds": took, "per_s": done / took}


def busy_disk(directory):
    """Writes and syncs 64 MB files in `directory` until killed: a disk shared with another writer."""
    block = b"\0" * (1 << 20)
    path = os.path.join(directory, "busy.bin")
    while True:
        with open(path, "wb") as f:
            for _ in range(64):
                f.write(block)
            f.flush()
            os.fsync(f.fileno())


def start_world(relaysim, scenario, *extra):
    world = subprocess.Popen([relaysim, "world", os.path.join(HERE, "scenarios", scenario), "--listen", "127.0.0.1:0",
                              *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return world, re.search(r"on http://127\.0\.0\.1:(\d+)", first_line(world)).group(1)


def print_rows(title, rows):
    print(title)
    print(f"{'':46} {'acks/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'delivered/s':>12} {'writes/commit':>14}")
    for r in rows:
        group = "group commit" if r["group"] else "a commit each"
        per_commit = f"{r['writes_per_commit']:14.1f}" if r["writes_per_commit"] else f"{'':14}"
        print(f"live, synchronous={r['durability'].upper():6} {group:13} {'--events' if r['events'] else '':8} "
              f"{r['acks_per_s']:9.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} {r['delivered_per_s']:12.0f} {per_commit}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=1, help="each durability with and without group commit, this often, in turn")
    parser.add_argument("--busy-disk", action="store_true", help="another process writes and syncs meanwhile")
    parser.add_argument("--only-ingest", action="store_true", help="leave out the event log row and the backlog")
    args = parser.parse_args()
    relaysim = os.path.join(args.build, "relaysim")
    bench = os.path.join(args.build, "relaysim_bench")
    simulated = subprocess.run([bench, "--benchmark_filter=^store/sqlite/create", "--benchmark_format=json"],
                               capture_output=True, text=True, check=True)
    creates = json.loads(simulated.stdout)["benchmarks"][0]["items_per_second"]
    world, world_port = start_world(relaysim, "live-fast-world.yaml")
    stuck, stuck_port = start_world(relaysim, "live-stuck-serviceb.yaml", "--hold", "2s")
    busy = None
    if args.busy_disk:
        busy = multiprocessing.Process(target=busy_disk, args=(tempfile.mkdtemp(prefix="relaysim-busy-"),), daemon=True)
        busy.start()
    configs = [(d, g) for _ in range(args.rounds) for d in ("full", "normal") for g in (False, True)]
    delivering = [run(relaysim, world_port, d, args.seconds, args.clients, False, g) for d, g in configs]
    held = [run(relaysim, stuck_port, d, args.seconds, args.clients, False, g, stuck=True) for d, g in configs]
    if busy:
        busy.terminate()
        busy.join()
    disk = ", another process writing and syncing on the same disk" if args.busy_disk else ""
    print(f"{args.clients} clients, {args.seconds:g} s each, one serve process, loopback{disk}")
    print_rows("while delivering every request to a fast endpoint:", delivering)
    print_rows("with deliveries held back (ServiceB never answers): ingest alone", held)
    print(f"simulator's SQLite store, create (in memory, no sync) {creates:9.0f}")
    if not args.only_ingest:
        print_rows("with the event log:", [run(relaysim, world_port, "normal", args.seconds, args.clients, True, True)])
        slow, slow_port = start_world(relaysim, "live-slow-world.yaml")
        print("a backlog of pending requests, delivered by one serve process (64 at once):")
        for name, port in (("fast", world_port), ("slow (20 ms)", slow_port)):
            for keep_alive in ("0s", "1s"):
                b = drain(relaysim, port, stuck_port, args.seconds, args.clients, keep_alive)
                how = "a connection each" if keep_alive == "0s" else "kept alive      "
                print(f"  {name:12} endpoints, {how} {b['delivered']:8.0f} in {b['seconds']:6.2f} s = "
                      f"{b['per_s']:6.0f} deliveries/s")
        slow.send_signal(signal.SIGTERM)
        slow.wait(timeout=10)
    for w in (world, stuck):
        w.send_signal(signal.SIGTERM)
        w.wait(timeout=10)


if __name__ == "__main__":
    main()
