#!/usr/bin/env python3
"""`relaysim report` treats everything in a result directory as data, whoever wrote it.

    report_inputs.py RELAYSIM SOURCE_DIR WORK_DIR

Every name that can reach a report — the scenario's, the groups', a timeline's kinds, subjects and
details, an expectation, a sweep's axis and metrics — is made of the texts below (a newline with
gnuplot commands after it, quotes, a backtick, system("..."), </script>, invalid UTF-8, a file name
that gnuplot would run). Then: nothing they name is run (a canary file stays absent), the report
still renders, its HTML shows the texts escaped, every SVG is well-formed XML, and report.md keeps
one table row per line. A link planted in the directory is replaced, never written through; a
garbage timeline, a directory of both a run and a sweep, and names the scenario reader refuses
are refused with what is wrong. Exit 0 when all of it holds.
"""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

RELAYSIM, SRC, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
CANARY = os.path.join(WORK, "CANARY")

# What an attacker would put in a name.
EVIL = [
    "nl\nset output 'pwned.svg'\nsystem(\"touch " + CANARY + "\")",
    "quote' \" '' \"\"",
    "`touch " + CANARY + "`",
    "system(\"touch " + CANARY + "\")",
    "</script><script>alert(1)</script><img src=x onerror=alert(2)>",
    "at @macro $dollar \\back\\slash; !shell # comment",
    "<touch " + CANARY,
    "|touch " + CANARY,
    "| md | cell |\n## heading",
    "tab\there\rcr",
]
# Invalid UTF-8 only goes where the bytes are not JSON (a JSON reader refuses them).
BAD_BYTES = b"bad \xff\xfe utf8 \xc0\xaf \xed\xa0\x80 end"

failures = []


def run(*args):
    p = subprocess.run([RELAYSIM, *args], capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL  " + what)


def csv_field(text):
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def assert_renders(d, label):
    code, out, err = run("report", d)
    check(code == 0, f"{label}: report exits {code}: {err.strip()[:500]}")
    check(not os.path.exists(CANARY), f"{label}: a name was run as a command (the canary exists)")
    for name in os.listdir(d):
        check(not name.startswith(".relaysim-report-"), f"{label}: the report's work directory was left behind: {name}")
        check(name != "pwned.svg", f"{label}: a name set gnuplot's output")
        if name.endswith(".svg"):
            try:
                ET.parse(os.path.join(d, name))
            except ET.ParseError as e:
                check(False, f"{label}: {name} is not well-formed XML: {e}")
    if code != 0:
        return
    raw = open(os.path.join(d, "report.html"), "rb").read()
    try:
        html = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, f"{label}: report.html is not UTF-8: {e}")
        html = raw.decode("utf-8", "replace")
    check("<script>" not in html.lower(), f"{label}: report.html holds a raw <script>")
    check("<img" not in html.lower(), f"{label}: report.html holds a raw <img>")
    md = open(os.path.join(d, "report.md"), encoding="utf-8").read()
    for line in md.splitlines():
        if line.startswith("|"):
            check(line.rstrip().endswith("|"), f"{label}: a report.md table row is broken: {line[:80]!r}")
    check("<script>" not in md.lower(), f"{label}: report.md holds a raw <script>")


# A run with two groups, a crash (the timeline and its lanes) and an expectation.
base = os.path.join(WORK, "base")
code, out, err = run("run", "-q", os.path.join(SRC, "scenarios", "pod-crash-restart.yaml"),
                     "--timeseries", base)
check(code in (0, 1), f"the base run exits {code}: {err[:300]}")

# 1. Every name of a run's result made of the evil texts.
evil_run = os.path.join(WORK, "evil-run")
shutil.copytree(base, evil_run)
with open(os.path.join(evil_run, "result.json")) as f:
    result = json.load(f)
result["scenario"] = EVIL[0]
result["verdict"] = EVIL[4]
result["ending"] = EVIL[1]
result["store"] = EVIL[5]
result["fingerprint"] = EVIL[9]
groups = result.get("groups", {})
groups["by"] = EVIL[2]
rows = groups.get("groups", [])
all_row = groups.get("all")
if all_row and len(rows) < 2:  # two groups at least, so the CDF and the tables show them
    rows = [dict(all_row), dict(all_row)]
for i, row in enumerate(rows):
    row["name"] = EVIL[i % len(EVIL)]
groups["groups"] = rows + [dict(rows[0], name=e) for e in EVIL]
result["groups"] = groups
result["expectations"] = [{"expr": e, "ok": False, "actual": e} for e in EVIL]
with open(os.path.join(evil_run, "result.json"), "w") as f:
    json.dump(result, f)
