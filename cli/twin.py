#!/usr/bin/env python3
"""`./relaysim twin SCENARIO`: one webhook scenario run twice — live, by `relaysim serve` processes
(one per pod, on one SQLite database) against `relaysim world` on loopback, on the wall clock; and
simulated, by `relaysim run` — with the same seed and the same load, and their figures side by side.

The live run's figures are counted by the simulator's own metrics from the run's records
(`relaysim judge --json`), so each row is one definition measured twice. A row agrees when the two
differ by at most the tolerance (counts 10 %, latencies and drain 20 %, each with a floor for
small numbers); the exit status is 0 when every row agrees, 1 when one does not, 2 for a bad
scenario or command line, 3 when a process fails. docs/live.md says what the rows mean and why
they may differ."""
import argparse
import http.client
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import yaml

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}

# The rows: (metric, what it is, kind). A count agrees within 10 %, or within its noise: the two
# sides draw their faults independently, so the difference of two Poisson counts of means s and l
# has standard deviation sqrt(s + l), and a count of retries spreads wider than Poisson (each
# request's retries are geometric: at a 30 % error rate the variance is 1.8 times the mean), so
# the noise allowed is 4 sqrt(s + l), three of the retries' standard deviations. A small count's
# noise is larger than 10 % of it. A latency agrees within 20 % or 50 ms; the drain within 20 % or
# 1 s. A percentile of fewer samples than it needs to be more than one or two of them (p99 of fewer
# than 1000 deliveries) is shown but not judged.
ROWS = [
    ("ingested", "requests acknowledged", "count"),
    ("delivered", "delivered", "count"),
    ("failed", "failed", "count"),
    ("dead_lettered", "dead-lettered", "count"),
    ("attempts", "HTTP attempts", "count"),
    ("retries", "retries (attempts after a request's first)", "count"),
    ("deferrals", "deferrals (ServiceB could not answer)", "count"),
    ("serviceb_calls", "ServiceB calls", "count"),
    ("breaker_opened", "breaker opens", "count"),
    ("notifications", "tenant notices", "count"),
    ("latency_p50_s", "ingest to delivered, median (s)", "latency"),
    ("latency_p99_s", "ingest to delivered, 99th percentile (s)", "latency"),
    ("backlog_peak", "backlog: the most open at once around the fault", "count"),
    ("drain_90_s", "drain: the fault's end to 9/10 of its backlog through (s)", "drain"),
]
TOLERANCE = {"count": 0.10, "latency": 0.20, "drain": 0.20}
FLOOR = {"latency": 0.05, "drain": 1.0}
# Deliveries a percentile needs before it is judged.
SAMPLES = {"latency_p50_s": 20, "latency_p99_s": 1000}


def say(message):
    print(f"relaysim twin: {message}", file=sys.stderr, flush=True)


def die(message, status=2):
    say(message)
    sys.exit(status)


def seconds(text):
    """A scenario duration in seconds, read as docs/scenario-format.md writes them: "0", "90s",
    "250ms", "1h30m" (the scenario was validated first; this reads what relaysim accepted)."""
    s = str(text).strip()
    if s == "0":
        return 0.0
    parts = re.findall(r"([0-9]*\.?[0-9]+)\s*(ns|us|ms|min|s|m|h|d)\s*", s)
    if not parts or "".join(re.sub(r"\s", "", n + u) for n, u in parts) != re.sub(r"\s", "", s):
        raise ValueError(f"'{text}' is not a duration such as 90s, 3m or 1h30m")
    return sum(float(n) * UNITS[u] for n, u in parts)


def duration_text(s):
    return f"{round(s * 1000)}ms"


# The load starts this long after the world: the serve processes start in between (their logs
# must begin after the world's clock, which the judge reads every time against).
LOAD_START = 3.0


