#!/usr/bin/env python3
"""The outbox relay live, end to end: a PostgreSQL cluster of this test's own (two databases, one
per shard), etcd and Redis, each started in a temporary directory on loopback; `relaysim world`
serving an outbox scenario's downstream; two `relaysim serve` processes of config/serve-outbox.yaml.

  python3 tests/live/outbox_e2e.py RELAYSIM

Business operations go to both pods, some of them rolled back. Every committed operation's message
must end handled, each effect applied once in the downstream's database, and no rolled-back
operation's message exist anywhere. Then one pod is drained (SIGTERM): it must give its leases back
and leave the group, so that the other leads every shard at once, well before the leases would have
run out, and relays what comes next alone."""
import atexit
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livetest import call, end_all, fail, first_line, free_port, start  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELAYSIM = os.path.abspath(sys.argv[1])
SHARDS = ("outbox_s0", "outbox_s1")
# The lease and the log's session, as the test's serve file sets them: long, so that a drained
# pod's shards and partitions moving before either could run out shows it gave them back.
LEASE_S = 20
SESSION_S = 15


def wait_for(what, predicate, timeout=60):
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    fail(f"timed out waiting for {what}")


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
                              str(self.port), "-c", "fsync=off", "-c", "full_page_writes=off"], user=self.user,
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "postgres.log"), "a"))
        wait_for("PostgreSQL to take connections", lambda: self.psql("postgres", "SELECT 1", check=False) == "1")

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
        self.dir = os.path.join(tmp, "etcd")
        self.port, peer = free_port(), free_port()
        client = f"http://127.0.0.1:{self.port}"
        peer_url = f"http://127.0.0.1:{peer}"
        start(["etcd", "--name", "test", "--data-dir", self.dir, "--listen-client-urls", client, "--advertise-client-urls",
               client, "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url, "--initial-cluster",
               f"test={peer_url}"], stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "etcd.log"), "w"))
        wait_for("etcd to answer", lambda: self.healthy())

    def healthy(self):
        try:
            return call(self.port, "GET", "/health", key="")[0] == 200
        except OSError:
            return False


class Redis:
    def __init__(self, tmp):
        self.port = free_port()
        start(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
               "--appendfsync", "always", "--dir", tmp, "--maxmemory-policy", "noeviction"],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for("Redis to answer", self.up)

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


def serve_config(tmp, pg, etcd, redis, world_port):
    """config/serve-outbox.yaml on this test's servers, with short leases and sessions."""
    text = open(os.path.join(ROOT, "config", "serve-outbox.yaml")).read()
    for i, db in enumerate(SHARDS):
        text = text.replace(f"host=127.0.0.1 port=5433 user=postgres dbname={db} connect_timeout=5", pg.conninfo(db))
    text = text.replace("http://127.0.0.1:2379", f"http://127.0.0.1:{etcd.port}")
    text = text.replace("127.0.0.1:6379", f"127.0.0.1:{redis.port}")
    text = text.replace("http://127.0.0.1:8093/downstream", f"http://127.0.0.1:{world_port}/downstream")
    text = text.replace("lease: 10s", f"lease: {LEASE_S}s").replace("renew_every: 3s", "renew_every: 1s")
    text = text.replace("session_timeout: 10s", f"session_timeout: {SESSION_S}s")
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


