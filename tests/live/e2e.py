#!/usr/bin/env python3
"""The live service end to end, on loopback, against `relaysim world`:

  readme   the README's commands: world with scenarios/quickstart.yaml, serve with
           config/serve-local.yaml (on free ports and a fresh database), one request; it is
           delivered, signed, visible at GET /v1/webhooks/{id} with its resolved URL and in /metrics.
  ssrf     the same, but without allowing loopback: the request fails at once, with reason
           forbidden_address, and the endpoint never sees it; the attempt's record and serve's log
           say which address was refused and its kind.
  badurl   ServiceB hands out URLs with credentials, another scheme, control characters: each
           request fails at once with reason bad_url, saying why in the API and serve's log.
  outage   ServiceB fails every lookup for four seconds (tests/live/outage-world.yaml): the
           breaker opens, requests wait blocked on ServiceB instead of failing, and every one is
           delivered after the outage.
  deadline an endpoint that always answers 503 and a three-second deadline: the requests are
           retried, never attempted after their deadline, dead-lettered by it (plus a bound),
           listed at /v1/dead-letters, and a replay makes one pending again with a fresh deadline.
  judged   four clients create for five seconds through two serve processes on one database while
           the world misbehaves every way it can (tests/live/judged-world.yaml); `relaysim judge`
           then finds every invariant held, judged by the simulator's own oracle from the processes'
           event logs, the world's receipts and the clients' calls — and finds W-retry broken against another retry policy, and W-noloss
           broken with a completion left out of the log.
  tls      an https endpoint with a certificate of the test's own authority: delivered when
           `ca_file` names that authority; a connect error, and nothing delivered, when it does not.

The outage, deadline and judged parts also hand their run to `relaysim judge`: the simulator's own
oracle must find every invariant held. Each part stops by itself within a minute. Usage: e2e.py RELAYSIM [PART...]
"""
import calendar
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from livetest import admin_key, call, end_all, fail, first_line, free_port, read_receipts, start

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