def cut(scenario, load, tail):
    """The scenario with its load cut to its first `load` seconds and moved LOAD_START later, and
    a duration that leaves `tail` seconds after it for the backlog to drain; refuses what a live
    run cannot do. Both twins run this same file."""
    if scenario.get("system") != "webhook":
        die("the twin runs webhook scenarios only")
    web = scenario.get("webhook") or {}
    for key in ("faults", "replays"):
        if web.get(key) or scenario.get(key):
            die(f"the scenario has {key}: the twin runs a world and a platform left alone "
                "(remove them, or use a copy without)")
    segments = []
    for seg in web.get("load") or []:
        seg = dict(seg)
        if "burst" in seg:
            at = seconds(seg.get("at", "0s"))
            if at < load:
                seg["at"] = duration_text(at + LOAD_START)
                segments.append(seg)
            continue
        start = seconds(seg.get("from", "0s"))
        if start >= load:
            continue
        end = seconds(seg["to"]) if "to" in seg else seconds(scenario["duration"])
        seg["from"] = duration_text(start + LOAD_START)
        seg["to"] = duration_text(min(end, load) + LOAD_START)
        segments.append(seg)
    if not segments:
        die("the scenario has no load in the part the twin runs")
    web["load"] = segments
    scenario["webhook"] = web
    scenario["duration"] = duration_text(LOAD_START + load + tail)
    scenario.pop("expect", None)  # the whole scenario's expectations are not the cut one's
    scenario.pop("warmup", None)  # the live figures count from the start: so do the simulated
    return scenario


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


STARTED = []


def start(args, **kwargs):
    p = subprocess.Popen(args, start_new_session=True, **kwargs)
    STARTED.append(p)
    return p


