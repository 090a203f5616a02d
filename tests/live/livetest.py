"""What the live service's tests (chaos.py, e2e.py) share: starting processes that end with the
test however it ends, failing with a message, finding a free port, waiting for a process's address
line, making an API key, and calling an HTTP endpoint with it."""
import atexit
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

NAME = os.path.splitext(os.path.basename(sys.argv[0]))[0]

# Every process a test starts, in a process group of its own: ended when the test ends, whether it
# passes, fails, raises, is interrupted or is killed.
_started = []
_started_lock = threading.Lock()
# setpriv --pdeathsig: the kernel kills the process when the test dies, even by SIGKILL (a ctest
# timeout), when no cleanup of the test's own can run.
_DIE_WITH_TEST = ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []


def start(args, user=None, **kwargs):
    """subprocess.Popen(args), in a process group of its own, ended when this test ends; run as
    `user` (a name) when given, as PostgreSQL must be when the test runs as root."""
    if user is not None:
        import ctypes
        import pwd
        entry = pwd.getpwnam(user)

        def become():
            os.setgid(entry.pw_gid)
            os.setgroups([])
            os.setuid(entry.pw_uid)
            # After the change of user, which clears it: the kernel kills it when the test dies.
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        process = subprocess.Popen(list(args), start_new_session=True, preexec_fn=become, **kwargs)
    else:
        process = subprocess.Popen(_DIE_WITH_TEST + list(args), start_new_session=True, **kwargs)
    with _started_lock:
        _started.append(process)
    return process


def end_all(grace=5.0):
    """Ends every process this test started and has not reaped: SIGTERM to each process group, then
    SIGKILL to whatever is left after `grace` seconds. Safe to call more than once."""
    with _started_lock:
        running = [p for p in _started if p.poll() is None]
    for p in running:
        _signal_group(p, signal.SIGTERM)
    until = time.monotonic() + grace
    for p in running:
        try:
            p.wait(timeout=max(0.0, until - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    with _started_lock:
        started = list(_started)
    # Whatever is left, and anything a process left behind in its group, gets SIGKILL.
    for p in started:
        _signal_group(p, signal.SIGKILL)
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def _signal_group(process, sig):
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


atexit.register(end_all)


def _exit_on_signal(signum, frame):
    sys.exit(128 + signum)  # runs the atexit cleanup, which a signal's default action would skip


for _sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(_sig, _exit_on_signal)


def fail(message):
    print(f"{NAME}: FAIL: {message}", flush=True)
    if threading.current_thread() is threading.main_thread():
        sys.exit(1)
    # sys.exit in another thread would end only that thread, and the test would go on.
    end_all(grace=1.0)
    sys.stderr.flush()
    os._exit(1)


def wait_for(what, predicate, timeout=30, every=0.05):
    """The first true value `predicate()` returns, asked every `every` seconds; a failure naming
    `what` after `timeout` seconds."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    fail(f"timed out waiting for {what}")


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
        process.wait()
        fail(f"{what} did not start: {process.stderr.read() if process.stderr else ''}")
    return result[0]


# The API key call() sends to each port (the service refuses calls without one).
KEYS = {}


def admin_key(relaysim, config, ports):
    """Makes an admin key in the database `config` names (`relaysim keys CONFIG --admin`), for call()
    to send to each of `ports` (the processes serving that database); returns it."""
    made = subprocess.run([relaysim, "keys", config, "--admin"], capture_output=True, text=True)
    if made.returncode != 0 or not made.stdout.startswith("rsk_"):
        fail(f"relaysim keys {config} --admin exited {made.returncode}: {made.stderr}")
    key = made.stdout.strip()
    for port in ports:
        KEYS[port] = key
    return key


def call(port, method, path, body=None, raw=False, timeout=10, key=None):
    """(status, the body as JSON, or as text when raw). Sends `key`, or the key admin_key() made for
    `port`; key="" sends none."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        key = KEYS.get(port) if key is None else key
        if key:
            headers["Authorization"] = f"Bearer {key}"
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
