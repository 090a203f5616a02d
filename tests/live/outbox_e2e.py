#!/usr/bin/env python3
"""The outbox relay live, end to end: a PostgreSQL cluster of this test's own (two databases, one
per shard), etcd and Redis, each started in a temporary directory on loopback; `relaysim world`
serving an outbox scenario's downstream; two `relaysim serve` processes of config/serve-outbox.yaml.

  python3 tests/live/outbox_e2e.py RELAYSIM drain|chaos

drain: business operations go to both pods, some of them rolled back. Every committed operation's
message must end handled, each effect applied once in the downstream's database, and no
rolled-back operation's message exist anywhere. Then one pod is drained (SIGTERM) right after a
burst of operations, while it relays them: it must give its leases back and leave the group, so
that the other leads every shard at once, well before the leases would have run out, and relays
what comes next alone. The drained pod's event log (`serve --events`) must run from `started` to
`stopped` and tell of every operation it answered.

chaos: a client sends operations all along while every part fails in turn: a pod killed (SIGKILL)
and restarted, then killed again at a crash point of its own (right after a change it commits to a
shard, before its line: the judge must take that change from the shards), a pod stopped (SIGSTOP)
past its lease and resumed (for a while it believes it still leads, and only the shard's fence
keeps its writes out), Redis killed and restarted from its append-only file, PostgreSQL stopped at
once (`immediate`, as a crash) and restarted, etcd killed and restarted. Once the faults end, every
operation that was answered committed must have its message handled or failed, none left pending
or processing, and no effect applied twice."""
import atexit
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livetest import call, end_all, fail, first_line, free_port, start, wait_for  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELAYSIM = None  # the relaysim binary: the first argument (bench/outbox_live_load.py sets it too)
SHARDS = ("outbox_s0", "outbox_s1")
# The drain's lease and the log's session: long, so that a drained pod's shards and partitions
# moving before either could run out shows it gave them back.
LEASE_S = 20
SESSION_S = 15


class Postgres:
    """A private cluster: initdb in `tmp`, as the postgres user when the test runs as root."""

    def __init__(self):
        # In /tmp itself: the test's own temporary directory may be one the postgres user cannot enter.
        self.dir = tempfile.mkdtemp(prefix="relaysim-outbox-pg-", dir="/tmp")
        atexit.register(lambda: (end_all(), shutil.rmtree(self.dir, ignore_errors=True)))
        self.port = free_port()
        self.user = "postgres" if os.geteuid() == 0 else None
        if self.user:
            shutil.chown(self.dir, self.user, self.user)
        versions = sorted((d for d in os.listdir("/usr/lib/postgresql") if d.isdigit()), key=int)
        if not versions:
            fail("no PostgreSQL server under /usr/lib/postgresql (./relaysim installs it)")
        self.bin = f"/usr/lib/postgresql/{versions[-1]}/bin"
        initdb = start([f"{self.bin}/initdb", "-D", f"{self.dir}/data", "-A", "trust", "-U", "postgres", "-E", "UTF8",
                        "--no-instructions", "--no-sync"], user=self.user, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
        if initdb.wait(timeout=120) != 0:
            fail(f"initdb failed: {initdb.stderr.read()}")
        self.process = None

    def start(self):
        self.process = start([f"{self.bin}/postgres", "-D", f"{self.dir}/data", "-k", self.dir, "-h", "127.0.0.1", "-p",
                              str(self.port), "-c", "fsync=off", "-c", "full_page_writes=off",
                              # A pod stopped inside a transaction (SIGSTOP) would hold its rows from
                              # the pods that go on, and the call waiting for them would hold that
                              # pod's whole loop: its session ends instead (docs/live.md).
                              "-c", "idle_in_transaction_session_timeout=2s"], user=self.user,
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "postgres.log"), "a"))
        wait_for("PostgreSQL to take connections", lambda: self.psql("postgres", "SELECT 1", check=False) == "1")

    def crash(self):
        """An immediate stop (SIGQUIT), as a crash: what was not committed is gone."""
        self.process.send_signal(signal.SIGQUIT)
        self.process.wait(timeout=30)

    def psql(self, db, sql, check=True):
        p = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", db, "-At", "-c", sql],
                           capture_output=True, text=True)
        if check and p.returncode != 0:
            fail(f"psql {db}: {sql}: {p.stderr}")
        return p.stdout.strip()

    def conninfo(self, db):
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={db} connect_timeout=5"