class Live:
    """A world and a service against it, stopped on leaving."""

    def __init__(self, scenario, serve_yaml, relaysim, events=False, processes=1):
        self.tmp = tempfile.mkdtemp(prefix="relaysim-e2e-")
        self.receipts = os.path.join(self.tmp, "receipts.jsonl")
        # Standard error to files: a pipe nobody reads until the end could fill and stall a process.
        self.world = start([relaysim, "world", scenario, "--listen", "127.0.0.1:0", "--receipts",
                            self.receipts, "--signing-secret", SECRET, "--hold", "5s"],
                           stdout=subprocess.PIPE, stderr=open(os.path.join(self.tmp, "world.log"), "w"), text=True)
        self.world_started = time.time()
        world_port = re.search(r"on http://127\.0\.0\.1:(\d+)", first_line(self.world, "relaysim world")).group(1)
        self.ports = [free_port() for _ in range(processes)]
        self.port = self.ports[0]
        config = self.config = os.path.join(self.tmp, "serve.yaml")
        self.database = os.path.join(self.tmp, "live.db")
        # Several processes (pods 1, 2, ...) share the database, each on its own port and event log.
        self.events = [os.path.join(self.tmp, f"events-{pod}.jsonl") for pod in range(1, processes + 1)]
        text = serve_yaml.replace("127.0.0.1:8081", "127.0.0.1:" + world_port)
        text = text.replace("127.0.0.1:8080", f"127.0.0.1:{self.port}")
        text = text.replace("relaysim-live.db", self.database)
        with open(config, "w") as f:
            f.write(text)
        self.key = admin_key(relaysim, config, self.ports)
        self.serves = []
        self.serve_logs = [os.path.join(self.tmp, f"serve-{pod}.log") for pod in range(1, processes + 1)]
        for pod, port in enumerate(self.ports, start=1):
            self.serves.append(start(
                [relaysim, "serve", config, "--pod", str(pod), "--listen", f"127.0.0.1:{port}"]
                + (["--events", self.events[pod - 1]] if events else []),
                stdout=subprocess.PIPE, stderr=open(self.serve_logs[pod - 1], "w"), text=True))
            first_line(self.serves[-1], "relaysim serve")
        self.serve = self.serves[0]
        self.judged = events
        self.keys = {}   # (cxid, request_id) -> the key's number, when judged
        self.calls = []  # every create call and its answer, for the judge
        self.lock = threading.Lock()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            for serve in self.serves:
                serve.send_signal(signal.SIGTERM)
            codes = [serve.wait(timeout=20) for serve in self.serves]
            self.world.send_signal(signal.SIGTERM)
            self.world.wait(timeout=10)
        finally:
            end_all()  # whatever did not stop (a wait that timed out raised)
        if exc[0] is None and any(codes):
            fail(f"serve exited {codes} after SIGTERM: {[open(log).read() for log in self.serve_logs]}")

    def create(self, cxid, request_id, payload):
        if self.judged:
            # The payload names its key as the simulator's load writes it: "seq" first, as stored.
            assert all(k > "seq" for k in payload), payload
            self.keys.setdefault((cxid, request_id), len(self.keys) + 1)
            payload = dict(payload, seq=self.keys[(cxid, request_id)])
        request = {"cxid": cxid, "request_id": request_id, "payload": payload}
        sent_ns = time.time_ns()
        status, answer = call(self.port, "POST", "/v1/webhooks", request)
        self.log_call(request, self.keys.get((cxid, request_id), 0), sent_ns, status, answer)
        if status != 202:
            fail(f"create answered {status}: {answer}")
        return answer["id"]

    def log_call(self, request, key, sent_ns, status, answer):
        """Keeps a create call and its answer for the judge (docs/live.md: the client's calls)."""
        answered = isinstance(answer, dict)
        with self.lock:
            self.calls.append(dict(request, key=key, sent_ns=sent_ns, answered_ns=time.time_ns(), status=status,
                                   id=answer.get("id") if answered else None,
                                   duplicate=bool(answer.get("duplicate")) if answered else False))

    def judge(self, relaysim, scenario, config=None, events=None):
        """`relaysim judge` on this run (once it has stopped): the completed process."""
        calls = os.path.join(self.tmp, "calls.jsonl")
        with open(calls, "w") as f:
            f.writelines(json.dumps(c) + "\n" for c in self.calls)
        return subprocess.run([relaysim, "judge", scenario, config or self.config, "--events", *(events or self.events),
                               "--receipts", self.receipts, "--calls", calls, "--database", self.database],
                              capture_output=True, text=True, timeout=60)

    def judged_by_the_oracle(self, relaysim, scenario):
        """Fails unless the simulator's oracle finds every invariant held; returns its summary."""
        result = self.judge(relaysim, scenario)
        if result.returncode != 0 or "every invariant holds" not in result.stdout:
            fail(f"the simulator's oracle judged the live run and found:\n{result.stdout}{result.stderr}")
        return "; ".join(line[len("judge: "):] for line in result.stdout.splitlines() if line.startswith("judge:"))

    def finished(self, ids, within):
        deadline = time.time() + within
        rows = {}
        while time.time() < deadline:
            for id in ids:
                if id not in rows:
                    status, row = call(self.port, "GET", f"/v1/webhooks/{id}")
                    if status == 200 and row["status"] in ("delivered", "failed", "dead_lettered"):
                        rows[id] = row
            if len(rows) == len(ids):
                return rows
            time.sleep(0.1)
        fail(f"{len(ids) - len(rows)} requests not finished after {within} s")

    def metric(self, name, labels=""):
        _, text = call(self.port, "GET", "/metrics", raw=True)
        match = re.search("^" + re.escape(name + labels) + r" (\S+)$", text, re.M)
        if not match:
            fail(f"/metrics has no {name}{labels}")
        return float(match.group(1))

    def receipts_of(self, id):
        return [r for r in read_receipts(self.receipts) if r["webhook_id"] == f"msg_{id}"]


