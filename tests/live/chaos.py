#!/usr/bin/env python3
"""The live service survives kill -9: no acknowledged request is lost, and every duplicate delivery
is explained by a kill.

Starts `relaysim world` with tests/live/chaos-world.yaml and two `relaysim serve` processes
sharing one database against it on loopback, sends requests from several clients to either (each
retrying its request, with the same key, until it is acknowledged), and kill -9s one of the
processes at random moments, restarting it each time. Then it
waits until every acknowledged request is finished and holds the world's receipts against them:

  - every acknowledged request was delivered, and an endpoint has a 2xx receipt of it;
  - every receipt is of an acknowledged request, and carries a valid signature;
  - a request delivered twice (two 2xx receipts) had a kill between them: the service died after
    the endpoint answered and before it recorded the answer, and its lease brought the request
    back. Any other duplicate is a failure.

Every call carries an admin key (`relaysim keys CONFIG --admin`), which must appear in no log.
Finally SIGTERM must drain the service and exit 0, and `relaysim judge` must find every invariant
held when the simulator's own oracle judges the run from the processes' event logs (a process
killed between a commit and its log line is read from the database), the receipts and the clients'
calls — each duplicate delivery attributed to a crash. Bounded: requests are sent while the kills go
on (at least --requests), eight kills by default, under a minute. Usage: chaos.py RELAYSIM [--requests N] [--kills K] [--seed S]
"""
import argparse
import http.client
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time

from livetest import admin_key, call, fail, first_line, free_port, read_receipts, start