class Etcd:
    def __init__(self, tmp):
        self.tmp = tmp
        self.dir = os.path.join(tmp, "etcd")
        self.port, self.peer = free_port(), free_port()
        self.start()

    def start(self):
        client = f"http://127.0.0.1:{self.port}"
        peer_url = f"http://127.0.0.1:{self.peer}"
        self.process = start(["etcd", "--name", "test", "--data-dir", self.dir, "--listen-client-urls", client,
                              "--advertise-client-urls", client, "--listen-peer-urls", peer_url,
                              "--initial-advertise-peer-urls", peer_url, "--initial-cluster", f"test={peer_url}"],
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.tmp, "etcd.log"), "a"))
        wait_for("etcd to answer", lambda: self.healthy())

    def kill(self):
        self.process.kill()
        self.process.wait()

    def healthy(self):
        try:
            return call(self.port, "GET", "/health", key="")[0] == 200
        except OSError:
            return False


class Redis:
    def __init__(self, tmp):
        self.tmp = tmp
        self.port = free_port()
        self.start()

    def start(self):
        # Every write on disk before it is answered: a restart keeps what the log acknowledged.
        self.process = start(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "yes", "--appendfsync", "always", "--dir", self.tmp,
                              "--maxmemory-policy", "noeviction"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for("Redis to answer", self.up)

    def kill(self):
        self.process.kill()
        self.process.wait()

    def group(self):
        """The consumer group's members' pods."""
        p = subprocess.run(["redis-cli", "-p", str(self.port), "HVALS", "{outbox}:members"], capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"redis-cli HVALS: {p.stderr}")
        return sorted(p.stdout.split())

    def up(self):
        import socket
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                s.sendall(b"*1\r\n$4\r\nPING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False


def serve_config(tmp, pg, etcd, redis, world_port, lease_s, session_s, changes=()):
    """config/serve-outbox.yaml on this test's servers, with this lease and session."""
    text = open(os.path.join(ROOT, "config", "serve-outbox.yaml")).read()
    for i, db in enumerate(SHARDS):
        text = text.replace(f"host=127.0.0.1 port=5433 user=postgres dbname={db} connect_timeout=5", pg.conninfo(db))
    text = text.replace("http://127.0.0.1:2379", f"http://127.0.0.1:{etcd.port}")
    text = text.replace("127.0.0.1:6379", f"127.0.0.1:{redis.port}")
    text = text.replace("http://127.0.0.1:8093/downstream", f"http://127.0.0.1:{world_port}/downstream")
    text = text.replace("lease: 10s", f"lease: {lease_s}s").replace("renew_every: 3s", "renew_every: 1s")
    text = text.replace("session_timeout: 10s", f"session_timeout: {session_s}s")
    for before, after in changes:
        assert before in text, before
        text = text.replace(before, after)
    path = os.path.join(tmp, "serve-outbox.yaml")
    open(path, "w").write(text)
    return path


def statuses(pg):
    """{status: count} over both shards (0 pending, 1 processing, 2 handled, 3 failed)."""
    counts = {}
    for db in SHARDS:
        for line in pg.psql(db, "SELECT status, count(*) FROM outbox_request GROUP BY status").splitlines():
            status, n = map(int, line.split("|"))
            counts[status] = counts.get(status, 0) + n
    return counts


class Run:
    """The servers, the world and two pods of one test."""

    def __init__(self, lease_s, session_s, changes=()):
        self.tmp = tempfile.mkdtemp(prefix="relaysim-outbox-e2e-")
        self.pg = Postgres()
        self.pg.start()
        for db in SHARDS:
            self.pg.psql("postgres", f"CREATE DATABASE {db}")
        self.etcd = Etcd(self.tmp)
        self.redis = Redis(self.tmp)
        world_port = free_port()
        self.config = serve_config(self.tmp, self.pg, self.etcd, self.redis, world_port, lease_s, session_s, changes)
        self.effects = os.path.join(self.tmp, "effects.db")
        world = start([RELAYSIM, "world", os.path.join(ROOT, "scenarios", "outbox-quickstart.yaml"), "--serve",
                       self.config, "--listen", f"127.0.0.1:{world_port}", "--effects", self.effects, "--receipts",
                       os.path.join(self.tmp, "world.jsonl")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first_line(world, "relaysim world")
        self.pods, self.ports = {}, {1: free_port(), 2: free_port()}
        for pod in (1, 2):
            self.start_pod(pod)
        print(f"outbox_e2e: PostgreSQL, etcd, Redis, a world and two pods up in {self.tmp}", flush=True)
        # Every shard has a leader among the two pods.
        wait_for("every shard to have a leader", lambda: self.led() == {0, 1}, timeout=lease_s * 3)

    def start_pod(self, pod, *options):
        self.pods[pod] = start([RELAYSIM, "serve", self.config, "--pod", str(pod), "--listen",
                                f"127.0.0.1:{self.ports[pod]}", "--events", self.events(pod), *options], stdout=subprocess.PIPE,
                               stderr=open(os.path.join(self.tmp, f"serve-{pod}.log"), "a"), text=True)
        line = first_line(self.pods[pod], f"relaysim serve --pod {pod}")
        if "the outbox relay listening on" not in line:
            fail(f"serve --pod {pod} announced: {line}")

    def events(self, pod):
        """The pod's event log (`serve --events`), appended to by each of its lives."""
        return os.path.join(self.tmp, f"events-{pod}.jsonl")

    def leads(self, pod):
        """The shards `pod` leads, by its status; none when it is not running or does not answer."""
        if self.pods[pod].poll() is not None:
            return set()
        try:
            return set(call(self.ports[pod], "GET", "/v1/status", timeout=2)[1]["leads"])
        except OSError:
            return set()  # stopped

    def led(self):
        return set().union(*(self.leads(pod) for pod in self.pods))

    def all_final(self, at_least):
        """{status: count} once no message is pending or processing and at least `at_least` exist."""
        counts = statuses(self.pg)
        return sum(counts.values()) >= at_least and counts.get(0, 0) == 0 and counts.get(1, 0) == 0 and counts

    def effects_once(self, expected_handled):
        """Fails unless every effect was applied once and there is one for each of the messages
        handled; the number of effects."""
        with sqlite3.connect(self.effects) as db:
            twice = db.execute("SELECT message, count(*) FROM effect GROUP BY message HAVING count(*) > 1").fetchall()
            applied = db.execute("SELECT count(DISTINCT message) FROM effect").fetchone()[0]
        if twice:
            fail(f"effects applied more than once: {twice[:5]}")
        if applied < expected_handled:
            fail(f"{expected_handled} messages handled, but only {applied} effects in the downstream's database")
        return applied

    def end(self):
        end_all()
        shutil.rmtree(self.tmp, ignore_errors=True)


def check_event_log(path, answered):
    """Fails unless a drained pod's event log (`serve --events`, docs/live.md) tells of its life
    from `started` to `stopped`, in lines written in order, with an `operation` line for each
    operation it answered and every kind of the relay's work among them."""
    records = [json.loads(line) for line in open(path)]
    if not records or records[0]["event"] != "started" or records[-1]["event"] != "stopped":
        fail(f"{path}: a drained pod's log runs from 'started' to 'stopped', not "
             f"{records[0]['event'] if records else 'nothing'} to {records[-1]['event'] if records else 'nothing'}")
    logged = [r["logged"] for r in records]
    if logged != sorted(logged):
        fail(f"{path}: lines written out of order")
    kinds = {r["event"] for r in records}
    missing = {"operation", "leadership", "leader_wrote", "published", "appended", "relocked", "handled", "finished",
               "consumed", "committed", "polled"} - kinds
    if missing:
        fail(f"{path}: the pod did every kind of work, but its log has no {sorted(missing)}")
    operations = [r for r in records if r["event"] == "operation"]
    told = {"committed": sum(1 for r in operations if r["committed"]),
            "rolled_back": sum(1 for r in operations if not r["committed"])}
    if told != answered:
        fail(f"{path}: the pod answered {answered} operations, but its log tells of {told}")
    print(f"outbox_e2e: pod 1's event log: {len(records)} lines, from 'started' to 'stopped', an operation line for "
          f"each of the {answered['committed']} committed and {answered['rolled_back']} rolled back", flush=True)


def drain_part():
    run = Run(LEASE_S, SESSION_S)
    pods, ports, redis, tmp = run.pods, run.ports, run.redis, run.tmp

    answered = {1: {"committed": 0, "rolled_back": 0}, 2: {"committed": 0, "rolled_back": 0}}  # by pod

    def operate(n, only=None, first_key=0):
        committed = rolled_back = 0
        for i in range(n):
            pod = only or (1 + i % 2)
            fails = i % 10 == 7
            status, body = call(ports[pod], "POST", "/v1/orders", {"key": first_key + i % 97, "fails": fails}, key="")
            if fails and status == 409 and body["outcome"] == "rolled_back":
                rolled_back += 1
                answered[pod]["rolled_back"] += 1
            elif not fails and status == 201 and body["outcome"] == "committed" and body["messages"] == 1:
                committed += 1
                answered[pod]["committed"] += 1
            else:
                fail(f"POST /v1/orders (fails {fails}) to pod {pod}: {status} {body}")
        return committed, rolled_back

    committed, rolled_back = operate(300)
    print(f"outbox_e2e: {committed} operations committed, {rolled_back} rolled back", flush=True)

    counts = wait_for(f"all {committed} messages to be handled or failed", lambda: run.all_final(committed),
                      timeout=60)
    print(f"outbox_e2e: every message final: {counts.get(2, 0)} handled, {counts.get(3, 0)} failed", flush=True)
    if sum(counts.values()) != committed:
        fail(f"{committed} operations committed, but the shards hold {sum(counts.values())} messages")
    applied = run.effects_once(counts.get(2, 0))
    print(f"outbox_e2e: {applied} effects, none twice", flush=True)

    # Bad requests are refused with a reason, and the relay keeps serving.
    for body, pattern in (({"key": -1}, "key"), ({"key": 1, "types": ["nope"]}, "types"), ({"key": 1, "x": 1}, "unknown field"),
                          ({"key": 1, "fails": "yes"}, "fails")):
        status, answer = call(ports[1], "POST", "/v1/orders", body, key="")
        if status != 400 or pattern not in answer.get("error", ""):
            fail(f"POST /v1/orders {body}: {status} {answer}, expected a 400 about {pattern}")

    # Drain pod 1 while it works: a burst of operations to it, and the SIGTERM right after, while
    # its relay publishes them and its consumer hands them on. It gives its leases back at once, so
    # pod 2 leads both shards before a lease could run out, and leaves the group once what it
    # handles is done.
    burst, _ = operate(200, only=1, first_key=500)
    busy = call(ports[1], "GET", "/v1/status")[1]["in_flight"]
    drained_at = time.monotonic()
    pods[1].send_signal(signal.SIGTERM)
    try:
        code = pods[1].wait(timeout=30)
    except subprocess.TimeoutExpired:
        fail("serve --pod 1 did not finish draining in 30 s")
    if code != 0:
        fail(f"serve --pod 1 exited {code} after SIGTERM")
    log = open(os.path.join(tmp, "serve-1.log")).read()
    if "nothing was left in flight" not in log:
        fail(f"serve --pod 1 did not drain cleanly: {log[-800:]}")
    if redis.group() != ["2"]:
        fail(f"pod 1 drained, but the consumer group's members are of pods {redis.group()}: it did not leave")
    check_event_log(run.events(1), answered[1])
    wait_for("pod 2 to lead both shards", lambda: run.led() == {0, 1}, timeout=LEASE_S * 3)
    took = time.monotonic() - drained_at
    print(f"outbox_e2e: pod 1 drained with {busy} publishes and handlings in flight at the SIGTERM; pod 2 leads both "
          f"shards {took:.1f} s after it (lease {LEASE_S} s)", flush=True)
    # Renewed at most a second before the SIGTERM, pod 1's leases run at least 19 s past it: a
    # handover within half that is one the drained pod made.
    if took >= LEASE_S / 2:
        fail(f"pod 2 took {took:.1f} s to lead both shards: the drained pod did not give its leases back")

    more, _ = operate(100, only=2, first_key=1000)
    more += burst
    counts = wait_for(f"all {committed + more} messages to be handled or failed", lambda: run.all_final(committed + more),
                      timeout=60)
    if sum(counts.values()) != committed + more:
        fail(f"{committed + more} operations committed, but the shards hold {sum(counts.values())} messages")
    applied = run.effects_once(counts.get(2, 0))
    print(f"outbox_e2e: with the burst and after the drain, {more} more committed: {counts.get(2, 0)} handled, "
          f"{counts.get(3, 0)} failed, {applied} effects, none twice", flush=True)
    judge_the_run(run)
    print("outbox_e2e: drain: PASS", flush=True)
    run.end()


def mentions(record, shard, message):
    """Whether an event-log record is about message `message` of `shard`."""
    return (any(e["shard"] == shard and e["id"] == message for e in record.get("records", [])) or
            record.get("shard") == shard and any(m["id"] == message for m in record.get("messages", [])))


def read_logs(run):
    """The two pods' event logs, {pod: records}, each in the order written."""
    return {pod: [json.loads(line) for line in open(run.events(pod))] for pod in (1, 2)}


def write_logs(run, name, logs):
    """Writes the two pods' logs {pod: records} as NAME-1.jsonl and NAME-2.jsonl in the run's
    directory; their paths, pod 1's first."""
    paths = []
    for pod in (1, 2):
        path = os.path.join(run.tmp, f"{name}-{pod}.jsonl")
        with open(path, "w") as out:
            out.writelines(json.dumps(x) + "\n" for x in logs[pod])
        paths.append(path)
    return paths


def late_mark(run, marker, relocker):
    """Copies of the two pods' logs in which a `mark` of pod `marker` is written just after pod
    `relocker`'s re-lock of the message it marked (and the marker's lines in between with it, as a
    process paused after the mark's commit writes them); the copies' paths, pod 1's first, or
    None when no such pair is in the logs."""
    logs = read_logs(run)
    relocks = {}
    for r in logs[relocker]:
        if r["event"] == "relocked" and r["relock"] == "locked":
            rec = r["records"][0]
            relocks.setdefault((rec["shard"], rec["id"], rec["attempt"]), r["logged"])
    best = None
    mine = logs[marker]
    for i, r in enumerate(mine):
        if r["event"] != "leader_wrote" or r["write"] != "mark" or not r["applied"]:
            continue
        for row in r["messages"]:
            at = relocks.get((r["shard"], row["id"], row["attempt"]))
            if row["status"] == "processing" and at is not None and at > r["logged"]:
                # A pod paused after the mark's commit did nothing more until the re-lock: not one
                # whose message it touched again before then.
                if any(mentions(x, r["shard"], row["id"]) for x in mine[i + 1:] if x["logged"] <= at):
                    continue
                moves = sum(1 for x in mine[i:] if x["logged"] <= at)
                if best is None or moves < best[0]:
                    best = (moves, i, at)
    if best is None:
        return None
    _, i, at = best
    for x in mine[i:]:
        x["logged"] = max(x["logged"], at + 1000)
    return write_logs(run, "late-mark", logs)


def stepped_down_mark(run):
    """A leader that steps down in the middle of a cycle still commits the cycle's mark (only the
    fence would keep it out). Copies of the two pods' logs in which a pod's last mark of a shard
    under a leadership (one whose messages the downstream later applied, and after which the pod
    wrote nothing more to the shard but empty scans) became that: the pod steps down from the shard
    just before it (its own later step-down and empty scans go), and the mark's call then fails
    without an answer (`store_failed`, io), as when PostgreSQL commits and restarts before
    answering. The judge needs the mark, and must take it from that call's stretch, whose pod no
    longer leads the shard. The copies' paths, pod 1's first."""
    applied = set()
    for line in open(os.path.join(run.tmp, "world.jsonl")):
        r = json.loads(line)
        if r.get("applied"):
            applied.add((r["shard"], r["id"], r["attempt"]))
    logs = read_logs(run)
    for pod, records in logs.items():
        for i, r in enumerate(records):
            if not (r["event"] == "leader_wrote" and r["write"] == "mark" and r["applied"] and i > 0
                    and any((r["shard"], m["id"], m["attempt"]) in applied for m in r["messages"])):
                continue
            # What the pod wrote to the shard after the mark, until its leadership of it ended.
            later, ended = [], None
            for j in range(i + 1, len(records)):
                x = records[j]
                if x["event"] == "leadership" and x["shard"] == r["shard"]:
                    ended = j if not x["leading"] else None
                    break
                if x["event"] in ("leader_wrote", "published") and x.get("shard") == r["shard"]:
                    later.append(j)
            if any(records[j]["event"] != "leader_wrote" or records[j]["write"] != "scan" or records[j]["messages"]
                   for j in later):
                continue
            before = records[i - 1]["logged"]
            step_down = {"at": before + 1, "event": "leadership", "leading": False, "logged": before + 1,
                         "pod": pod, "shard": r["shard"], "token": r["token"], "until": 0}
            failed = {"at": r["at"], "event": "store_failed", "failure": "io", "logged": r["logged"], "pod": pod,
                      "shard": r["shard"]}
            gone = set(later) | ({ended} if ended is not None else set())
            logs[pod] = records[:i] + [step_down, failed] + [x for j, x in enumerate(records[i + 1:], i + 1) if j not in gone]
            return write_logs(run, "stepped-down", logs)
    fail("no mark that was a pod's last write to its shard, with messages the downstream applied: the stepped-down "
         "mark could not be made")


def judge_run(run, config, logs):
    """`relaysim judge` of the run's logs, its world's receipts and its shards, with `config`."""
    events = sum((["--events", log] for log in logs), [])
    return subprocess.run([RELAYSIM, "judge", os.path.join(ROOT, "scenarios", "outbox-quickstart.yaml"), config, *events,
                           "--receipts", os.path.join(run.tmp, "world.jsonl")], capture_output=True, text=True, timeout=300)


def judged(run):
    """Fails unless the simulator's oracle finds every O-* invariant held in the run (both pods
    drained); the judge's summary."""
    result = judge_run(run, run.config, (run.events(1), run.events(2)))
    if result.returncode != 0 or "every invariant holds" not in result.stdout:
        fail(f"the simulator's oracle judged the live outbox run and found (exit {result.returncode}):\n"
             f"{result.stdout}{result.stderr}\n(the run is in {run.tmp})")
    return "; ".join(l[len("judge: "):] for l in result.stdout.splitlines() if l.startswith("judge:"))


def judge_the_run(run):
    """Pod 2 drains too; then `relaysim judge` must find every O-* invariant held in the run's two
    event logs, the world's receipts and the shards, judged by the simulator's own outbox oracle.
    Judged against a retry policy the relay did not run with, O-retry must FAIL; without one
    pod's log, the run must be refused, not judged; with a handled message's row put back to
    pending, O-final must FAIL."""
    run.pods[2].send_signal(signal.SIGTERM)
    if run.pods[2].wait(timeout=30) != 0:
        fail("serve --pod 2 did not drain after SIGTERM")

    def judge(config, logs=(run.events(1), run.events(2))):
        return judge_run(run, config, logs)

    summary = judged(run)
    # Which pod's consumer meets the world's failures is up to the log's rebalancing, so both logs
    # count: the world fails about one handling in a hundred (its scenario's error_rate), which
    # makes a few retries in the run's 540 messages.
    finished = [json.loads(l) for pod in (1, 2) for l in open(run.events(pod)) if '"finished"' in l]
    retried = sum(1 for r in finished if r["status"] == "pending")
    print(f"outbox_e2e: judged by the simulator's oracle: {summary}", flush=True)
    # A leader paused between a mark's commit and its line: another pod re-locks the message first,
    # and logs it first. The judge must replay the mark before the re-lock, not blame the consumer.
    moved = late_mark(run, 1, 2) or late_mark(run, 2, 1)
    if moved is None:
        fail("no message marked by one pod was re-locked by the other: the late mark could not be made")
    late = judge(run.config, moved)
    if late.returncode != 0 or re.search(r"; 0 records replayed before", late.stdout):
        fail(f"with a mark's line logged after another pod's re-lock of its message, the judge did not replay the mark "
             f"first (exit {late.returncode}):\n{late.stdout}{late.stderr}")
    print(f"outbox_e2e: a mark logged after another pod's re-lock of its message: judged in the database's order, "
          f"every invariant holds", flush=True)
    stepped = judge(run.config, stepped_down_mark(run))
    if stepped.returncode != 0 or re.search(r"\(0 changes they committed and never logged\)", stepped.stdout):
        fail(f"with a mark committed after its leader stepped down and its call's answer lost, the judge did not take "
             f"it from that call (exit {stepped.returncode}):\n{stepped.stdout}{stepped.stderr}")
    print("outbox_e2e: a mark committed after its leader stepped down, its answer lost: taken from the failed call, "
          "every invariant holds", flush=True)
    # Judged against a policy of one attempt per message, the retries the relay made break O-retry.
    if retried == 0:
        fail("no message was retried in the run: a wrong retry policy could not be told from the right one")
    other = os.path.join(run.tmp, "one-attempt.yaml")
    open(other, "w").write(open(run.config).read().replace("max_attempts: 10", "max_attempts: 1"))
    wrong = judge(other)
    if wrong.returncode != 1 or "O-retry" not in wrong.stdout or "but its type allows 1" not in wrong.stdout:
        fail(f"judged against a policy of one attempt, O-retry held:\n{wrong.stdout}{wrong.stderr}")
    # Pod 2's log left out: the shards hold messages no log tells of.
    cut = judge(run.config, (run.events(1),))
    if cut.returncode != 2 or "no log tells of" not in cut.stderr:
        fail(f"a run judged without one pod's log was not refused:\n{cut.stdout}{cut.stderr}")
    print(f"outbox_e2e: {retried} retries; judged against one attempt per message, O-retry fails; "
          "without pod 2's log, refused", flush=True)
    # A shard that went back on a finish: a handled message's row put back to pending at its
    # attempt (as a restore from an old backup would). The logs made it handled, so the shard must
    # hold it handled: O-final.
    message = run.pg.psql(SHARDS[0], "SELECT id FROM outbox_request WHERE status = 2 ORDER BY id LIMIT 1")
    run.pg.psql(SHARDS[0], f"UPDATE outbox_request SET status = 0 WHERE id = {message}")
    lost = judge(run.config)
    run.pg.psql(SHARDS[0], f"UPDATE outbox_request SET status = 2 WHERE id = {message}")
    if lost.returncode != 1 or not re.search(r"O-final .*the logs made it handled after attempt \d+, but its shard holds it "
                                             r"pending after attempt", lost.stdout):
        fail(f"with a handled message's row put back to pending, O-final held:\n{lost.stdout}{lost.stderr}")
    print("outbox_e2e: a handled message's row put back to pending in its shard: O-final fails", flush=True)


# The chaos part's lease and session: short, so that the faults end in a minute.
CHAOS_LEASE_S = 3
CHAOS_SESSION_S = 3
# Pod 1's second life kills itself right after this many changes committed to the shards.
CRASH_AFTER_COMMIT = 20


def chaos_part():
    # Quick rescues, so that a message marked and never published comes back within the test.
    run = Run(CHAOS_LEASE_S, CHAOS_SESSION_S, changes=(("processing_timeout: 1m", "processing_timeout: 20s"),
                                                        ("rescue_every: 10s", "rescue_every: 2s")))
    acked = set()      # (shard, first) of every operation answered committed
    answers = {}       # status -> count
    stop = threading.Event()
    rng = random.Random(7)

    def client():
        key = 0
        while not stop.is_set():
            key += 1
            pod = rng.choice((1, 2))
            try:
                status, body = call(run.ports[pod], "POST", "/v1/orders", {"key": key % 503, "fails": key % 10 == 3},
                                    key="", timeout=5)
            except (OSError, ValueError):
                status, body = 0, None  # down, stopped or cut off: not known to have committed
            answers[status] = answers.get(status, 0) + 1  # this thread's alone until it is joined
            if status == 201:
                acked.add((body["shard"], body["first"]))
            time.sleep(0.01)

    worker = threading.Thread(target=client, daemon=True)
    worker.start()

    def phase(what, seconds=2.0):
        print(f"outbox_e2e: chaos: {what}", flush=True)
        time.sleep(seconds)

    phase("load", 3)
    run.pods[1].kill()
    run.pods[1].wait()
    phase("pod 1 killed (SIGKILL)")
    # A kill between a commit and its line leaves a change in a shard that no log tells of; the
    # judge must take it from the shards. A kill from outside lands there rarely, so the next
    # life of pod 1 kills itself there (serve --crash-after-commit).
    run.start_pod(1, "--crash-after-commit", str(CRASH_AFTER_COMMIT))
    wait_for("pod 1 to reach its crash point", lambda: run.pods[1].poll() is not None, timeout=60)
    if run.pods[1].returncode != -signal.SIGKILL:
        fail(f"serve --pod 1 --crash-after-commit {CRASH_AFTER_COMMIT} exited with {run.pods[1].returncode}, "
             f"not killed by SIGKILL: {open(os.path.join(run.tmp, 'serve-1.log')).read()[-1500:]}")
    print(f"outbox_e2e: chaos: pod 1 restarted, and killed at its crash point, before logging its "
          f"{CRASH_AFTER_COMMIT}th change", flush=True)
    # With pod 1 down, pod 2 comes to lead both shards, and a leader keeps its shards while it
    # renews: so it leads both when it is stopped.
    wait_for("pod 2 to lead both shards", lambda: run.leads(2) == {0, 1}, timeout=CHAOS_LEASE_S * 10)
    run.start_pod(1)
    phase("pod 1 restarted", 3)
    # Pod 1 must have fenced every shard before pod 2 resumes: then pod 2's first write after it
    # (its next scan, or the mark of the cycle it was in) carries a token the fence refuses.
    # Resumed sooner, before pod 1 has written its own token, its stale write would still take
    # effect, and the fence would have shown nothing.
    run.pods[2].send_signal(signal.SIGSTOP)
    phase(f"pod 2 stopped (SIGSTOP) past its {CHAOS_LEASE_S} s lease", CHAOS_LEASE_S)
    wait_for("pod 1 to lead every shard while pod 2 is stopped", lambda: run.leads(1) == {0, 1},
             timeout=CHAOS_LEASE_S * 10)
    run.pods[2].send_signal(signal.SIGCONT)
    phase("pod 2 resumed, believing for a moment that it still leads", 3)
    run.redis.kill()
    phase("Redis killed")
    run.redis.start()
    phase("Redis restarted from its append-only file", 3)
    run.pg.crash()
    phase("PostgreSQL stopped immediately")
    run.pg.start()
    phase("PostgreSQL restarted", 3)
    run.etcd.kill()
    phase("etcd killed")
    run.etcd.start()
    phase("etcd restarted", 4)
    stop.set()
    worker.join(timeout=30)
    print(f"outbox_e2e: chaos: the client's answers by status: {dict(sorted(answers.items()))}", flush=True)
    if len(acked) < 50:
        fail(f"only {len(acked)} operations were answered committed: the relay hardly served under the faults")
    for pod in (1, 2):
        if run.pods[pod].poll() is not None:
            fail(f"serve --pod {pod} exited ({run.pods[pod].returncode}) during the faults: "
                 f"{open(os.path.join(run.tmp, f'serve-{pod}.log')).read()[-1500:]}")

    counts = wait_for("every message to be handled or failed once the faults ended", lambda: run.all_final(len(acked)),
                      timeout=120)
    status_of = {}
    for shard, db in enumerate(SHARDS):
        for line in run.pg.psql(db, "SELECT id, status FROM outbox_request").splitlines():
            row, status = map(int, line.split("|"))
            status_of[(shard, row)] = status
    missing = [(shard, first, status_of.get((shard, first))) for shard, first in sorted(acked)
               if status_of.get((shard, first)) not in (2, 3)]
    if missing:
        fail(f"operations answered committed whose message is not handled or failed: {missing[:10]}")
    applied = run.effects_once(counts.get(2, 0))
    print(f"outbox_e2e: chaos: {len(acked)} operations answered committed; the shards hold {sum(counts.values())} "
          f"messages, {counts.get(2, 0)} handled, {counts.get(3, 0)} failed; {applied} effects, none twice", flush=True)
    # Judged: both pods drain, and the simulator's oracle must find every O-* invariant held,
    # with pod 1's kill seen and the resumed pod 2's stale writes kept out by the fence.
    for pod in (1, 2):
        run.pods[pod].send_signal(signal.SIGTERM)
        if run.pods[pod].wait(timeout=30) != 0:
            fail(f"serve --pod {pod} did not drain after SIGTERM")
    summary = judged(run)
    fenced = re.search(r"(\d+) kept out by the fence", summary)
    if not fenced or int(fenced.group(1)) == 0:
        fail(f"the judge saw no write of the resumed pod 2 kept out by the fence: {summary}")
    recovered = re.search(r"(?<!\d)2 crashes \((\d+) changes they committed and never logged\)", summary)
    if not recovered or recovered.group(1) == "0":
        fail(f"the judge saw not both of pod 1's deaths, or did not take from the shards the change its crash "
             f"point left unlogged: {summary}")
    print(f"outbox_e2e: chaos: judged by the simulator's oracle: {summary}", flush=True)
    print("outbox_e2e: chaos: PASS", flush=True)
    run.end()


if __name__ == "__main__":
    parts = {"drain": drain_part, "chaos": chaos_part}
    if len(sys.argv) != 3 or sys.argv[2] not in parts:
        sys.exit("usage: outbox_e2e.py RELAYSIM drain|chaos")
    RELAYSIM = os.path.abspath(sys.argv[1])
    parts[sys.argv[2]]()
