#!/usr/bin/python3
"""series.om is OpenMetrics that a reference parser accepts, says what series.csv says, and the
Grafana dashboard (config/grafana/relaysim-webhook.json) reads only figures that exist.

Run with Debian's interpreter (python3-prometheus-client, the Prometheus project's own parsers).

usage: openmetrics_check.py sim RELAYSIM PROJECT_DIR WORK_DIR
         a run of each system with --timeseries: every column of series.csv is a family of
         series.om, a counter's running total and a gauge's value at every window's end, stamped
         with --start-time plus the window's end; names are data (a run named with quotes and a
         backslash reads back as written); every panel of the dashboard that
         says it reads a simulated run names families series.om has.
       openmetrics_check.py live PROJECT_DIR METRICS_FILE
         every panel that says it reads the live service names families /metrics serves (the
         live end-to-end test calls this with what its service served).
"""
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_prometheus

START = 1_764_201_600  # 2025-11-27T00:00:00Z
SUFFIXES = ("_total", "_bucket", "_sum", "_count", "_created")


def fail(message):
    sys.exit("openmetrics_check: " + message)


def dashboard_panels(project):
    """(title, reads, family names) of each panel; `reads` from its description's first words."""
    with open(os.path.join(project, "config", "grafana", "relaysim-webhook.json")) as f:
        dash = json.load(f)
    out = []
    for p in dash["panels"]:
        d = p.get("description", "")
        reads = {"Simulated and live:": {"sim", "live"}, "Simulated:": {"sim"}, "Live:": {"live"}}
        which = next((v for k, v in reads.items() if d.startswith(k)), None)
        if which is None:
            fail("panel '%s': its description must start with 'Simulated:', 'Live:' or 'Simulated and live:'" % p["title"])
        names = set()
        for t in p["targets"]:
            names |= set(re.findall(r"\brelaysim_[a-z0-9_]+", t["expr"]))
        if not names:
            fail("panel '%s' reads no relaysim figure" % p["title"])
        out.append((p["title"], which, names))
    return out


def check_panels(project, source, families):
    """Every panel reading `source` names only families (with their sample suffixes) it has."""
    checked = 0
    for title, reads, names in dashboard_panels(project):
        if source not in reads:
            continue
        for name in names:
            base = name
            for s in SUFFIXES:
                if name.endswith(s) and name[: -len(s)] in families:
                    base = name[: -len(s)]
            if base not in families:
                fail("panel '%s' reads %s, which the %s figures do not have (they have: %s)"
                     % (title, name, source, ", ".join(sorted(families))))
        checked += 1
    if checked == 0:
        fail("no panel reads the %s figures" % source)
    return checked


def run_and_parse(relaysim, scenario, out, extra=()):
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([relaysim, "run", "-q", scenario, "--timeseries", out, "--start-time", str(START), *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode not in (0, 1):
        fail("%s: rc %d\n%s" % (scenario, r.returncode, r.stdout))
    with open(os.path.join(out, "series.om")) as f:
        text = f.read()
    if not text.endswith("# EOF\n"):
        fail(out + "/series.om does not end with # EOF")
    families = {f.name: f for f in parse_openmetrics(text)}  # raises on anything not OpenMetrics
    with open(os.path.join(out, "series.csv")) as f:
        rows = list(csv.DictReader(f))
    return families, rows


def check_against_csv(where, families, rows):
    """Each column of series.csv is found in series.om, sample for sample."""
    columns = [c for c in rows[0].keys() if c not in ("start_s", "end_s")]
    samples = {}  # column -> [(timestamp, value)]
    for fam in families.values():
        for s in fam.samples:
            column = s.labels.get("status") if fam.name in ("relaysim_requests", "relaysim_completions") else None
            key = {"blocked_on_dependency": "blocked"}.get(column, column) if column else fam.name[len("relaysim_"):]
            if fam.name.startswith("relaysim_group_"):  # a group's column, pending[GROUP]: labelled group="GROUP"
                key = "%s[%s]" % (fam.name[len("relaysim_group_"):], s.labels.get("group"))
            if s.labels.get("system") is None or s.labels.get("run") is None:
                fail("%s: %s has no system or run label" % (where, s.name))
            samples.setdefault(key, []).append((s.timestamp, s.value, fam.type))
    for c in columns:
        if c not in samples:
            fail("%s: the column %s is not in series.om (it has %s)" % (where, c, ", ".join(sorted(samples))))
        got = samples[c]
        if len(got) != len(rows):
            fail("%s: %s has %d samples for %d rows" % (where, c, len(got), len(rows)))
        total = 0.0
        for (ts, v, kind), row in zip(got, rows):
            if abs(float(ts) - (START + float(row["end_s"]))) > 1e-6:
                fail("%s: %s stamped %s, the window ends at %s + %s" % (where, c, ts, START, row["end_s"]))
            want = float(row[c]) if row[c] != "" else math.nan
            if kind == "counter":
                total += want
                want = total
            if not (math.isnan(want) and math.isnan(v)) and abs(v - want) > 1e-9 * max(1.0, abs(want)):
                fail("%s: %s at %s is %r in series.om and %r by series.csv (%s)" % (where, c, row["end_s"], v, want, kind))
    return len(columns)


def sim(relaysim, project, work):
    os.makedirs(work, exist_ok=True)
    scenarios = os.path.join(project, "scenarios")
    webhook_families = None
    for name in ("serviceb-outage", "sms-quickstart", "outbox-quickstart"):
        out = os.path.join(work, name)
        families, rows = run_and_parse(relaysim, os.path.join(scenarios, name + ".yaml"), out)
        n = check_against_csv(name, families, rows)
        print("%s: %d columns, %d windows, in series.om as written in series.csv" % (name, n, len(rows)))
        if name == "serviceb-outage":
            webhook_families = families
            done = families["relaysim_completions"].samples
            delivered = [s for s in done if s.labels["status"] == "delivered"]
            if delivered[-1].value <= 0:
                fail("the outage run delivered nothing by series.om")
    # A run's name is data: quotes and a backslash read back as written.
    odd = 'a "quoted" run\\ with } and, = in it'
    families, rows = run_and_parse(relaysim, os.path.join(scenarios, "quickstart.yaml"), os.path.join(work, "odd"),
                                   ["--set", "name=" + json.dumps(odd), "--set", "duration=5m"])
    runs = {s.labels["run"] for f in families.values() for s in f.samples}
    if runs != {odd}:
        fail("the run's name read back as %r, not %r" % (runs, odd))
    print("dashboard: %d panels read a simulated run's figures, each found in series.om"
          % check_panels(project, "sim", webhook_families))


def live(project, metrics_file):
    with open(metrics_file) as f:
        families = {fam.name: fam for fam in parse_prometheus(f.read())}
    print("dashboard: %d panels read the live service's figures, each found in /metrics"
          % check_panels(project, "live", families))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "sim":
        sim(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "live":
        live(*sys.argv[2:])
    else:
        sys.exit(__doc__)