with open(os.path.join(evil_run, "timeline.csv"), "wb") as f:
    f.write(b"start_s,end_s,kind,subject,detail,fault\n")
    for i, e in enumerate(EVIL):
        f.write(f"{i * 10},{i * 10 + 5},{csv_field(e)},{csv_field(EVIL[-1 - i])},{csv_field(e)},1\n".encode())
        f.write(f"{i * 10 + 1},,breaker,{csv_field(e)},closed -> {csv_field(e)},0\n".encode())
    f.write(b"100,200," + BAD_BYTES + b"," + BAD_BYTES + b"," + BAD_BYTES + b",1\n")
assert_renders(evil_run, "a run's names")

# 2. A sweep whose axis and metrics are the evil texts.
sweep = os.path.join(WORK, "sweep")
code, out, err = run("sweep", "-q", os.path.join(SRC, "scenarios", "quickstart.yaml"), "--set", "duration=2m",
                     "--vary", "webhook.platform.pods=1,2", "-r", "2", "--out", sweep)
check(code in (0, 1), f"the sweep exits {code}: {err[:300]}")
with open(os.path.join(sweep, "sweep.json")) as f:
    desc = json.load(f)
desc["axes"][0]["path"] = EVIL[0]
desc["expected"] = EVIL + ["latency_p99_s"]
desc["file"] = EVIL[4]
with open(os.path.join(sweep, "sweep.json"), "w") as f:
    json.dump(desc, f)
with open(os.path.join(sweep, "summary.csv"), "a") as f:
    for i, e in enumerate(EVIL):  # point,webhook.platform.pods,metric,n,mean,stddev,ci95_low,ci95_high,min,max
        f.write(f"{i % 2},{i % 2 + 1},{csv_field(e)},2,1,0,0.5,1.5,1,1\n")
assert_renders(sweep, "a sweep's names")

# 3. Links planted where the report writes: replaced, the files they point to untouched.
links = os.path.join(WORK, "links")
shutil.copytree(base, links)
targets = {}
for name in ("report.html", "report.md", "panel-flow.svg", "pipeline.svg", "lanes.svg", "latency-cdf.svg"):
    target = os.path.join(WORK, "target-" + name)
    with open(target, "w") as f:
        f.write("untouched")
    os.symlink(target, os.path.join(links, name))
    targets[name] = target
assert_renders(links, "planted links")
for name, target in targets.items():
    check(open(target).read() == "untouched", f"planted links: the report wrote through {name} into {target}")
    check(not os.path.islink(os.path.join(links, name)), f"planted links: {name} is still a link")

# 4. What the report refuses, and says why.
garbage = os.path.join(WORK, "garbage-timeline")
shutil.copytree(base, garbage)
with open(os.path.join(garbage, "timeline.csv"), "w") as f:
    f.write("start_s,end_s,kind,subject,detail,fault\n1,2,outage,serviceb,,1\nnot,a,timeline\n")
code, out, err = run("report", garbage)
check(code == 2 and "timeline.csv:3" in err, f"a garbage timeline: exit {code}, {err.strip()[:300]}")
with open(os.path.join(garbage, "timeline.csv"), "w") as f:
    f.write("start_s,end_s,kind,subject,detail,fault\nsoon,2,outage,serviceb,,1\n")
code, out, err = run("report", garbage)
check(code == 2 and "timeline.csv:2" in err and "not a number" in err, f"a timeline's bad time: exit {code}, {err.strip()[:300]}")
with open(os.path.join(garbage, "series.csv"), "a") as f:
    f.write("1,2,inf\n")
os.remove(os.path.join(garbage, "timeline.csv"))
code, out, err = run("report", garbage)
check(code == 2 and "series.csv:" in err, f"a series with a bad row: exit {code}, {err.strip()[:300]}")

mixed = os.path.join(WORK, "mixed")
shutil.copytree(sweep, mixed)
for name in ("series.csv", "result.json"):
    shutil.copy(os.path.join(base, name), os.path.join(mixed, name))
code, out, err = run("report", mixed)
check(code == 2 and "both a run's files" in err, f"a run's files in a sweep's directory: exit {code}, {err.strip()[:300]}")

# 5. The scenario reader refuses a name no report could show as one line.
with open(os.path.join(SRC, "scenarios", "quickstart.yaml")) as f:
    quickstart = f.read()
for name, why in [("'a\\nb'", "control character"), ('"tab\\there"', "control character"), ("'x[1]'", "'['"),
                  ("'" + "n" * 201 + "'", "at most 200")]:
    path = os.path.join(WORK, "named.yaml")
    with open(path, "w") as f:
        f.write(quickstart.replace("name: healthy", "name: " + name.replace("'", '"') if name.startswith("'a") else "name: " + name))
    code, out, err = run("validate", path)
    check(code == 2 and why in err and "named.yaml:" in err, f"a group named {name}: exit {code}, {err.strip()[:300]}")

print(f"report inputs: {len(failures)} failures" if failures else "report inputs: every name stayed data")
sys.exit(1 if failures else 0)