def readme(relaysim):
    serve_yaml = open(os.path.join(ROOT, "config", "serve-local.yaml")).read()
    with Live(os.path.join(ROOT, "scenarios", "quickstart.yaml"), serve_yaml, relaysim) as live:
        id = live.create("cx7", "order-1001", {"event": "order.paid", "amount": 42})
        row = live.finished([id], 20)[id]
        if row["status"] != "delivered":
            fail(f"the README's request ended {row['status']}: {row}")
        url = row["attempts"][-1]["resolved_url"]
        if not re.fullmatch(r"http://127\.0\.0\.1:\d+/ep7/hooks/cx7/v1", url) or row["attempts"][-1]["serviceb_version"] != 1:
            fail(f"the attempt's resolved_url or serviceb_version is not ServiceB's: {row['attempts'][-1]}")
        receipts = live.receipts_of(id)
        if not receipts or receipts[-1]["signature"] != "valid" or receipts[-1]["status"] != 200:
            fail(f"the endpoint's receipt is missing or unsigned: {receipts}")
        if live.metric("relaysim_requests", '{status="delivered"}') != 1 or live.metric("relaysim_attempts_total", '{result="2xx"}') < 1:
            fail("/metrics does not count the delivery")
        # The Grafana dashboard's live panels read figures /metrics serves (checked by the
        # Prometheus project's own parser, in Debian's interpreter).
        _, text = call(live.port, "GET", "/metrics", raw=True)
        metrics_file = os.path.join(live.tmp, "metrics.txt")
        with open(metrics_file, "w") as f:
            f.write(text)
        checked = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "cli", "openmetrics_check.py"), "live", ROOT,
                                  metrics_file], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if checked.returncode != 0:
            fail("the dashboard against /metrics: " + checked.stdout)
        # A body over the limit is refused with 413 and its reason, and the client gets to read it
        # although it is still sending.
        with socket.create_connection(("127.0.0.1", live.port), timeout=10) as s:
            s.sendall(b"POST /v1/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 3000000\r\n\r\n" + b" " * 65536)
            answer = s.recv(4096).decode()
            if not answer.startswith("HTTP/1.1 413") or "longer than" not in answer:
                fail(f"an oversized body was not answered 413 with a reason: {answer!r}")
        # A chunked body's trailers are held to the header limit as the headers are: 16 KiB of them and
        # more is refused with 431 and its reason (a 59 MB trailer section was once read whole).
        with socket.create_connection(("127.0.0.1", live.port), timeout=10) as s:
            s.sendall(b"POST /v1/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n")
            try:
                for n in range(16):  # 1 MiB of trailer fields, then their end
                    s.sendall(b"X-Trailer-%d: " % n + b"a" * 65536 + b"\r\n")
                s.sendall(b"\r\n")
            except OSError:
                pass  # the service stopped reading once it had refused
            answer = s.recv(4096).decode()
            if not answer.startswith("HTTP/1.1 431") or "trailers are longer than 16384 bytes" not in answer:
                fail(f"a chunked request with 1 MiB of trailers was not refused with 431 and a reason: {answer!r}")
        if call(live.port, "GET", "/healthz")[0] != 200:
            fail("the service does not answer after refusing a request's trailers")
        # A HEAD answer carries no body, so the next answer on the connection reads cleanly.
        with socket.create_connection(("127.0.0.1", live.port), timeout=10) as s:
            s.sendall(b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := s.recv(4096):
                answer += chunk
            first, _, rest = answer.decode().partition("\r\n\r\n")
            if not first.startswith("HTTP/1.1 405") or not rest.startswith("HTTP/1.1 200"):
                fail(f"a HEAD answer carried a body, or the next answer was lost: {answer!r}")
        print(f"e2e: readme: request {id} delivered to {url}, signed, in /metrics; an oversized body gets 413, "
              f"oversized trailers 431; HEAD answers carry no body", flush=True)
    # A tenant with a key of its own: its deliveries are signed with that key, which the world
    # (knowing only the default key) does not accept; another tenant's still verify.
    own = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MjQyNDI="
    tenant_yaml = serve_yaml.replace("  allow_addresses:", f"  tenant_secrets: [{{cxid: cx7, secret: {own}}}]\n  allow_addresses:")
    with Live(os.path.join(ROOT, "scenarios", "quickstart.yaml"), tenant_yaml, relaysim) as live:
        ids = [live.create("cx7", "own-key", {}), live.create("cx8", "default-key", {})]
        live.finished(ids, 20)
        verdicts = [live.receipts_of(id)[-1]["signature"] for id in ids]
        if verdicts != ["no_match", "valid"]:
            fail(f"cx7 (own key) and cx8 (default key) were signed as {verdicts}, not ['no_match', 'valid']")
        print("e2e: readme: a tenant with its own key is signed with it, the others with the default", flush=True)


def ssrf(relaysim):
    serve_yaml = open(os.path.join(ROOT, "config", "serve-local.yaml")).read()
    serve_yaml = re.sub(r"\n\s*allow_addresses:.*", "", serve_yaml)
    with Live(os.path.join(ROOT, "scenarios", "quickstart.yaml"), serve_yaml, relaysim) as live:
        id = live.create("cx7", "internal-1", {"event": "probe"})
        row = live.finished([id], 10)[id]
        if row["status"] != "failed" or row["reason"] != "forbidden_address" or row["attempts"][-1].get("error") != "forbidden_address":
            fail(f"a URL on loopback was not refused as forbidden_address: {row}")
        detail = row["attempts"][-1].get("detail", "")
        if "127.0.0.1 is a loopback address" not in detail:
            fail(f"the attempt's record does not say which address was refused and its kind: {row['attempts'][-1]}")
        if live.receipts_of(id):
            fail("the endpoint on loopback received the request the guard refused")
        logged = not_sent_lines(live.serve_logs[0])
        if [(l["request"], l["error"], l["detail"]) for l in logged] != [(id, "forbidden_address", detail)]:
            fail(f"serve's log does not name the refused attempt, its address and kind: {logged}")
        print(f"e2e: ssrf: request {id} to a loopback URL failed at once (forbidden_address: {detail}), in the API "
              f"and serve's log; the endpoint saw nothing", flush=True)


def not_sent_lines(log):
    """serve's log lines of attempts that sent nothing (a refused address, a bad URL), as JSON."""
    prefix = "relaysim serve: not sent: "
    return [json.loads(line[len(prefix):]) for line in open(log) if line.startswith(prefix)]


def stub_serviceb(urls):
    """A ServiceB in this process, answering each cxid's URL from `urls` (version 1); 404 for others.
    `urls` may be one URL: every cxid's."""
    import http.server

    class ServiceB(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            url = urls if isinstance(urls, str) else urls.get(self.path.rsplit("/", 1)[-1])
            body = json.dumps({"url": url, "version": 1}).encode()
            self.send_response(200 if url is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ServiceB)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def badurl(relaysim):
    """ServiceB hands out URLs that cannot be called: each request fails at once with reason bad_url
    and says why, in the API and in serve's log, where the URL's characters stay data."""
    endpoint = f"127.0.0.1:{free_port()}"
    urls = {"cx1": f"http://user:secret@{endpoint}/hook", "cx2": f"ftp://{endpoint}/hook",
            "cx3": f"http://{endpoint}/a\x01b", "cx4": f"http://{endpoint}/a\r\nX-Injected: 1"}
    says = {"cx1": "credentials", "cx2": "scheme 'ftp'", "cx3": "control character", "cx4": "control character"}
    serviceb = stub_serviceb(urls)
    tmp = tempfile.mkdtemp(prefix="relaysim-badurl-")
    port = free_port()
    config, log = os.path.join(tmp, "serve.yaml"), os.path.join(tmp, "serve.log")
    with open(config, "w") as f:
        f.write(f"""serve:
  listen: 127.0.0.1:{port}
  database: {os.path.join(tmp, 'live.db')}
  serviceb: http://127.0.0.1:{serviceb.server_address[1]}
  allow_addresses: [loopback]
platform:
  retry: {{backoff: fixed, initial: 100ms, jitter: none, deadline: 1h}}
""")
    admin_key(relaysim, config, [port])
    serve = start([relaysim, "serve", config], stdout=subprocess.PIPE, stderr=open(log, "w"), text=True)
    first_line(serve, "relaysim serve")
    ids = {}
    for cxid in urls:
        status, answer = call(port, "POST", "/v1/webhooks", {"cxid": cxid, "request_id": "bad-url", "payload": {}})
        ids[cxid] = answer["id"]
    rows = {}
    deadline = time.time() + 10
    while len(rows) < len(ids) and time.time() < deadline:
        for cxid, id in ids.items():
            _, row = call(port, "GET", f"/v1/webhooks/{id}")
            if row["status"] in ("delivered", "failed", "dead_lettered"):
                rows[cxid] = row
        time.sleep(0.1)
    serve.send_signal(signal.SIGTERM)
    serve.wait(timeout=20)
    for cxid, id in ids.items():
        row = rows.get(cxid)
        if row is None or row["status"] != "failed" or row["reason"] != "bad_url" or len(row["attempts"]) != 1:
            fail(f"a request to {urls[cxid]!r} did not fail at once with reason bad_url: {row}")
        attempt = row["attempts"][0]
        if attempt.get("error") != "bad_url" or says[cxid] not in attempt.get("detail", ""):
            fail(f"the attempt to {urls[cxid]!r} does not say why its URL cannot be called: {attempt}")
    logged = {l["request"]: l for l in not_sent_lines(log)}
    for cxid, id in ids.items():
        if logged.get(id, {}).get("url") != urls[cxid] or logged[id]["error"] != "bad_url":
            fail(f"serve's log does not name the bad URL {urls[cxid]!r} of request {id}: {logged.get(id)}")
    if "X-Injected" in "".join(line for line in open(log) if not line.startswith("relaysim serve: not sent: ")):
        fail("a URL's line break reached serve's log as a line of its own")
    print(f"e2e: badurl: {len(ids)} requests to URLs with credentials, another scheme or control characters failed at "
          f"once with reason bad_url, each saying why in the API and in serve's log", flush=True)


def outage(relaysim):
    serve_yaml = open(os.path.join(ROOT, "config", "serve-local.yaml")).read()
    serve_yaml = serve_yaml[:serve_yaml.index("\nplatform:")] + """
platform:
  concurrency_per_pod: 16
  lookup_timeout: 500ms
  url_cache: {ttl: 1s}
  serviceb_breaker: {window: 10s, min_calls: 5, failure_rate: 50%, open_for: 1s, half_open_probes: 1}
  dependency_backoff: {backoff: exponential, initial: 200ms, multiplier: 2, max_interval: 1s, jitter: full}
"""
    scenario = os.path.join(HERE, "outage-world.yaml")
    with Live(scenario, serve_yaml, relaysim, events=True) as live:
        time.sleep(max(0.0, live.world_started + 2.5 - time.time()))  # inside the outage
        ids = [live.create(f"cx{n}", f"outage-{n}", {"v": n}) for n in range(40)]
        blocked = 0
        while time.time() < live.world_started + 5.5:
            blocked = max(blocked, live.metric("relaysim_requests", '{status="blocked_on_dependency"}'))
            time.sleep(0.1)
        opened = live.metric("relaysim_serviceb_breaker_transitions_total")
        rows = live.finished(ids, 30)
        undelivered = [r for r in rows.values() if r["status"] != "delivered"]
        if undelivered:
            fail(f"{len(undelivered)} requests were not delivered after the outage: {undelivered[0]}")
        if opened < 1 or blocked < 1:
            fail(f"the breaker did not open ({opened} transitions) or nothing waited blocked ({blocked})")
        deferred = sum(1 for r in rows.values() if r["deferrals"] > 0)
    summary = live.judged_by_the_oracle(relaysim, scenario)
    print(f"e2e: outage: the breaker changed state {int(opened)} times, up to {int(blocked)} requests waited "
          f"blocked, {deferred} were deferred; all {len(ids)} delivered after the outage; the simulator's oracle: {summary}",
          flush=True)


def deadline(relaysim):
    serve_yaml = open(os.path.join(ROOT, "config", "serve-local.yaml")).read()
    serve_yaml = serve_yaml[:serve_yaml.index("\nplatform:")] + """
platform:
  http_timeout: 1s
  lookup_timeout: 500ms
  lease: 5s
  retry: {backoff: exponential, initial: 200ms, multiplier: 2, max_interval: 1s, jitter: full, deadline: 3s}
"""
    bound = 1.5  # seconds past the deadline a request may take to be dead-lettered: a due time and a claim
    scenario = os.path.join(HERE, "failing-world.yaml")
    with Live(scenario, serve_yaml, relaysim, events=True) as live:
        ids = [live.create(f"cx{n}", f"doomed-{n}", {"v": n}) for n in range(5)]
        rows = live.finished(ids, 15)
        parse = lambda text: calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")) + float(text[19:-1] or 0)
        for id, row in rows.items():
            if row["status"] != "dead_lettered" or row["reason"] != "deadline":
                fail(f"request {id} ended {row['status']} ({row.get('reason')}), not dead-lettered by its deadline")
            limit = parse(row["deadline_at"])
            late = [a for a in row["attempts"] if parse(a["started_at"]) > limit]
            if late:
                fail(f"request {id} was attempted after its deadline {row['deadline_at']}: {late}")
            if len(row["attempts"]) < 2:
                fail(f"request {id} was not retried: {row['attempts']}")
            if parse(row["finished_at"]) > limit + bound:
                fail(f"request {id} was dead-lettered at {row['finished_at']}, more than {bound} s after {row['deadline_at']}")
        status, page = call(live.port, "GET", "/v1/dead-letters?limit=3")
        listed = [d["id"] for d in page["dead_letters"]]
        status, rest = call(live.port, "GET", page["next"])
        listed += [d["id"] for d in rest["dead_letters"]]
        if sorted(listed) != sorted(ids):
            fail(f"/v1/dead-letters listed {listed}, not {ids}")
        status, answer = call(live.port, "POST", f"/v1/webhooks/{ids[0]}/replay")
        status, row = call(live.port, "GET", f"/v1/webhooks/{ids[0]}")
        if row["status"] == "dead_lettered" and row["replays"] == 0 or parse(row["deadline_at"]) <= parse(rows[ids[0]]["deadline_at"]):
            fail(f"the replay did not revive the request with a fresh deadline: {answer} {row}")
        attempts = sum(len(r["attempts"]) for r in rows.values())
    summary = live.judged_by_the_oracle(relaysim, scenario)
    print(f"e2e: deadline: {len(ids)} requests retried ({attempts} attempts), none after its deadline, all dead-lettered "
          f"within {bound} s of it, listed a page at a time; a replay revived one; the simulator's oracle: {summary}",
          flush=True)


def tls(relaysim):
    """A ServiceB stub handing out an https URL, and an https endpoint, both in this process."""
    import http.server
    import ssl
    tmp = tempfile.mkdtemp(prefix="relaysim-tls-")
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    received = []
    connections = []  # the client's port of each request: one per connection

    class Endpoint(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keeps its connections open, so serve's pool may reuse them

        def do_POST(self):
            received.append((self.headers.get("webhook-id"), self.headers.get("webhook-signature")))
            connections.append(self.client_address[1])
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    endpoint = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    endpoint.socket = context.wrap_socket(endpoint.socket, server_side=True)
    url = f"https://127.0.0.1:{endpoint.server_address[1]}/hooks/tls"
    serviceb = stub_serviceb(url)
    threading.Thread(target=endpoint.serve_forever, daemon=True).start()

    def serve_with(ca_line):
        port = free_port()
        config = os.path.join(tmp, f"serve-{port}.yaml")
        with open(config, "w") as f:
            f.write(f"""serve:
  listen: 127.0.0.1:{port}
  database: {os.path.join(tmp, f'{port}.db')}
  serviceb: http://127.0.0.1:{serviceb.server_address[1]}
  signing_secret: {SECRET}
  allow_addresses: [loopback]
{ca_line}platform:
  http_timeout: 2s
  retry: {{backoff: fixed, initial: 10s, jitter: none, deadline: 1h}}
""")
        admin_key(relaysim, config, [port])
        p = start([relaysim, "serve", config], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first_line(p, "relaysim serve")
        return p, port

    trusted, port = serve_with(f"  ca_file: {cert}\n")
    try:
        status, answer = call(port, "POST", "/v1/webhooks", {"cxid": "cx1", "request_id": "tls-1", "payload": {"secure": True}})
        deadline = time.time() + 10
        row = None
        while time.time() < deadline:
            _, row = call(port, "GET", f"/v1/webhooks/{answer['id']}")
            if row["status"] == "delivered":
                break
            time.sleep(0.1)
        if row["status"] != "delivered" or not received or not received[-1][1]:
            fail(f"an https endpoint trusted through ca_file was not delivered to, signed: {row}")
        # Three more, one after the other, within the pool's idle time (keep_alive, 1 s by default):
        # they go over the TLS connection the first opened, not a handshake each.
        for n in range(2, 5):
            _, answer = call(port, "POST", "/v1/webhooks", {"cxid": "cx1", "request_id": f"tls-{n}", "payload": {"n": n}})
            deadline = time.time() + 10
            while time.time() < deadline and call(port, "GET", f"/v1/webhooks/{answer['id']}")[1]["status"] != "delivered":
                time.sleep(0.05)
        if len(received) != 4 or len(set(connections)) != 1:
            fail(f"four https deliveries in a row took {len(set(connections))} connections (client ports {connections}), "
                 "not one kept alive")
    finally:
        trusted.send_signal(signal.SIGTERM)
        trusted.wait(timeout=20)
    untrusted, port = serve_with("")
    try:
        status, answer = call(port, "POST", "/v1/webhooks", {"cxid": "cx1", "request_id": "tls-2", "payload": {}})
        deadline = time.time() + 10
        while time.time() < deadline:
            _, row = call(port, "GET", f"/v1/webhooks/{answer['id']}")
            if row["attempts"]:
                break
            time.sleep(0.1)
        if row["status"] == "delivered" or not row["attempts"] or row["attempts"][0].get("error") != "connect_error":
            fail(f"an https endpoint with an untrusted certificate was not refused as a connect error: {row}")
        if len(received) != 4:
            fail("the endpoint with an untrusted certificate received the request")
    finally:
        untrusted.send_signal(signal.SIGTERM)
        untrusted.wait(timeout=20)
    print(f"e2e: tls: delivered over https when ca_file trusts the endpoint's authority, four in a row over one kept-alive "
          f"connection; a connect error without it", flush=True)


JUDGED_PLATFORM = """
platform:
  concurrency_per_pod: 16
  http_timeout: 1s
  lookup_timeout: 500ms
  lease: 5s
  url_cache: {ttl: 1s}
  serviceb_breaker: {window: 4s, min_calls: 5, failure_rate: 50%, open_for: 500ms, half_open_probes: 1}
  dependency_backoff: {backoff: exponential, initial: 200ms, multiplier: 2, max_interval: 1s, jitter: full}
  retry: {backoff: exponential, initial: 200ms, multiplier: 2, max_interval: 1s, jitter: full, deadline: 6s}
"""


def judged(relaysim):
    """Clients create keys (some twice, some again with another payload) for five seconds, through two
    serve processes on one database, while the world misbehaves every way it can; once all are finished, `relaysim judge` must find every
    invariant held — and must not when it is told another retry policy, or when a completion is
    missing from the log."""
    serve_yaml = open(os.path.join(ROOT, "config", "serve-local.yaml")).read()
    serve_yaml = serve_yaml[:serve_yaml.index("\nplatform:")] + JUDGED_PLATFORM
    scenario = os.path.join(HERE, "judged-world.yaml")
    seed = int(os.environ.get("RELAYSIM_SEED", random.randrange(1 << 30)))
    with Live(scenario, serve_yaml, relaysim, events=True, processes=2) as live:
        acked = set()

        def client(number):
            rng = random.Random(seed * 8 + number)
            sent = []  # (key, payload) this client has created
            stop = time.time() + 5
            while time.time() < stop:
                if sent and rng.random() < 0.15:
                    key, payload = rng.choice(sent)
                    if rng.random() < 0.3:
                        payload = {"seq": key, "v": payload["v"] + 1}  # the same key, another payload: 409
                else:
                    with live.lock:
                        key = 1 + len(live.calls) * 8 + number
                    payload = {"seq": key, "v": rng.randrange(1000)}
                    sent.append((key, payload))
                request = {"cxid": f"cx{key % 60}", "request_id": f"r{key}", "payload": payload}
                sent_ns = time.time_ns()
                try:
                    status, answer = call(live.ports[number % 2], "POST", "/v1/webhooks", request)
                except OSError:
                    status, answer = 0, None
                live.log_call(request, key, sent_ns, status, answer)
                if status == 202:
                    with live.lock:
                        acked.add(answer["id"])
                time.sleep(rng.uniform(0, 0.05))

        threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rows = live.finished(sorted(acked), 40)
    ended = {}
    for row in rows.values():
        ended[row["status"]] = ended.get(row["status"], 0) + 1
    summary = live.judged_by_the_oracle(relaysim, scenario)
    # The same run, judged against a retry policy it did not run with: W-retry must say so.
    other = os.path.join(live.tmp, "other.yaml")
    with open(other, "w") as f:
        f.write(open(live.config).read().replace("initial: 200ms, multiplier: 2, max_interval: 1s, jitter: full, deadline",
                                               "initial: 20ms, multiplier: 2, max_interval: 50ms, jitter: full, deadline"))
    wrong = live.judge(relaysim, scenario, config=other)
    if wrong.returncode != 1 or not re.search(r"W-retry +\d+ broken", wrong.stdout):
        fail(f"judged against another retry policy, the oracle did not find W-retry broken:\n{wrong.stdout}{wrong.stderr}")
    # The same run with one delivery's completion left out of the log: W-noloss must say so.
    events = open(live.events[0]).read().splitlines(keepends=True)
    dropped = next(i for i, line in enumerate(events) if '"event":"completed"' in line and '"status":"delivered"' in line)
    cut = os.path.join(live.tmp, "cut.jsonl")
    with open(cut, "w") as f:
        f.writelines(events[:dropped] + events[dropped + 1:])
    missing = live.judge(relaysim, scenario, events=[cut] + live.events[1:])
    if missing.returncode != 1 or not re.search(r"W-noloss +\d+ broken", missing.stdout):
        fail(f"with a completion missing from the log, the oracle did not find W-noloss broken:\n{missing.stdout}{missing.stderr}")
    print(f"e2e: judged (seed {seed}): 2 serve processes on one database, {len(live.calls)} client calls, {len(acked)} "
          f"requests acknowledged, ended {', '.join(f'{n} {s}' for s, n in sorted(ended.items()))}; the simulator's oracle: "
          f"{summary}; it finds W-retry broken against another policy and W-noloss with a completion left out", flush=True)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    parts = sys.argv[2:] or ["readme", "ssrf", "badurl", "outage", "deadline", "tls", "judged"]
    for part in parts:
        {"readme": readme, "ssrf": ssrf, "badurl": badurl, "outage": outage, "deadline": deadline, "tls": tls,
         "judged": judged}[part](sys.argv[1])


if __name__ == "__main__":
    main()