def end_all():
    for p in STARTED:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def first_line(process, what, timeout=30):
    result = []
    reader = threading.Thread(target=lambda: result.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not result or not result[0]:
        die(f"{what} did not start", 3)
    return result[0]


def open_requests(port, key):
    """Requests acknowledged and not terminal, as serve's /metrics counts them in the store."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/metrics", headers={"Authorization": f"Bearer {key}"})
        text = conn.getresponse().read().decode()
    except (OSError, http.client.HTTPException) as e:
        die(f"serve (pod 1) stopped answering: {e}", 3)
    finally:
        conn.close()
    total = 0
    for status in ("pending", "blocked_on_dependency", "in_flight"):
        m = re.search(r'^relaysim_requests\{status="' + status + r'"\} (\S+)$', text, re.M)
        total += int(float(m.group(1))) if m else 0
    return total


def live_run(relaysim, scenario_path, scenario, tmp, drain_timeout):
    platform = dict(scenario["webhook"].get("platform") or {})
    pods = int(platform.get("pods", 1))
    world_port = free_port()
    ports = [free_port() for _ in range(pods)]
    config = os.path.join(tmp, "serve.yaml")
    with open(config, "w") as f:
        yaml.safe_dump({"serve": {"database": os.path.join(tmp, "live.db"), "durability": "full",
                                  "serviceb": f"http://127.0.0.1:{world_port}/serviceb",
                                  "allow_addresses": ["loopback"], "drain_timeout": "30s"},
                        "platform": platform}, f, sort_keys=False)
    made = subprocess.run([relaysim, "keys", config, "--admin"], capture_output=True, text=True)
    if made.returncode != 0:
        die(f"relaysim keys: {made.stderr.strip()}", made.returncode)
    key = made.stdout.strip()
    log = open(os.path.join(tmp, "processes.log"), "w")
    events = [os.path.join(tmp, f"events-{i + 1}.jsonl") for i in range(pods)]
    receipts = os.path.join(tmp, "receipts.jsonl")
    calls = os.path.join(tmp, "calls.jsonl")
    world_started = time.time()
    world = start([relaysim, "world", scenario_path, "--listen", f"127.0.0.1:{world_port}", "--receipts", receipts,
                   "--calls", calls, *sum((["--drive", f"http://127.0.0.1:{p}"] for p in ports), [])],
                  stdout=subprocess.PIPE, stderr=log, text=True, env=dict(os.environ, RELAYSIM_API_KEY=key))
    first_line(world, "world")
    serves = []
    for i in range(pods):
        p = start([relaysim, "serve", config, "--listen", f"127.0.0.1:{ports[i]}", "--pod", str(i + 1),
                   "--events", events[i]], stdout=subprocess.PIPE, stderr=log, text=True)
        first_line(p, f"serve (pod {i + 1})")
        serves.append(p)
    if time.time() - world_started > LOAD_START:
        die(f"the serve processes took longer than {LOAD_START:.0f} s to start; the load had begun", 3)
    load_s = seconds(scenario["duration"])
    say(f"live: {pods} serve processes and the world on loopback; the load runs for up to "
        f"{load_s:.0f} s of wall-clock time")
    done = first_line(world, "the world's load", timeout=load_s + 120)
    if "the load is done" not in done:
        die(f"the world's load did not finish: {done.strip()}", 3)
    until = time.time() + drain_timeout
    while time.time() < until:
        left = open_requests(ports[0], key)
        if left == 0:
            break
        time.sleep(0.5)
    else:
        say(f"live: {left} requests still open after {drain_timeout:.0f} s; judged as they are")
    time.sleep(1.0)  # the last completions' notices, logged after their commit
    for p in serves:
        p.send_signal(signal.SIGTERM)
    try:
        for p in serves:
            if p.wait(timeout=60) != 0:
                die(f"a serve process exited {p.returncode} (its log: {log.name})", 3)
        world.send_signal(signal.SIGTERM)
        world.wait(timeout=30)
    except subprocess.TimeoutExpired as e:
        die(f"a process did not stop within {e.timeout:.0f} s of SIGTERM (the log: {log.name})", 3)
    out = os.path.join(tmp, "live.json")
    judged = subprocess.run([relaysim, "judge", scenario_path, config, "--events", *events, "--receipts", receipts,
                             "--calls", calls, "--database", os.path.join(tmp, "live.db"), "--json", out],
                            capture_output=True, text=True)
    if not os.path.exists(out):
        die(f"relaysim judge failed:\n{judged.stdout}{judged.stderr}", 3)
    with open(out) as f:
        result = json.load(f)
    if result["verdict"] != "PASS":
        say("live: the simulator's oracle found violations in the live run:\n" + judged.stdout)
    return result


def sim_run(relaysim, scenario_path, tmp, sets):
    out = os.path.join(tmp, "sim.json")
    ran = subprocess.run([relaysim, "run", scenario_path, "--json", out, "-q", *sum((["--set", s] for s in sets), [])],
                         capture_output=True, text=True)
    if not os.path.exists(out):
        die(f"relaysim run failed:\n{ran.stdout}{ran.stderr}", 3)
    with open(out) as f:
        return json.load(f)


def load_kept(directory, scenario):
    """The figures of the live run `--keep DIRECTORY` kept (live.json, as the judge wrote them), if
    that run was of this scenario cut the same way (scenario.yaml): another cut or seed would make
    every row a comparison of two different runs."""
    try:
        with open(os.path.join(directory, "scenario.yaml")) as f:
            ran = yaml.safe_load(f)
        with open(os.path.join(directory, "live.json")) as f:
            live = json.load(f)
    except (OSError, yaml.YAMLError, ValueError) as e:
        die(f"--live {directory}: not a live run kept by --keep ({e})")
    if ran != scenario:
        die(f"--live {directory}: its run was of another scenario, seed, --load or --tail than this one")
    if not isinstance(live, dict) or any(k not in live for k in ("metrics", "verdict", "drains", "violations")):
        die(f"--live {directory}: live.json is not the judge's figures of a run")
    return live


def first_drain(drains, field):
    """A field of the first fault episode's drain (docs/outputs.md): `drain_90_s`, the seconds to
    nine tenths drained, or `peak`; None when the run had no fault."""
    return drains[0][field] if drains else None


def compare(sim, live):
    """(metric, what, simulated, live, live - simulated, agree: True, False, or None when too few
    samples to judge)."""
    rows = []
    delivered = min(sim.get("delivered") or 0, live.get("delivered") or 0)
    for name, what, kind in ROWS:
        s, l = sim.get(name), live.get(name)
        if s is None and l is None:
            agree, diff = True, None
        elif s is None or l is None:
            agree, diff = False, None
        else:
            diff = l - s
            noise = 4 * math.sqrt(s + l) if kind == "count" else FLOOR[kind]
            agree = abs(diff) <= max(TOLERANCE[kind] * abs(s), noise)
        if name in SAMPLES and delivered < SAMPLES[name]:
            agree = None
        rows.append((name, what, s, l, diff, agree))
    return rows


def fmt(v, kind):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.0f}" if kind == "count" else f"{v:.3f}"


def main():
    parser = argparse.ArgumentParser(prog="./relaysim twin", description=__doc__.split("\n\n")[0])
    parser.add_argument("relaysim", help=argparse.SUPPRESS)
    parser.add_argument("scenario", help="a webhook scenario file")
    parser.add_argument("--load", default="3m",
                        help="how much of the scenario's load to run, from its start (default 3m): it runs for "
                             "that long on the wall clock")
    parser.add_argument("--tail", default="2m",
                        help="how long after the load the runs may go on draining (default 2m)")
    parser.add_argument("--json", help="also write both runs' figures and the comparison here")
    parser.add_argument("--keep", help="keep the live run's files (logs, receipts, database, its figures) in this directory")
    parser.add_argument("--live", metavar="DIR",
                        help="compare with the live run an earlier --keep DIR kept, of the same scenario, --load and "
                             "--tail, instead of running it again: other --sim-set values against one live run")
    parser.add_argument("--sim-set", action="append", default=[], metavar="KEY=VALUE",
                        help="set a value of the simulated run only, as relaysim run --set does: a twin told a "
                             "wrong world must disagree (the test that the comparison can fail)")
    args = parser.parse_args()
    try:
        load_s, tail_s = seconds(args.load), seconds(args.tail)
    except ValueError as e:
        die(str(e))
    if args.keep and args.live:
        die("--keep and --live: a run compared with a kept live run runs nothing live to keep")
    if args.keep and os.path.isdir(args.keep) and os.listdir(args.keep):
        die(f"--keep: {args.keep} is not empty (a run appends to its logs and database: give a new directory)")
    if load_s <= 0 or load_s > 3600:
        die("--load: between 1 s and 1 h of wall-clock time")
    try:
        with open(args.scenario) as f:
            scenario = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        die(f"cannot read {args.scenario}: {e}")
    if not isinstance(scenario, dict):
        die(f"{args.scenario} is not a scenario")
    checked = subprocess.run([args.relaysim, "validate", args.scenario], capture_output=True, text=True)
    if checked.returncode != 0:
        die(checked.stdout + checked.stderr, 2)
    try:
        scenario = cut(scenario, load_s, tail_s)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        die(f"{args.scenario}: cannot cut its load: {e}")
    kept = load_kept(args.live, scenario) if args.live else None
    tmp = args.keep or tempfile.mkdtemp(prefix="relaysim-twin-")
    os.makedirs(tmp, exist_ok=True)
    cut_path = os.path.join(tmp, "scenario.yaml")
    with open(cut_path, "w") as f:
        yaml.safe_dump(scenario, f, sort_keys=False)
    try:
        say(f"simulated: {args.scenario}, its first {args.load} of load (seed {scenario.get('seed', 1)})")
        sim = sim_run(args.relaysim, cut_path, tmp, args.sim_set)
        if kept is not None:
            say(f"live: the run kept in {args.live}")
            live = kept
        else:
            live = live_run(args.relaysim, cut_path, scenario, tmp, drain_timeout=tail_s + 60)
    finally:
        end_all()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    sim_m, live_m = dict(sim["metrics"]), dict(live["metrics"])
    for field, name in (("drain_90_s", "drain_90_s"), ("peak", "backlog_peak")):
        sim_m[name] = first_drain(sim["backlog"]["drains"], field)
        live_m[name] = first_drain(live["drains"], field)
    rows = compare(sim_m, live_m)
    print(f"twin: {scenario.get('name', args.scenario)}, {args.load} of load; simulated ({sim.get('store', 'memory')} store) "
          f"beside live ({scenario['webhook'].get('platform', {}).get('pods', 1)} serve processes, SQLite)")
    print(f"  {'figure':<70} {'simulated':>10} {'live':>10} {'live - sim':>11}  agree")
    kinds = {name: kind for name, _, kind in ROWS}
    for name, what, s, l, diff, agree in rows:
        pct = f" ({diff / s:+.0%})" if diff is not None and s else ""
        print(f"  {what:<70} {fmt(s, kinds[name]):>10} {fmt(l, kinds[name]):>10} "
              f"{(fmt(diff, kinds[name]) if diff is not None else 'n/a'):>11}{pct:<8} "
              f"{'yes' if agree else 'NO' if agree is False else 'too few to judge'}")
    print(f"  the live run, judged by the simulator's oracle: {live['verdict']} "
          f"({live['violations']} violations)")
    disagree = [name for name, _, _, _, _, agree in rows if agree is False]
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"scenario": args.scenario, "load_s": load_s, "simulated": sim_m, "live": live_m,
                       "live_verdict": live["verdict"],
                       "rows": [{"metric": n, "simulated": s, "live": l, "agree": a} for n, _, s, l, _, a in rows]},
                      f, indent=2)
    if disagree or live["verdict"] != "PASS":
        print(f"twin: DISAGREE on {', '.join(disagree) if disagree else 'nothing'}"
              f"{'; the live run broke an invariant' if live['verdict'] != 'PASS' else ''}")
        return 1
    print("twin: AGREE within the tolerances (counts 10 % or their noise, times 20 %)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        end_all()
