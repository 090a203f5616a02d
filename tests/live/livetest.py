"""What the live service's tests (chaos.py, e2e.py) share: failing with a message, finding a free
port, waiting for a process's address line, and calling an HTTP endpoint."""
import http.client
import json
import os
import socket
import sys
import threading

NAME = os.path.splitext(os.path.basename(sys.argv[0]))[0]


def fail(message):
    print(f"{NAME}: FAIL: {message}", flush=True)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_line(process, what, timeout=20):
    """The process's first line of standard output (where it listens), or a failure."""
    result = []
    reader = threading.Thread(target=lambda: result.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not result or not result[0]:
        process.kill()
        fail(f"{what} did not start: {process.stderr.read() if process.stderr else ''}")
    return result[0]


def call(port, method, path, body=None, raw=False, timeout=10):
    """(status, the body as JSON, or as text when raw)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, (data.decode() if raw else json.loads(data or b"null"))
    finally:
        conn.close()


def read_receipts(path):
    """The receipts a `relaysim world` wrote (its first line, {"world": ...}, names the world)."""
    if not os.path.exists(path):
        return []
    return [r for r in map(json.loads, open(path)) if "world" not in r]