def main():
    tmp = tempfile.mkdtemp(prefix="relaysim-outbox-e2e-")
    pg = Postgres()
    pg.start()
    for db in SHARDS:
        pg.psql("postgres", f"CREATE DATABASE {db}")
    etcd = Etcd(tmp)
    redis = Redis(tmp)
    world_port = free_port()
    config = serve_config(tmp, pg, etcd, redis, world_port)
    effects = os.path.join(tmp, "effects.db")
    world = start([RELAYSIM, "world", os.path.join(ROOT, "scenarios", "outbox-quickstart.yaml"), "--serve", config,
                   "--listen", f"127.0.0.1:{world_port}", "--effects", effects, "--receipts",
                   os.path.join(tmp, "world.jsonl")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first_line(world, "relaysim world")

    pods, ports = {}, {}
    for pod in (1, 2):
        ports[pod] = free_port()
        pods[pod] = start([RELAYSIM, "serve", config, "--pod", str(pod), "--listen", f"127.0.0.1:{ports[pod]}"],
                          stdout=subprocess.PIPE, stderr=open(os.path.join(tmp, f"serve-{pod}.log"), "w"), text=True)
        line = first_line(pods[pod], f"relaysim serve --pod {pod}")
        if "the outbox relay listening on" not in line:
            fail(f"serve --pod {pod} announced: {line}")
    print(f"outbox_e2e: PostgreSQL, etcd, Redis, a world and two pods up in {tmp}", flush=True)

    # Every shard has a leader among the two pods.
    def leaders():
        led = set()
        for pod in pods:
            if pods[pod].poll() is None:
                led |= set(call(ports[pod], "GET", "/v1/status")[1]["leads"])
        return led == {0, 1}
    wait_for("every shard to have a leader", leaders, timeout=LEASE_S * 3)

    def operate(n, only=None, first_key=0):
        committed = rolled_back = 0
        for i in range(n):
            pod = only or (1 + i % 2)
            fails = i % 10 == 7
            status, body = call(ports[pod], "POST", "/v1/orders", {"key": first_key + i % 97, "fails": fails}, key="")
            if fails and status == 409 and body["outcome"] == "rolled_back":
                rolled_back += 1
            elif not fails and status == 201 and body["outcome"] == "committed" and body["messages"] == 1:
                committed += 1
            else:
                fail(f"POST /v1/orders (fails {fails}) to pod {pod}: {status} {body}")
        return committed, rolled_back

    committed, rolled_back = operate(300)
    print(f"outbox_e2e: {committed} operations committed, {rolled_back} rolled back", flush=True)

    def all_final(expected):
        counts = statuses(pg)
        return sum(counts.values()) == expected and counts.get(0, 0) == 0 and counts.get(1, 0) == 0 and counts
    counts = wait_for(f"all {committed} messages to be handled or failed", lambda: all_final(committed))
    print(f"outbox_e2e: every message final: {counts.get(2, 0)} handled, {counts.get(3, 0)} failed", flush=True)

    def check_effects(expected_handled):
        with sqlite3.connect(effects) as db:
            twice = db.execute("SELECT message, count(*) FROM effect GROUP BY message HAVING count(*) > 1").fetchall()
            applied = db.execute("SELECT count(DISTINCT message) FROM effect").fetchone()[0]
        if twice:
            fail(f"effects applied more than once: {twice[:5]}")
        if applied < expected_handled:
            fail(f"{expected_handled} messages handled, but only {applied} effects in the downstream's database")
        return applied
    applied = check_effects(statuses(pg).get(2, 0))
    print(f"outbox_e2e: {applied} effects, none twice", flush=True)

    # Bad requests are refused with a reason, and the relay keeps serving.
    for body, pattern in (({"key": -1}, "key"), ({"key": 1, "types": ["nope"]}, "types"), ({"key": 1, "x": 1}, "unknown field"),
                          ({"key": 1, "fails": "yes"}, "fails")):
        status, answer = call(ports[1], "POST", "/v1/orders", body, key="")
        if status != 400 or pattern not in answer.get("error", ""):
            fail(f"POST /v1/orders {body}: {status} {answer}, expected a 400 about {pattern}")

    # Drain pod 1: it gives its leases back, so pod 2 leads both shards before a lease could run out.
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
    wait_for("pod 2 to lead both shards", lambda: set(call(ports[2], "GET", "/v1/status")[1]["leads"]) == {0, 1},
             timeout=LEASE_S * 3)
    took = time.monotonic() - drained_at
    print(f"outbox_e2e: pod 1 drained; pod 2 leads both shards {took:.1f} s after the SIGTERM (lease {LEASE_S} s)",
          flush=True)
    # Renewed at most a second before the SIGTERM, pod 1's leases run at least 19 s past it: a
    # handover within half that is one the drained pod made.
    if took >= LEASE_S / 2:
        fail(f"pod 2 took {took:.1f} s to lead both shards: the drained pod did not give its leases back")

    more, more_rolled_back = operate(100, only=2, first_key=1000)
    counts = wait_for(f"all {committed + more} messages to be handled or failed", lambda: all_final(committed + more))
    applied = check_effects(counts.get(2, 0))
    print(f"outbox_e2e: after the drain, {more} more committed: {counts.get(2, 0)} handled, {counts.get(3, 0)} failed, "
          f"{applied} effects, none twice", flush=True)
    print("outbox_e2e: PASS", flush=True)
    end_all()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