HERE = os.path.dirname(os.path.abspath(__file__))
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("relaysim")
    parser.add_argument("--requests", type=int, default=300, help="at least this many; more while the kills go on")
    parser.add_argument("--kills", type=int, default=8)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--processes", type=int, default=2, help="serve processes sharing one database")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--durability", default="full", help="off: the unsafe setting this test must catch")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"chaos: seed {args.seed} (rerun with --seed {args.seed})", flush=True)

    tmp = tempfile.mkdtemp(prefix="relaysim-chaos-")
    receipts_path = os.path.join(tmp, "receipts.jsonl")
    world_log = open(os.path.join(tmp, "world.log"), "w")
    world = start([args.relaysim, "world", os.path.join(HERE, "chaos-world.yaml"), "--listen", "127.0.0.1:0",
                   "--receipts", receipts_path, "--signing-secret", SECRET, "--hold", "5s"],
                  stdout=subprocess.PIPE, stderr=world_log, text=True)
    world_port = int(re.search(r"on http://127\.0\.0\.1:(\d+)", first_line(world, "relaysim world")).group(1))
    ports = [free_port() for _ in range(args.processes)]
    config = os.path.join(tmp, "serve.yaml")
    with open(config, "w") as f:
        f.write(f"""serve:
  database: {os.path.join(tmp, 'live.db')}
  durability: {args.durability}
  serviceb: http://127.0.0.1:{world_port}/serviceb
  signing_secret: {SECRET}
  allow_addresses: [loopback]
  drain_timeout: 10s
platform:
  concurrency_per_pod: 16
  lookup_timeout: 1s
  http_timeout: 2s
  lease: 4s
  retry: {{backoff: exponential, initial: 100ms, multiplier: 2, max_interval: 1s, jitter: full, deadline: 1h}}
""")

    key = admin_key(args.relaysim, config, ports)
    serve_log = open(os.path.join(tmp, "serve.log"), "w")
    events = [os.path.join(tmp, f"events-{i + 1}.jsonl") for i in range(args.processes)]

    def start_serve(i):
        p = start([args.relaysim, "serve", config, "--listen", f"127.0.0.1:{ports[i]}", "--pod", str(i + 1),
                   "--events", events[i]],
                  stdout=subprocess.PIPE, stderr=serve_log, text=True)
        first_line(p, "relaysim serve")
        return p

    serves = [start_serve(i) for i in range(args.processes)]
    acked = {}  # request number -> (id, time acknowledged)
    lock = threading.Lock()
    next_request = [0]
    retries = [0]
    calls = []  # every create call and its answer, for the judge
    killing = [True]

    def client():
        while True:
            with lock:
                n = next_request[0]
                if n >= args.requests and not killing[0]:
                    return
                next_request[0] += 1
            # The payload names its key (n + 1) as the simulator's load does, so receipts name it too.
            # cx25 and cx26 deliver to the world's gone endpoints (cxid i to endpoint i mod 27).
            body = {"cxid": f"cx{n % 27}", "request_id": f"chaos-{n}", "payload": {"seq": n + 1, "v": "chaos"}}
            while True:
                sent_ns = time.time_ns()
                status, answer = 0, None
                try:
                    status, answer = call(rng.choice(ports), "POST", "/v1/webhooks", body)
                    if status == 202:
                        with lock:
                            acked[n] = (answer["id"], time.time())
                        break
                    if status != 503:
                        fail(f"request {n} was refused with {status}: {answer}")
                except (OSError, http.client.HTTPException):
                    pass  # the service is down (killed): try again, with the same key
                finally:
                    answered = isinstance(answer, dict)
                    with lock:
                        calls.append(dict(body, key=n + 1, sent_ns=sent_ns, answered_ns=time.time_ns(), status=status,
                                          id=answer.get("id") if answered else None,
                                          duplicate=bool(answer.get("duplicate")) if answered else False))
                with lock:
                    retries[0] += 1
                time.sleep(0.05)
            time.sleep(rng.uniform(0, 0.02))

    # Daemons: a failure of the test must not wait for clients that retry until acknowledged.
    clients = [threading.Thread(target=client, daemon=True) for _ in range(args.clients)]
    for c in clients:
        c.start()
    kills = []
    for _ in range(args.kills):
        time.sleep(rng.uniform(0.3, 1.5))
        victim = rng.randrange(args.processes)
        serves[victim].send_signal(signal.SIGKILL)
        serves[victim].wait()
        kills.append(time.time())
        serves[victim] = start_serve(victim)
    killing[0] = False
    for c in clients:
        c.join()

    # Every acknowledged request must finish: the leases of what the kills left in flight expire
    # after 4 s, then it is delivered again.
    deadline = time.time() + 60
    pending = {number: id for number, (id, _) in acked.items()}
    statuses = {}
    while pending and time.time() < deadline:
        for number, id in list(pending.items()):
            status, row = call(ports[0], "GET", f"/v1/webhooks/{id}")
            if status != 200:
                fail(f"acknowledged request {id} (chaos-{number}) is gone: GET answered {status} {row}")
            if row["status"] in ("delivered", "failed", "dead_lettered"):
                statuses[id] = row
                del pending[number]
        if pending:
            time.sleep(0.2)
    if pending:
        fail(f"{len(pending)} acknowledged requests did not finish within a minute: ids {sorted(pending.values())[:10]}")

    for serve in serves:
        serve.send_signal(signal.SIGTERM)
    for serve in serves:
        try:
            code = serve.wait(timeout=20)
        except subprocess.TimeoutExpired:
            serve.kill()
            fail("SIGTERM did not stop the service within 20 s")
        if code != 0:
            fail(f"the service exited {code} after SIGTERM")
    world.send_signal(signal.SIGTERM)
    world.wait(timeout=10)

    receipts = read_receipts(receipts_path)
    ids = {id for id, _ in acked.values()}
    delivered_at = {}
    for r in receipts:
        if not r["webhook_id"].startswith("msg_") or int(r["webhook_id"][4:]) not in ids:
            fail(f"a receipt of a request that was never acknowledged: {r}")
        if r["signature"] != "valid":
            fail(f"a delivery whose signature did not verify ({r['signature']}): {r}")
        if 200 <= r["status"] < 300:
            delivered_at.setdefault(int(r["webhook_id"][4:]), []).append(r["at"])
    gone = {int(r["webhook_id"][4:]) for r in receipts if r["status"] == 410}
    failed = set()
    duplicates = 0
    for id in sorted(ids):
        row = statuses[id]
        if row["status"] == "failed" and row.get("reason") == "gone" and id in gone:
            failed.add(id)
            continue
        if row["status"] != "delivered":
            fail(f"request {id} ended {row['status']} ({row.get('reason')}), not delivered")
        times = sorted(delivered_at.get(id, []))
        if not times:
            fail(f"request {id} is delivered, but no endpoint received it")
        for first, second in zip(times, times[1:]):
            duplicates += 1
            if not any(first <= k <= second for k in kills):
                fail(f"request {id} was delivered twice ({first:.3f}, {second:.3f}) with no kill between")

    # Every failure's tenant was told, at least once; a second time only as a resend, after a kill
    # between the notice's send and its removal from the outbox.
    if not failed:
        fail("no request failed: the gone endpoints were never reached, and the notices not tried")
    told, resent = {}, 0
    for path in events:
        for line in open(path):
            e = json.loads(line)
            if e.get("event") == "notified":
                told[e["id"]] = told.get(e["id"], 0) + 1
                resent += e["sends"] > 1
    # A notice still in the outbox is kept, not lost: a kill just after its send left it leased, and
    # the run ended before the lease did (the judge holds it to its bound).
    with sqlite3.connect(os.path.join(tmp, "live.db")) as db:
        kept = {row[0] for row in db.execute("SELECT request FROM notices")}
    for id in sorted(failed):
        if id not in told and id not in kept:
            fail(f"request {id} failed (410) and its tenant was never told, nor is its notice in the outbox")

    # The same run, judged by the simulator's own oracle from the processes' event logs, the
    # receipts and the clients' calls: every invariant, and every duplicate attributed to a crash.
    calls_path = os.path.join(tmp, "calls.jsonl")
    with open(calls_path, "w") as f:
        f.writelines(json.dumps(c) + "\n" for c in calls)
    judged = subprocess.run([args.relaysim, "judge", os.path.join(HERE, "chaos-world.yaml"), config, "--events", *events,
                             "--receipts", receipts_path, "--calls", calls_path, "--database", os.path.join(tmp, "live.db")],
                            capture_output=True, text=True, timeout=120)
    if judged.returncode != 0 or "every invariant holds" not in judged.stdout:
        fail(f"the simulator's oracle judged the run and found:\n{judged.stdout}{judged.stderr}")
    # The key the clients sent on every call is in no log: serve's, the world's, the event logs.
    serve_log.flush()
    world_log.flush()
    secret = key[key.rindex("_") + 1:]
    for path in [serve_log.name, world_log.name, receipts_path, *events]:
        if os.path.exists(path) and secret in open(path, errors="replace").read():
            fail(f"the API key appears in {path}")
    if secret in judged.stdout + judged.stderr:
        fail("the API key appears in the judge's output")
    attributed = re.search(r"duplicate deliveries: ([^;]*);", judged.stdout).group(1)
    unlogged = re.search(r"\((\d+) store changes they left unlogged\)", judged.stdout).group(1)
    print(f"chaos: {args.processes} serve processes on one database, {len(acked)} requests acknowledged, "
          f"{args.kills} kills, {retries[0]} client retries, "
          f"{len(receipts)} receipts; every acknowledged request delivered, or failed (410) with its tenant told "
          f"({len(failed)} failed, {resent} notices sent again after a kill); {duplicates} duplicate deliveries, "
          f"each after a kill; SIGTERM drained and exited 0; the key in no log; the simulator's oracle finds every invariant held, "
          f"duplicates attributed: {attributed} ({unlogged} commits the kills left unlogged, read from the database)", flush=True)


if __name__ == "__main__":
    main()
