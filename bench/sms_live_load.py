#!/usr/bin/env python3
"""The live SMS gateway under load, on loopback: accepted sends per second, their latency, and
submits per second, with synchronous=FULL and NORMAL, in `--rounds` interleaved rounds. Each round
starts a redis-server of its own, `relaysim world bench/scenarios/sms-live-load.yaml` (two fast
providers that take everything) and one `relaysim serve` on a fresh database, and runs two loads:

  single  clients send single messages back to back; each is sent synchronously, in its client's
          request, so the answer waits for the commit and for the provider
  bulk    clients send bulk requests of 100 numbers; each is stored in one transaction, answered
          pending, and submitted by the workers

    sms_live_load.py BUILD_DIR [--seconds 6] [--clients 8] [--rounds 1]

Clients are processes, each with one keep-alive connection, sending with a token the back office
issued. Submits per second are the world's log lines over the window (every submit is one). A
benchmark, not a test: it judges nothing. reports/performance.md keeps its figures."""
import argparse
import http.client
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(port, method, path, body=None, key=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = conn.getresponse()
    return response.status, json.loads(response.read() or b"null")


def client(port, token, seconds, index, size, out):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    latencies = []
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        to = [f"+49{index:03d}{n:05d}{i:03d}" for i in range(size)]
        body = json.dumps({"sender": "SHOP", "template": 3, "biz_type": "load", "biz_id": f"c{index}-{n}",
                           "to": to[0] if size == 1 else to})
        began = time.perf_counter()
        conn.request("POST", "/v1/sms", body=body,
                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        response.read()
        latencies.append(time.perf_counter() - began)
        if response.status not in (200, 202):
            sys.exit(f"sms_live_load: a send answered {response.status}")
        n += 1
    out.put(latencies)


def lines(path):
    with open(path) as f:
        return sum(1 for _ in f)


def round_of(relaysim, durability, seconds, clients):
    tmp = tempfile.mkdtemp(prefix="relaysim-sms-load-")
    redis_port, gateway, providers = free_port(), free_port(), free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL)
    config = os.path.join(tmp, "serve.yaml")
    with open(config, "w") as f:
        f.write(f"""system: sms
serve:
  listen: 127.0.0.1:{gateway}
  database: {os.path.join(tmp, 'load.db')}
  durability: {durability}
  redis: 127.0.0.1:{redis_port}
  token_secret: a-benchmark-secret-of-32-bytes-or-more
  providers:
    - {{name: alpha, url: http://127.0.0.1:{providers}/providers/alpha/submit, receipt_secret: alpha-receipts-secret}}
    - {{name: beta, url: http://127.0.0.1:{providers}/providers/beta/submit, receipt_secret: beta-receipts-secret}}
platform:
  pods: 1
  concurrency_per_pod: 64
""")
    log = os.path.join(tmp, "world.jsonl")
    world = subprocess.Popen([relaysim, "world", os.path.join(HERE, "scenarios", "sms-live-load.yaml"), "--serve", config,
                              "--listen", f"127.0.0.1:{providers}", "--receipts", log],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    world.stdout.readline()
    key = subprocess.run([relaysim, "keys", config, "--admin"], capture_output=True, text=True, check=True).stdout.strip()
    serve = subprocess.Popen([relaysim, "serve", config], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    serve.stdout.readline()
    status, body = call(gateway, "POST", "/v1/businesses",
                        {"name": "shop", "senders": ["SHOP"], "templates": [3], "quota": 10**9}, key)
    business = body["id"]
    call(gateway, "POST", f"/v1/businesses/{business}/approve", key=key)
    token = call(gateway, "POST", f"/v1/businesses/{business}/tokens", key=key)[1]["token"]
    results = {}
    try:
        for load, size in (("single", 1), ("bulk", 100)):
            out = multiprocessing.Queue()
            before = lines(log)
            workers = [multiprocessing.Process(target=client, args=(gateway, token, seconds, i, size, out))
                       for i in range(clients)]
            began = time.time()
            for w in workers:
                w.start()
            latencies = sorted(l for _ in workers for l in out.get())
            for w in workers:
                w.join()
            wall = time.time() - began
            submits = lines(log) - before
            results[load] = {"requests_per_s": len(latencies) / wall, "messages_per_s": len(latencies) * size / wall,
                             "submits_per_s": submits / wall, "p50_ms": 1000 * latencies[len(latencies) // 2],
                             "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]}
    finally:
        for p in (serve, world, redis):
            p.terminate()
            p.wait()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    relaysim = os.path.join(os.path.abspath(args.build), "relaysim")
    print(f"{'durability':<11}{'load':<8}{'requests/s':>11}{'messages/s':>11}{'submits/s':>10}{'p50 ms':>8}{'p99 ms':>8}")
    for _ in range(args.rounds):
        for durability in ("full", "normal"):
            for load, r in round_of(relaysim, durability, args.seconds, args.clients).items():
                print(f"{durability:<11}{load:<8}{r['requests_per_s']:>11.0f}{r['messages_per_s']:>11.0f}"
                      f"{r['submits_per_s']:>10.0f}{r['p50_ms']:>8.1f}{r['p99_ms']:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
