#!/usr/bin/env python3
"""The command line as a new user (or an attacker) meets it: every bad input gets a clear error or
the behaviour a user expects, never a crash, a hang or a silently wrong run.

    bad_inputs.py RELAYSIM SOURCE_DIR WORK_DIR [CASE...]

Each case runs relaysim and checks its exit status and what it printed (and, for some, the files
it wrote). A crash shows as a negative exit status (the signal). Exit 0 when every case holds.
"""
import json
import os
import re
import signal
import shutil
import sqlite3
import subprocess
import sys
import time

RELAYSIM, SRC, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
ONLY = set(sys.argv[4:])
os.makedirs(WORK, exist_ok=True)
QUICKSTART = os.path.join(SRC, "scenarios", "quickstart.yaml")
# The quickstart cut to 10 minutes (5 of load): for the cases that need a run to have happened,
# not its hour of traffic (the sanitizer pass runs each several times).
SHORT = ["--set", "duration=10m", "--set", "webhook.load=[{rate: 20/s, from: 0s, to: 5m}]"]
OUTAGE = os.path.join(SRC, "scenarios", "serviceb-outage.yaml")
# A run of a minute or more: one that a signal sent a second in must find still running.
LONG_RUN = os.path.join(SRC, "scenarios", "capacity-serviceb-45m.yaml")
EXIT_INVALID, EXIT_INCOMPLETE, EXIT_INTERRUPTED = 2, 3, 130

# A small valid scenario; cases change one thing in it.
BASE = """name: base
duration: 5m
system: webhook
webhook:
  platform:
    pods: 2
  world:
    endpoints:
      - {count: 20}
  load:
    - {rate: 5/s, from: 0s, to: 4m}
"""

failures = []


def path(name):
    return os.path.join(WORK, name)


def write(name, text, mode="w"):
    p = path(name)
    with open(p, mode) as f:
        f.write(text)
    return p


def run(*args, timeout=120):
    p = subprocess.run([RELAYSIM, *args], capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def case(name):
    def register(fn):
        if ONLY and name not in ONLY:
            return fn
        try:
            fn()
            print(f"ok    {name}")
        except AssertionError as e:
            failures.append(name)
            print(f"FAIL  {name}: {e}")
        except subprocess.TimeoutExpired:
            failures.append(name)
            print(f"FAIL  {name}: hung (timeout)")
        return fn
    return register


def expect(result, code, pattern=None, where="stderr"):
    got, out, err = result
    text = {"stderr": err, "stdout": out, "both": out + err}[where]
    assert got == code, f"exit {got}, expected {code}\n--- stdout\n{out[-1500:]}\n--- stderr\n{err[-1500:]}"
    if pattern is not None:
        assert re.search(pattern, text), f"no /{pattern}/ in {where}:\n{text[-1500:]}"


def scenario_error(name, replace_from, replace_to, pattern, text=None):
    """A scenario with one mistake: exit 2, a located message matching `pattern`, nothing run."""
    @case(name)
    def _():
        body = text if text is not None else BASE.replace(replace_from, replace_to)
        assert text is not None or body != BASE, "the replacement did not apply"
        f = write(name + ".yaml", body, "wb" if isinstance(body, bytes) else "w")
        r = run("run", f)
        expect(r, EXIT_INVALID, pattern)
        assert "Verdict" not in r[1], "a run happened"
        expect(run("validate", f), EXIT_INVALID, pattern)


# ---- the database (--sqlite-path) ------------------------------------------------------------

@case("database.second_run_is_refused_then_overwritten")
def _():
    db = path("second.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    expect(run("run", "-q", QUICKSTART, *SHORT, "--sqlite-path", db), 0)
    label = dict(sqlite3.connect(db).execute("SELECT key, value FROM relaysim_run"))
    assert label["scenario"] == "quickstart" and label["seed"] == "42" and label["finished"] == "yes", label
    assert label["verdict"] == "pass" and label["version"] and label["fingerprint"], label
    expect(run("run", "-q", QUICKSTART, *SHORT, "--sqlite-path", db), EXIT_INVALID,
           r"holds an earlier run \(scenario 'quickstart', seed 42, finished\).*--overwrite")
    expect(run("run", "-q", QUICKSTART, *SHORT, "--sqlite-path", db, "--overwrite"), 0)


@case("database.overwrite_never_replaces_a_database_a_run_still_writes")
def _():
    db = path("busy.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    long_run = subprocess.Popen([RELAYSIM, "run", "-q", QUICKSTART, "--set", "duration=100h", "--set",
                                 "webhook.load=[{rate: 20/s, from: 0s, to: 100h}]", "--sqlite-path", db],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):  # until it has written its label
            if os.path.exists(db) and os.path.getsize(db) > 0:
                break
            time.sleep(0.1)
        expect(run("run", "-q", QUICKSTART, *SHORT, "--sqlite-path", db, "--overwrite"), EXIT_INVALID,
               r"is in use by another relaysim run")
        assert long_run.poll() is None, "the running run was disturbed"
    finally:
        long_run.kill()
        long_run.wait()
    # Once it has ended (killed: the label says it did not finish), --overwrite replaces it.
    expect(run("run", "-q", QUICKSTART, *SHORT, "--sqlite-path", db), EXIT_INVALID, r"did not finish")
    expect(run("run", "-q", QUICKSTART, *SHORT, "--sqlite-path", db, "--overwrite"), 0)


@case("files.two_outputs_of_one_run_are_never_one_file")
def _():
    short = ["run", "-q", QUICKSTART, "--set", "duration=1m"]
    expect(run(*short, "--json", path("o.csv"), "--timeseries", path("o.csv")), EXIT_INVALID,
           r"the --timeseries output .*o.csv is the --json output")
    expect(run(*short, "--json", path("tsd"), "--timeseries", path("tsd")), EXIT_INVALID, r"is the --json output")
    expect(run(*short, "--json", path("tsd2/result.json"), "--timeseries", path("tsd2")), EXIT_INVALID,
           r"a --timeseries output .*tsd2/result.json is the --json output")
    expect(run(*short, "--json", path("one.db"), "--sqlite-path", path("one.db")), EXIT_INVALID,
           r"one.db is the database \(--sqlite-path\)")


@case("database.foreign_database_is_never_touched")
def _():
    db = path("foreign.db")
    if os.path.exists(db):
        os.remove(db)
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER)")
    c.commit()
    c.close()
    before = open(db, "rb").read()
    for extra in ([], ["--overwrite"]):
        expect(run("run", "-q", QUICKSTART, "--sqlite-path", db, *extra), EXIT_INVALID,
               r"is not a relaysim database \(it holds the tables accounts\)")
    assert open(db, "rb").read() == before, "the foreign database was changed"


@case("database.not_a_database_or_a_directory")
def _():
    expect(run("run", "-q", QUICKSTART, "--sqlite-path", write("text.db", "hello\n" * 100)), EXIT_INVALID,
           "is not an SQLite database")
    expect(run("run", "-q", QUICKSTART, "--sqlite-path", WORK), EXIT_INVALID, "is a directory")


@case("database.sqlite_path_implies_the_sqlite_store")
def _():
    db = path("implied.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    expect(run("run", QUICKSTART, *SHORT, "--sqlite-path", db), 0, r"store sqlite", "stdout")
    expect(run("run", QUICKSTART, *SHORT, "--store", "memory", "--sqlite-path", path("x.db")), EXIT_INVALID,
           "--sqlite-path goes with the SQLite store")
    expect(run("run", QUICKSTART, *SHORT, "--overwrite"), EXIT_INVALID, "--overwrite goes with --sqlite-path")


# ---- text that is not UTF-8 ---------------------------------------------------------------------

scenario_error("utf8.name_is_refused_where_it_is", None, None, r":1:10: the file is not valid UTF-8",
               text=BASE.replace("name: base", "name: caf\xe9").encode("latin-1"))


@case("utf8.a_file_path_that_is_not_utf8_still_gives_json")
def _():
    f = os.path.join(WORK.encode(), b"scenario-\xff.yaml")
    with open(f, "wb") as out:
        out.write(BASE.encode())
    j = path("nonutf8.json")
    p = subprocess.run([RELAYSIM.encode(), b"run", b"-q", f, b"--json", j.encode()], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")
    data = json.load(open(j, encoding="utf-8"))
    assert "\ufffd" in data["file"], data["file"]


# ---- overflow ---------------------------------------------------------------------------------

scenario_error("overflow.duration_of_a_million_days", "duration: 5m", "duration: 1000000d",
               r"duration: must be at most 3650d \(ten years\), got '1000000d'")
scenario_error("overflow.timeouts_that_would_sum_past_the_clock", "pods: 2",
               "pods: 2\n    lookup_timeout: 60000d\n    http_timeout: 60000d", r"webhook.platform.lookup_timeout: must be at most 3650d")
scenario_error("overflow.deadline_past_the_clock", "pods: 2", "pods: 2\n    retry: {deadline: 106000d}",
               r"webhook.platform.retry.deadline: must be at most 3650d")
scenario_error("overflow.tiny_rate_per_second", "rate: 5/s", "rate: 1e-300/s", r"webhook.load\[0\].rate: is one call every")
scenario_error("overflow.tiny_rate_per_day", "rate: 5/s", "rate: 0.000001/d", r"webhook.load\[0\].rate: is one call every")
scenario_error("overflow.huge_rate", "rate: 5/s", "rate: 1e300/s", r"must be at most 1000000000/s")
scenario_error("overflow.endpoint_counts_that_sum_past_the_limit", "      - {count: 20}",
               "      - {count: 20}\n" + "      - {count: 10000000}\n" * 2, r"endpoints\[1\].count: brings the endpoints to")

# ---- memory -------------------------------------------------------------------------------------

@case("memory.a_scenario_too_big_for_the_machine_is_refused_with_advice")
def _():
    f = write("huge.yaml", BASE.replace("{rate: 5/s, from: 0s, to: 4m}", "{burst: 100000000, at: 0s}"))
    expect(run("run", f), EXIT_INVALID, r"would hold about .* set webhook.platform.retention")
    expect(run("run", f, "--memory-limit", "1GiB"), EXIT_INVALID, r"more than the 1.0 GiB it may use")


@case("memory.running_out_ends_with_a_partial_summary_and_status_3")
def _():
    f = write("grows.yaml", BASE.replace("{rate: 5/s, from: 0s, to: 4m}", "{burst: 3000000, at: 1s}")
              .replace("duration: 5m", "duration: 1h"))
    r = run("run", f, "--memory-limit", "300MiB", "--force", "--json", path("oom.json"))
    expect(r, EXIT_INCOMPLETE, r"OUT OF MEMORY: the run held .* more than its memory limit", "stdout")
    assert "Verdict: FAIL" in r[1], r[1][-800:]
    data = json.load(open(path("oom.json")))
    assert data["ending"] == "out_of_memory" and data["judged"] is False, data["ending"]


@case("files.non_regular_files")
def _():
    expect(run("run", "/dev/zero"), EXIT_INVALID, r"/dev/zero: is a character device, not a scenario file")
    expect(run("run", WORK), EXIT_INVALID, r"is a directory, not a scenario file")
    expect(run("run", path("no-such-file.yaml")), EXIT_INVALID, r"cannot open the file: No such file or directory")

@case("files.pipes_are_read_and_bounded")
def _():
    # Standard input ("-"), a FIFO and a shell's <(...) are read like a file, to the same limit.
    scenario = open(QUICKSTART, "rb").read()
    p = subprocess.run([RELAYSIM, "validate", "-"], input=scenario, capture_output=True, timeout=60)
    assert p.returncode == 0 and b"ok (quickstart)" in p.stdout, p.stderr
    fifo = path("fifo.yaml")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat '{QUICKSTART}' > '{fifo}'"])
    expect(run("run", "-q", fifo, timeout=60), 0)
    writer.wait(timeout=10)
    p = subprocess.run([RELAYSIM, "validate", "-"], input=b"a: 1\n" * 500000, capture_output=True, timeout=60)
    assert p.returncode == EXIT_INVALID and b"more than 1048576 bytes long; a scenario file is at most 1 MiB" in p.stderr, p.stderr
    expect(run("validate", "/dev/zero"), EXIT_INVALID, r"is a character device, not a scenario file or a pipe")
    big = write("big.yaml", BASE + "description: \"" + "x" * (1 << 20) + "\"\n")
    expect(run("validate", big), EXIT_INVALID, r"big.yaml: is \d+ bytes long; a scenario file is at most 1 MiB")


# ---- silently accepted before -------------------------------------------------------------------

scenario_error("accepted.multiplier_nan", "pods: 2", "pods: 2\n    retry: {multiplier: nan}",
               r"webhook.platform.retry.multiplier: expected a number, got 'nan'")
scenario_error("accepted.a_second_document", None, None, r"a second YAML document", text=BASE + "---\nname: other\n")
scenario_error("accepted.duplicate_classification_keys", "pods: 2",
               "pods: 2\n    classification: {\"404\": retry, 404: terminal}",
               r"webhook.platform.classification.404: the key appears twice")
scenario_error("accepted.load_after_the_end", "{rate: 5/s, from: 0s, to: 4m}", "{rate: 5/s, from: 10m, to: 20m}",
               r"webhook.load\[0\].from: is not before the end of the run")
scenario_error("accepted.window_after_the_end", "      - {count: 20}", "      - {count: 20, down: [{at: 1h, for: 1m}]}",
               r"down\[0\].at: is not before the end of the run")
scenario_error("accepted.fault_after_the_end", None, None, r"faults\[0\].at: is not before the end of the run",
               text=BASE + "faults:\n  - {at: 1h, crash: pod-0}\n")
scenario_error("accepted.key_with_no_value", "pods: 2", "pods:", r"webhook.platform.pods: has no value")
scenario_error("accepted.yaml_tag", "pods: 2", "pods: !!binary Mg==", r"a YAML tag")
scenario_error("accepted.repeated_duration_units", "duration: 5m", "duration: 1s1s1s", r"expected a duration")
scenario_error("accepted.an_error_status_that_is_a_success", "      - {count: 20}",
               "      - {count: 20, errors: {rate: 10%, status: 200}}", r"must be between 300 and 599")
scenario_error("accepted.network_errors_classified_delivered", "pods: 2",
               "pods: 2\n    classification: {connect_error: delivered}", r"cannot be delivered")
scenario_error("accepted.payload_limit_below_the_clients", "pods: 2", "pods: 2\n    max_payload_bytes: 2",
               r"max_payload_bytes: must be between 64 and")
scenario_error("accepted.a_busy_loop_of_store_retries", "pods: 2", "pods: 2\n    store_retry: 1ns",
               r"store_retry: must be at least 1ms")
scenario_error("accepted.a_busy_loop_of_delivery_retries", "pods: 2", "pods: 2\n    retry: {initial: 100us}",
               r"retry.initial: must be at least 1ms")
scenario_error("accepted.groups_no_cxid_reaches", "endpoints:\n      - {count: 20}",
               "cxids: 5\n    endpoints:\n      - {count: 20}\n      - {name: broken, count: 10, errors: {rate: 100%}}",
               r"world.cxids: 5 cxids reach only the first 5 endpoints .* group 'broken' would never get a request; "
               r"give at least 21 cxids")
scenario_error("accepted.repeats_and_shared_ids_over_100_percent", "to: 4m}", "to: 4m, duplicates: 60%, shared_ids: 50%}",
               r":11:.*webhook.load\[0\].shared_ids: duplicates \+ conflicts \+ shared_ids must not exceed 100%")
scenario_error("accepted.a_replay_after_the_run", "to: 4m}", "to: 4m}\n  replays: [{at: 10m, count: 5}]",
               r":12:.*webhook.replays\[0\].at: is not before the end of the run")
scenario_error("accepted.an_empty_replay_batch", "to: 4m}", "to: 4m}\n  replays: [{at: 1m, count: 0}]",
               r":12:.*webhook.replays\[0\].count: must be between 1 and")
scenario_error("accepted.a_directive_that_would_end_the_scenario", None, None,
               r":12:1: a YAML directive .* would end it here", text=BASE + "%TAG ! tag:example.com,2000:\nexpect:\n  violations: 5\n")
scenario_error("accepted.a_second_document_after_an_empty_one", None, None, r":3:1: a second YAML document",
               text="---\n# nothing yet\n---\n" + BASE)
scenario_error("accepted.raw_control_characters", "name: base", "name: a\x00b",
               r":1:8: a control character \(U\+0000\)")
scenario_error("accepted.an_escape_sequence_reaching_the_terminal", "name: base", "name: \"a\x1b[31mRED\"",
               r"a control character \(U\+001B\)")
scenario_error("accepted.an_escape_sequence_written_as_an_escape", "name: base", "name: \"a\\e[31mRED\"",
               r"name: holds a control character \(U\+001B\), written as an escape")
scenario_error("accepted.two_spellings_of_one_percentile", None, None,
               r"latency_p50.0_s: names the same metric as latency_p50_s",
               text=BASE + "expect:\n  latency_p50_s: \"< 1s\"\n  latency_p50.0_s: \"> 1h\"\n")
scenario_error("accepted.a_percentile_spelt_oddly", None, None, r"latency_p5e1_s: unknown metric",
               text=BASE + "expect:\n  latency_p5e1_s: \"< 1s\"\n")
scenario_error("accepted.expectation_that_can_never_hold", None, None,
               r"delivered_rate is a ratio between 0% and 100%, so '> 99' is outside it; did you mean '> 99%'\?",
               text=BASE + "expect:\n  delivered_rate: \"> 99\"\n")
GROUPS = BASE.replace("      - {count: 20}", "      - {name: fast, count: 10}\n      - {name: slow, count: 10}")
scenario_error("accepted.a_group_that_is_not_there", None, None,
               r"expect.latency_p99_s\[slo\]: no endpoint group is named 'slo'; did you mean 'slow'\? \(this scenario's: fast, slow\)",
               text=GROUPS + "expect:\n  latency_p99_s[slo]: \"< 1s\"\n")
scenario_error("accepted.a_figure_groups_do_not_have", None, None,
               r"expect.dlq_rate\[slow\]: 'dlq_rate' is not a figure of a group \(a group has: finished, success_rate",
               text=GROUPS + "expect:\n  dlq_rate[slow]: \"< 1%\"\n")
scenario_error("accepted.one_group_figure_twice", None, None,
               r"latency_p99.0_s\[slow\]: names the same metric as latency_p99_s\[slow\]",
               text=GROUPS + "expect:\n  latency_p99_s[slow]: \"< 1s\"\n  latency_p99_s[fast]: \"< 1s\"\n  latency_p99.0_s[slow]: \"< 1h\"\n")
scenario_error("accepted.warmup_as_long_as_the_run", None, None, r"warmup: must be shorter than the duration \(5m\)",
               text=BASE + "warmup: 5m\n")
scenario_error("accepted.percent_on_a_count", None, None, r"is a count, not a percentage",
               text=BASE + "expect:\n  ingested: \">= 50%\"\n")


@case("accepted.seed_out_of_range")
def _():
    for bad in ("-1", "18446744073709551616", "abc", "0x10", " 5", ""):
        expect(run("run", QUICKSTART, "--seed", bad), EXIT_INVALID, r"--seed: expected a whole number")
    expect(run("run", "-q", QUICKSTART, "--seed", "18446744073709551615"), 0)


@case("accepted.json_to_an_unwritable_path_is_found_before_the_run")
def _():
    t = time.time()
    r = run("run", OUTAGE, "--json", "/no/such/dir/out.json")
    expect(r, EXIT_INVALID, r"cannot write --json /no/such/dir/out.json: No such file or directory")
    assert "Verdict" not in r[1] and time.time() - t < 5, "the run happened first"
    expect(run("run", QUICKSTART, *SHORT, "--json", WORK), EXIT_INVALID, "is a directory")
    expect(run("run", QUICKSTART, *SHORT, "--json", QUICKSTART), EXIT_INVALID, "is the scenario file")
    db = path("same.out")
    if os.path.exists(db):
        os.remove(db)
    expect(run("run", QUICKSTART, *SHORT, "--sqlite-path", db, "--json", db), EXIT_INVALID, "is the database")
    # Refused before --overwrite removes the earlier run.
    expect(run("run", "-q", QUICKSTART, *SHORT, "--sqlite-path", db), 0)
    expect(run("run", QUICKSTART, *SHORT, "--sqlite-path", db, "--overwrite", "--json", db), EXIT_INVALID, "is the database")
    assert dict(sqlite3.connect(db).execute("SELECT key, value FROM relaysim_run"))["finished"] == "yes"


@case("accepted.json_through_pipes_devices_and_symlinks")
def _():
    # Renaming a finished file into place must not replace what the path names: a FIFO, a
    # device or a symlink gets the JSON written through it and stays what it was.
    import stat
    fifo = path("json.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
    expect(run("run", "-q", QUICKSTART, *SHORT, "--json", fifo), 0)
    assert json.loads(reader.communicate(timeout=10)[0])["verdict"] == "pass"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    target, link = path("target.json"), path("link.json")
    write("target.json", "old")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(target, link)
    expect(run("run", "-q", QUICKSTART, *SHORT, "--json", link), 0)
    assert os.path.islink(link), "the symlink was replaced"
    assert json.load(open(target))["verdict"] == "pass", "the file the symlink names was not written"
    # /dev/stdout redirected to a file the shell opened for appending: written at its end.
    log = write("appended.log", "first line\n")
    with open(log, "a") as out:
        code = subprocess.run([RELAYSIM, "run", "-q", QUICKSTART, *SHORT, "--json", "/dev/stdout"], stdout=out,
                              timeout=60).returncode
    assert code == 0
    text = open(log).read()
    assert text.startswith("first line\n") and json.loads(text[len("first line\n"):])["verdict"] == "pass", text[:100]
    # Standard input named as the output: refused before the run, not a failed write after it.
    with open(QUICKSTART) as src:
        code = subprocess.run([RELAYSIM, "run", "-q", QUICKSTART, *SHORT, "--json", "/dev/stdin"], stdin=src,
                              capture_output=True, text=True, timeout=60)
    assert code.returncode == EXIT_INVALID and "open for reading only" in code.stderr, code.stderr
    # A reader that goes away: the write fails (exit 3), the process is not killed by SIGPIPE.
    reader = subprocess.Popen(["head", "-c1", fifo], stdout=subprocess.DEVNULL)
    expect(run("run", "-q", OUTAGE, "--json", fifo), EXIT_INCOMPLETE, r"cannot write --json .*: Broken pipe")
    reader.wait(timeout=10)
    null, disk = path("null.dev"), path("disk.dev")
    try:
        if not os.path.exists(null):
            os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null
        if not os.path.exists(disk):
            os.mknod(disk, 0o600 | stat.S_IFBLK, os.makedev(7, 200))  # a loop device that is not there
    except PermissionError:
        return  # no devices may be made here; the FIFO above took the same path
    expect(run("run", "-q", QUICKSTART, *SHORT, "--json", null), 0)
    assert stat.S_ISCHR(os.lstat(null).st_mode), "the device was replaced with a file"
    expect(run("run", "-q", QUICKSTART, *SHORT, "--json", disk), EXIT_INVALID, r"is a block device")


@case("accepted.json_dash_is_standard_output")
def _():
    cwd = os.getcwd()
    os.chdir(WORK)
    try:
        if os.path.exists("-"):
            os.remove("-")
        code, out, err = run("run", QUICKSTART, "--json", "-")
    finally:
        os.chdir(cwd)
    assert code == 0, err
    assert json.loads(out)["verdict"] == "pass"
    assert "Verdict: PASS" in err, "the summary goes to standard error when the JSON takes standard output"
    assert not os.path.exists(path("-")), "a file named - was written"


# ---- messages -----------------------------------------------------------------------------------

scenario_error("message.deep_nesting", None, None, r"nests values more than 64 deep", text="name: " + "[" * 5000 + "]" * 5000 + "\n")
scenario_error("message.nesting_without_aliases", None, None, r":1:\d+: nests values more than 64 deep",
               text="description: " + "[" * 100 + "]" * 100 + "\n" + BASE)
scenario_error("message.a_nul_in_a_key_is_shown", None, None, r"expect<U\+0000>: unknown key; did you mean 'expect'",
               text=BASE + "\"expect\\0\": 1\n")
scenario_error("message.merge_keys", "- {rate: 5/s, from: 0s, to: 4m}",
               "- &seg {rate: 5/s, from: 0s, to: 4m}\n    - {<<: *seg, rate: 6/s}",
               r"load\[1\]\.<<: YAML merge keys .* are not supported")
scenario_error("message.examples_fit_the_unit", None, None, r"attempts_per_request expected a comparison such as .*\(a number\)",
               text=BASE + "expect:\n  attempts_per_request: \"< 50%\"\n")
scenario_error("message.pod_out_of_range_is_quoted_as_written", None, None, r"got 'pod-4294967296'",
               text=BASE + "faults:\n  - {at: 1m, crash: pod-4294967296}\n")
# A pod's concurrency has one key in every system; the outbox's former name says what to write now.
scenario_error("message.a_renamed_key_names_its_new_name", None, None,
               r":\d+:\d+: outbox\.platform\.concurrency: is now called 'concurrency_per_pod'",
               text=open(os.path.join(SRC, "scenarios", "outbox-quickstart.yaml")).read()
               .replace("concurrency_per_pod:", "concurrency:"))


@case("message.crlf_line_ends_and_a_byte_order_mark_are_read")
def _():
    f = write("crlf.yaml", (BASE + "expect:\n  violations: 0").replace("\n", "\r\n"))
    expect(run("validate", f), 0)
    f = write("bom.yaml", "\ufeff# a comment\n---\n" + BASE, "w")
    expect(run("validate", f), 0)


@case("message.a_crash_that_never_happens_is_noted")
def _():
    f = write("never.yaml", BASE + "faults:\n  - {at: 4m30s, crash: pod-0, during_write: true, restart_after: 1s}\n")
    code, out, _ = run("run", f, "--json", path("never.json"))
    assert code == 0 and "Note: pod-0 was to crash in the middle of a write at 4m30.000s or later" in out, out
    assert "the crash never happened" in json.load(open(path("never.json")))["notes"][0]


@case("message.figures_with_nothing_to_divide_are_not_zero")
def _():
    f = write("noload.yaml", BASE.replace("rate: 5/s", "rate: 0/s") +
              "expect:\n  delivered_rate: 100%\n  latency_p99_s: \"< 1s\"\n  latency_max_s: \"< 1s\"\n")
    code, out, _ = run("run", f, "--json", path("noload.json"))
    assert code == 1, out
    for line in ("FAIL delivered_rate == 100%   (actual n/a)", "FAIL latency_p99_s < 1s   (actual n/a)",
                 "FAIL latency_max_s < 1s   (actual n/a)"):
        assert line in out, out
    result = json.load(open(path("noload.json")))
    assert result["metrics"]["delivered_rate"] is None, result["metrics"]
    assert result["latency_seconds"]["max"] is None, result["latency_seconds"]


@case("message.the_memory_estimate_names_what_costs")
def _():
    slots = write("slots.yaml", BASE.replace("pods: 2", "pods: 1024\n    concurrency_per_pod: 100000"))
    expect(run("run", slots, "--memory-limit", "1GiB"), EXIT_INVALID,
           r"most of it for 102400000 delivery slots .*; lower webhook.platform.pods or concurrency_per_pod")
    code, out, err = run("validate", slots)
    assert code == 0 and "delivery slots" in out, out
    # Retries count only while the run lasts, so the run outlasts the 2h deadline.
    retries = write("retries.yaml", BASE.replace("{count: 20}", "{count: 20, errors: {rate: 100%}}").replace(
        "pods: 2", "pods: 2\n    retry: {backoff: fixed, initial: 1s, jitter: none, deadline: 2h}").replace(
        "duration: 5m", "duration: 3h"))
    expect(run("run", retries, "--memory-limit", "100MiB"), EXIT_INVALID, r"retries kept in the requests' histories")
    # Every pod's consumer keeps queues for every partition of the log, whatever the load.
    outbox = os.path.join(SRC, "scenarios", "outbox-quickstart.yaml")
    expect(run("run", outbox, "--set", "outbox.platform.pods=1024", "--set", "outbox.log.partitions=4096",
               "--memory-limit", "1GiB"), EXIT_INVALID,
           r"4194304 partition queues of the consumers .*lower outbox.platform.pods or outbox.log.partitions")


@case("message.metrics_of_an_unknown_system")
def _():
    expect(run("metrics", "--system", "planner"), EXIT_INVALID, r"no system is named 'planner' \(the systems: webhook, sms, outbox\)")
    expect(run("metrics", "--system", ""), EXIT_INVALID, r"no system is named ''")
scenario_error("message.unterminated_quote", "name: base", "name: \"base", r":1:7: a quoted value starts here")
scenario_error("message.unterminated_quote_at_the_end", None, None, r"never closed",
               text=BASE + "description: \"runs on\n")
scenario_error("message.empty_file", None, None, r"holds no scenario", text="# nothing\n")
scenario_error("message.old_layout", None, None, r"write `system: webhook`",
               text="name: t\nduration: 1h\nplatform: {pods: 2}\nworld: {endpoints: [{count: 1}]}\n")


@case("message.a_misspelt_command")
def _():
    expect(run("runn", QUICKSTART), EXIT_INVALID, r"no command 'runn'; did you mean 'run'\?")
    expect(run("test"), EXIT_INVALID, r"a command of the driver script: run ./relaysim test")
    expect(run(), EXIT_INVALID, None)


@case("message.help_lists_every_command_and_the_exit_codes")
def _():
    code, out, _ = run("--help")
    assert code == 0
    for word in ("run", "validate", "metrics", "reference", "mmc", "./relaysim test", "./relaysim bench",
                 "./relaysim mutants", "./relaysim fuzz", "130", "Exit status"):
        assert word in out, f"--help does not mention {word}"


# ---- Ctrl-C and SIGTERM ---------------------------------------------------------------------------

def interrupt(sig):
    j = path(f"interrupted-{sig}.json")
    p = subprocess.Popen([RELAYSIM, "run", LONG_RUN, "--json", j], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == EXIT_INTERRUPTED, f"exit {p.returncode}: {err.decode()[-500:]}"
    assert b"INTERRUPTED at virtual" in out, out.decode()[-800:]
    assert b"Verdict: FAIL" in out
    data = json.load(open(j))
    assert data["ending"] == "interrupted" and data["virtual_seconds"] < 5 * 3600, data["ending"]


@case("signals.sigint_gives_a_partial_summary_and_json")
def _():
    interrupt(signal.SIGINT)


@case("signals.sigterm_gives_a_partial_summary_and_json")
def _():
    interrupt(signal.SIGTERM)


@case("signals.sigint_stops_a_sweep_and_keeps_its_finished_runs")
def _():
    out_dir = path("interrupted-sweep")
    p = subprocess.Popen([RELAYSIM, "sweep", QUICKSTART, "--vary", "webhook.platform.pods=1..4", "-r", "500", "-j", "1",
                          "--out", out_dir], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(2.0)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == EXIT_INTERRUPTED, f"exit {p.returncode}: {err.decode()[-500:]}"
    m = re.search(rb"sweep interrupted after (\d+) of its 2000 runs; the finished ones are in", err)
    assert m, err.decode()[-500:]
    rows = open(os.path.join(out_dir, "runs.csv")).read().splitlines()
    assert len(rows) == 1 + int(m.group(1)), f"{len(rows)} lines for {m.group(1)} runs"
    assert all(",interrupted," not in r for r in rows), "a run cut short is not a finished run"
    assert not os.path.exists(os.path.join(out_dir, "summary.csv")), "no table of a sweep not run whole"


# ---- --set and --timeseries -----------------------------------------------------------------

@case("set.overrides_are_read_as_strictly_as_the_file")
def _():
    expect(run("run", QUICKSTART, "--set", "webhook.platform.podz=3"), EXIT_INVALID,
           r"--set webhook.platform.podz=3\): webhook.platform.podz: unknown key; did you mean 'pods'")
    expect(run("run", QUICKSTART, "--set", "webhook.platform.pods"), EXIT_INVALID, r"expected key.path=value")
    expect(run("run", QUICKSTART, "--set", "webhook.platform.pods=[1"), EXIT_INVALID, r"the value is not YAML")
    expect(run("run", QUICKSTART, "--set", "webhook.world.endpoints.7.count=1"), EXIT_INVALID, r"not one of its indices")
    # An error in the value names the --set, not the file's first line.
    expect(run("run", QUICKSTART, "--set", "webhook.platform.pods=abc"), EXIT_INVALID,
           r"quickstart.yaml \(--set webhook.platform.pods=abc\): webhook.platform.pods: expected a whole number")
    expect(run("run", QUICKSTART, "--set", "webhook.load=[{rate: 5/s, from: 0s, to: 1m, bogus: 1}]"), EXIT_INVALID,
           r"\(--set webhook.load=.*\): webhook.load\[0\].bogus: unknown key .*\(at column 32 of the value\)")
    code, out, _ = run("run", QUICKSTART, "--set", "duration=2m", "--set", "webhook.platform.pods=3", "--json", "-", "-q")
    assert code in (0, 1), out


@case("names_and_shares.what_one_item_would_hide_is_refused")
def _():
    sms = os.path.join(SRC, "scenarios", "sms-quickstart.yaml")
    outbox = os.path.join(SRC, "scenarios", "outbox-quickstart.yaml")
    # Two items of one name: a report, a metric (latency_p99_s[NAME]) or another key could not
    # tell them apart.
    expect(run("validate", sms, "--set", "sms.providers.1.name=alpha"), EXIT_INVALID,
           r"sms.providers\[1\].name: names provider 'alpha' a second time")
    expect(run("validate", QUICKSTART, "--set", "webhook.world.endpoints.1.name=healthy"), EXIT_INVALID,
           r"names endpoint group 'healthy' a second time")
    expect(run("validate", sms, "--set", "sms.directory={users: 10, regions: [north, north], utc_offsets: ['+00:00']}"),
           EXIT_INVALID, r"names region 'north' a second time")
    expect(run("validate", outbox, "--set", "outbox.platform.types=[{name: a}, {name: a}]"), EXIT_INVALID,
           r"names message type 'a' a second time")
    # A key the segment's kind never reads.
    for key, value in (("size", "5"), ("lead", "1m"), ("filter", "opt_in")):
        expect(run("validate", sms, "--set", f"sms.load=[{{business: shop, kind: single, rate: 1/s, from: 0s, to: 1m, {key}: {value}}}]"),
               EXIT_INVALID, rf"sms.load\[0\].{key}: is not read by a single segment")
    # Shares of one draw that add up past 100%.
    expect(run("validate", sms, "--set", "sms.providers.0.error_rate=60%", "--set", "sms.providers.0.refusal_rate=50%"),
           EXIT_INVALID, r"error_rate \+ refusal_rate must not exceed 100%")
    expect(run("validate", outbox, "--set", "outbox.downstream.error_rate=60%", "--set", "outbox.downstream.deaths=50%"),
           EXIT_INVALID, r"must not exceed 100% \(given --set outbox.downstream.error_rate=60%, --set outbox.downstream.deaths=50%\)")
    # A single value where a mapping belongs says what it got.
    expect(run("validate", sms, "--set", "sms.platform.routing=3"), EXIT_INVALID, r"got the single value '3'")


@case("memory.only_what_runs_is_estimated")
def _():
    # A segment running past the end of the run costs only what runs of it (the docs allow `to`
    # past the end): a year of load in an hour's run is an hour's load.
    hour = run("validate", QUICKSTART, "--set", "duration=1h", "--set", "webhook.load=[{rate: 5/s, from: 0s, to: 1h}]")
    year = run("validate", QUICKSTART, "--set", "duration=1h", "--set", "webhook.load=[{rate: 5/s, from: 0s, to: 365d}]")
    expect(hour, 0, r"about 18000 client calls", where="stdout")
    expect(year, 0, r"about 18000 client calls", where="stdout")


@case("help.the_set_examples_of_run_help_work")
def _():
    # Every `--set` example `run --help` gives is one a user may paste.
    text = re.sub(r"\s+", " ", run("run", "--help")[1])
    examples = re.findall(r"--set (\S+?=[^,;\s]+)", text)
    assert len(examples) >= 2, text
    for e in examples:
        expect(run("validate", QUICKSTART, "--set", e), 0)


@case("help.a_misspelt_option_gets_the_nearest_one")
def _():
    expect(run("run", QUICKSTART, "--seeds", "3"), EXIT_INVALID, r"run: no option '--seeds'; did you mean '--seed'\?")
    expect(run("sweep", QUICKSTART, "--varry=pods=2..4"), EXIT_INVALID, r"sweep: no option '--varry'; did you mean '--vary'\?")


@case("sweep.warm_up_advice_only_where_no_fault_was_meant_to_be_measured")
def _():
    # A fault-free run still ramping after its warm-up gets the advice; runs with crashes do not:
    # their figures are the fault's, and a warm-up would cut into it.
    calm = run("sweep", os.path.join(SRC, "scenarios", "sms-quickstart.yaml"), "--set", "duration=10m",
               "--vary", "seed=1,2", "-r", "1", "--out", path("sweep-calm"))
    expect(calm, calm[0], r"For steady-state figures, --set warmup=\d+s or more", where="stdout")
    crashes = run("sweep", os.path.join(SRC, "scenarios", "pod-crash-restart.yaml"), "--vary", "webhook.platform.pods=4..5",
                  "-r", "2", "--out", path("sweep-crashes"))
    expect(crashes, 0)
    assert "--set warmup" not in crashes[1], crashes[1]


# ---- the capacity check (docs/outputs.md) ------------------------------------------------------

# 3 pods x 40 slots, 1 500/s at the peak, endpoints answering in p50 100ms / p99 2s: the
# log-normal's mean is 229ms, so about 344 slots are busy on average where 120 exist.
OVERLOADED = ["--set", "webhook.platform.pods=3", "--set", "webhook.platform.concurrency_per_pod=40",
              "--set", "webhook.world.endpoints=[{name: all, count: 100, latency: {p50: 100ms, p99: 2s}}]"]


@case("capacity.an_overloaded_platform_is_warned_of_before_it_runs")
def _():
    r = run("validate", QUICKSTART, *OVERLOADED, "--set", "webhook.load=[{rate: 1500/s, from: 0s, to: 1h}]")
    expect(r, 0, r"dispatch cannot carry 1500/s: it needs about 344 dispatch slots busy, and has 120 \(ρ 2\.86\)")
    expect(r, 0, r"capacity: dispatch: 1500/s at the peak keeps 343\.\d of 120 dispatch slots busy for 229(\.\d)?ms each", where="stdout")
    # Segments that overlap add up; ones that follow each other do not.
    both = run("validate", QUICKSTART, *OVERLOADED,
               "--set", "webhook.load=[{rate: 300/s, from: 0s, to: 1h}, {rate: 300/s, from: 30m, to: 2h}]")
    expect(both, 0, r"dispatch cannot carry 600/s")
    apart = run("validate", QUICKSTART, *OVERLOADED,
                "--set", "webhook.load=[{rate: 300/s, from: 0s, to: 30m}, {rate: 300/s, from: 30m, to: 1h}]")
    expect(apart, 0, r"capacity: dispatch: 300/s at the peak", where="stdout")
    assert "cannot carry" not in apart[2], apart[2]
    # run warns before it starts, and the summary marks the station.
    ran = run("run", QUICKSTART, *OVERLOADED, "--set", "duration=20s", "--set", "webhook.load=[{rate: 1500/s, from: 0s, to: 10s}]")
    expect(ran, ran[0], r"relaysim: warning: dispatch cannot carry 1500/s")
    expect(ran, ran[0], r"OVERLOADED dispatch: 1500/s", where="stdout")


@case("capacity.a_platform_that_keeps_up_is_not_warned_and_its_stations_are_in_the_json")
def _():
    r = run("validate", QUICKSTART)
    expect(r, 0, r"capacity: dispatch: 20/s at the peak keeps", where="stdout")
    assert "warning" not in r[2], r[2]
    out = path("capacity.json")
    expect(run("run", "-q", QUICKSTART, "--set", "duration=2m", "--set", "webhook.load=[{rate: 20/s, from: 0s, to: 30s}]", "--json", out), 0)
    [station] = json.load(open(out))["capacity"]
    assert station["station"] == "dispatch" and station["servers_configured"] == 128, station
    assert 0 < station["utilisation"] < 1 and not station["overloaded"], station
    assert abs(station["busy"] - station["peak_per_s"] * station["mean_service_s"]) < 1e-9, station


@case("capacity.rate_limits_and_consumers_are_stations_too")
def _():
    # Shop offers 45/s to its limit of 40 per second, and the three businesses 65/s to the
    # cluster's 60: messages are held back (never dropped) for as long as that load lasts.
    r = run("validate", os.path.join(SRC, "scenarios", "sms-redis-down.yaml"))
    expect(r, 0, r"shop's limit cannot carry 45/s: it needs about 45 places in its 1s window busy, and has 40")
    expect(r, 0, r"cluster limit cannot carry 65/s")
    assert "bank's limit cannot" not in r[2], r[2]
    expect(r, 0, r"capacity: async workers: 65/s at the peak", where="stdout")
    # The outbox's busiest consumer has 4 of 12 partitions over 3 pods: a third of the rows.
    o = run("validate", os.path.join(SRC, "scenarios", "outbox-quickstart.yaml"), "--set", "outbox.platform.concurrency_per_pod=1",
            "--set", "outbox.downstream.latency={constant: 1s}")
    expect(o, 0, r"consumers cannot carry [\d.]+/s: it needs about \d+ handling slots of the pod with the most partitions \(4 of 12\) busy, and has 1")
    # A latency of 0s holds no server: no station, no crash.
    zero = run("validate", QUICKSTART, "--set", "webhook.world.endpoints=[{name: a, count: 10, latency: {constant: 0s}}]")
    expect(zero, 0)
    assert "capacity:" not in zero[1], zero[1]


@case("bounds.values_the_model_would_assert_on_are_refused_where_written")
def _():
    sms = os.path.join(SRC, "scenarios", "sms-quickstart.yaml")
    outbox = os.path.join(SRC, "scenarios", "outbox-quickstart.yaml")
    # Each of these ran past validate and ended on a model assertion (or a busy loop); the bound
    # is declared beside the model's field and the reader refuses the value where it is written.
    cases = [
        (sms, "sms.providers.0.mps=1000001/s", r"sms.providers\[0\].mps: must be between 0/s and 1000000/s"),
        # The throttle counts whole messages a second: 1/h ran as 1/s, silently.
        (sms, "sms.providers.0.mps=1/h", r"sms.providers\[0\].mps: must be 0 \(no limit\) or a whole number of messages a second"),
        (sms, "sms.platform.routing.decay=0", r"sms.platform.routing.decay: must be longer than 0s"),
        (sms, "sms.platform.limit={algorithm: gcra, limit: 10, window: 1s, breaker: {window: 0s}}",
         r"sms.platform.limit.breaker.window: must be longer than 0s"),
        (sms, "sms.platform.limit={algorithm: gcra, limit: 10, window: 1s, breaker: {failure_rate: 0}}",
         r"sms.platform.limit.breaker.failure_rate: must be above 0%"),
        (sms, "sms.businesses.0.limit={algorithm: sliding_log, limit: 10, window: 0s}", r"sms.businesses\[0\].limit.window: must be between 1ms and 1d"),
        (sms, "sms.platform.token_lifetime=500ms", r"token_lifetime: must be between 1s and 3650d \(a token's expiry counts whole seconds\)"),
        (QUICKSTART, "webhook.load=[{rate: 5/s, from: 0s, to: 1m, arrival: bursty, high_share: 0.000000003}]",
         r"high_share: makes the low spells .* longer than 3650d"),
        (QUICKSTART, "webhook.load=[{rate: 5/s, from: 0s, to: 1m, arrival: bursty, spell: 1ns}]", r"spell: must be between 1ms and 3650d"),
        (outbox, "outbox.platform.renew_every=1us", r"renew_every: must be between 1ms and 3650d \(a shorter period is a busy loop\)"),
        (outbox, "outbox.platform.rescue_every=1us", r"rescue_every: must be between 1ms"),
        (outbox, "outbox.log.max_poll_interval=1ms", r"max_poll_interval: must be between 1s and 3650d"),
        (outbox, "outbox.platform.publish_timeout=3650d", r"publish_timeout: must be between 1ms and 1d"),
        # Every publish timed out and was published again, for ever: a run that only filled memory.
        (outbox, "outbox.platform.publish_timeout=1ns", r"publish_timeout: must be between 1ms and 1d \(one shorter than a millisecond fails every call\)"),
        (outbox, "outbox.platform.handle_timeout=0s", r"handle_timeout: must be between 1ms and 1d"),
        # No pod ever led: every grant came back after the lease it granted had ended.
        (outbox, "outbox.coordinator.latency={p50: 20s}",
         r"outbox.coordinator.latency: its p50 of 20.000s is not shorter than platform.lease \(10.000s\)"),
    ]
    for scenario, override, pattern in cases:
        expect(run("validate", scenario, "--set", override), EXIT_INVALID, pattern)


@case("timeseries.a_directory_of_outputs_and_bad_paths")
def _():
    d = path("series-out")
    shutil.rmtree(d, ignore_errors=True)
    # Ten minutes of the hour-long quickstart: its expectations of the whole hour fail (exit 1).
    code, out, err = run("run", QUICKSTART, "--set", "duration=10m", "--timeseries", d, "--interval", "1m", "-q")
    assert code in (0, 1), err
    for f in ("series.csv", "timeline.csv", "records.csv", "result.json", "scenario.yaml"):
        assert os.path.exists(os.path.join(d, f)), f
    lines = open(os.path.join(d, "series.csv")).read().splitlines()
    assert lines[0].startswith("start_s,end_s,ingested,delivered") and len(lines) == 11, lines[:2]
    # The same directory again is the run's own: it is written over.
    assert run("run", QUICKSTART, "--set", "duration=10m", "--timeseries", d, "-q")[0] in (0, 1)
    write("series-out/notes.txt", "mine")
    expect(run("run", QUICKSTART, "--timeseries", d), EXIT_INVALID, r"holds notes.txt, which no run wrote")
    expect(run("run", QUICKSTART, "--timeseries", write("plain-file", "x")), EXIT_INVALID, r"is a file")
    expect(run("run", QUICKSTART, "--timeseries", "/nonexistent/dir/s.csv"), EXIT_INVALID, r"cannot write")
    expect(run("run", QUICKSTART, "--interval", "1m"), EXIT_INVALID, r"--interval goes with --timeseries")
    expect(run("run", QUICKSTART, "--timeseries", path("s.csv"), "--interval", "0s"), EXIT_INVALID, r"--interval: expected")
    expect(run("run", QUICKSTART, "--timeseries", path("s.csv"), "--interval", "1ms"), EXIT_INVALID, r"more than a million rows")


@case("sweep.bad_grids_and_shards")
def _():
    expect(run("sweep", QUICKSTART), EXIT_INVALID, r"at least one --vary")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods"), EXIT_INVALID, r"expected key.path=values")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=5..2"), EXIT_INVALID, r"FROM <= TO")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=1..3:0"), EXIT_INVALID, r"STEP > 0")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=1,,2"), EXIT_INVALID, r"an empty value")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=0..2"), EXIT_INVALID, r"webhook.platform.pods")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.podz=1..2"), EXIT_INVALID, r"did you mean 'pods'")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=1..2", "--shard", "5/4", "--out", path("sw")),
           EXIT_INVALID, r"--shard: expected I/N")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=1..2", "--shard", "1/2"), EXIT_INVALID, r"give --out")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=1..2", "-r", "0"), EXIT_INVALID, r"--replications")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=1..2", "--show", "nope"), EXIT_INVALID, r"no metric 'nope'")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=1..2000000"), EXIT_INVALID, r"more than a million")
    pods = ["sweep", QUICKSTART, "--vary", "webhook.platform.pods=1..2"]
    expect(run(*pods, "--memory-limit", "1Q"), EXIT_INVALID, r"--memory-limit: expected a size")
    expect(run(*pods, "--memory-limit", "1MiB"), EXIT_INVALID, r"one run would hold about 38 MiB, more than the 1 MiB")
    # Two runs at once would not fit in 60 MiB: one at a time does, and the sweep says so.
    r = run(*pods, "-j", "2", "-r", "1", "--memory-limit", "60MiB")
    expect(r, 0, r"running 1 at once")
    expect(r, 0, r"on 1 thread;", where="stdout")
    # A table whose rows are labelled with values no run used is refused before anything runs.
    expect(run(*pods, "--vary", "webhook.platform.pods=8"), EXIT_INVALID, r"--vary: webhook.platform.pods: is varied twice")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=2,4,2"), EXIT_INVALID, r"the value '2' is given twice")
    expect(run("sweep", QUICKSTART, "--vary", "duration=60s,1m"), EXIT_INVALID,
           r"points duration=60s and duration=1m run the same scenario")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=2-4"), EXIT_INVALID, r"did you mean 2\.\.4\?")
    # An error in a value of the grid names the --vary it came from, not the file's first line.
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=0,1"), EXIT_INVALID,
           r"\(--vary webhook.platform.pods=0\): webhook.platform.pods: must be between 1 and 1024")
    expect(run("sweep", QUICKSTART, "--vary", "webhook.platform.pods=1..2", "--shard", "4294967297/4294967298", "--out", path("sw")),
           EXIT_INVALID, r"--shard: expected I/N")
    # merge's OUT is written: given as a shard too, it would be overwritten while read.
    shard = path("shard-1")
    shutil.rmtree(shard, ignore_errors=True)
    assert run("sweep", "-q", QUICKSTART, "--set", "duration=1m", "--vary", "webhook.platform.pods=1..2", "-r", "2",
               "--shard", "1/2", "--out", shard)[0] == 0
    runs_before = open(os.path.join(shard, "runs.csv")).read()
    expect(run("merge", shard, shard, path("shard-2")), EXIT_INVALID, r"is also given as a shard")
    assert open(os.path.join(shard, "runs.csv")).read() == runs_before, "merge wrote into its input shard"
    # A value no sweep writes in a shard's runs.csv (nan, -inf) is refused, never merged.
    for bad in ("nan", "-inf", "infinity", "0x1p3"):
        lines = runs_before.splitlines()
        fields = lines[1].split(",")
        fields[-1] = bad
        with open(os.path.join(shard, "runs.csv"), "w") as f:
            f.write("\n".join([lines[0], ",".join(fields)] + lines[2:]) + "\n")
        expect(run("merge", path("merged-bad"), shard), EXIT_INVALID, r"runs.csv:2: .* is not a number this sweep writes")
    with open(os.path.join(shard, "runs.csv"), "w") as f:
        f.write(runs_before)
    expect(run("merge", path("merged"), path("no-such-dir")), EXIT_INVALID, r"no sweep.json")
    os.makedirs(path("not-a-sweep"), exist_ok=True)
    write("not-a-sweep/sweep.json", "{}")
    expect(run("merge", path("merged"), path("not-a-sweep")), EXIT_INVALID, r"not a sweep's description")


@case("plan.bad_targets_and_ranges")
def _():
    plan = ["plan", QUICKSTART, "--resource", "webhook.platform.pods"]
    expect(run(*plan), EXIT_INVALID, r"--target is required")
    expect(run(*plan, "--target", "nope < 3"), EXIT_INVALID, r"--target nope: unknown metric")
    expect(run(*plan, "--target", "latency_p99_s[nope] < 3s"), EXIT_INVALID, r"no endpoint group is named 'nope'")
    expect(run(*plan, "--target", "latency_p99_s"), EXIT_INVALID, r"expected METRIC OP VALUE")
    expect(run(*plan, "--target", "latency_p99_s == 3s"), EXIT_INVALID, r"a target is a bound")
    expect(run(*plan, "--target", "latency_p99_s < 3 parsecs"), EXIT_INVALID, r"latency_p99_s")
    expect(run(*plan, "--target", "latency_p99_s < 3s", "--range", "9..2"), EXIT_INVALID, r"FROM <= TO")
    expect(run(*plan, "--target", "latency_p99_s < 3s", "-r", "1"), EXIT_INVALID, r"--replications")
    expect(run("plan", QUICKSTART, "--resource", "webhook.platform.podz", "--target", "latency_p99_s < 3s", "--range", "1..2"),
           EXIT_INVALID, r"did you mean 'pods'")
    expect(run(*plan, "--target", "latency_p99_s < 3s", "--memory-limit", "lots"), EXIT_INVALID, r"--memory-limit")
    expect(run(*plan, "--target", "latency_p99_s < 3s", "--range", "0..4"), EXIT_INVALID,
           r"\(--range webhook.platform.pods=0\): webhook.platform.pods: must be between 1 and 1024")


# ---- serve and world (the live service) -------------------------------------------------------

@case("serve.bad_configurations")
def _():
    expect(run("serve"), EXIT_INVALID, r"serve needs a configuration file")
    expect(run("serve", path("no-such.yaml")), EXIT_INVALID, r"no-such\.yaml.*cannot open the file")
    good = open(os.path.join(SRC, "config", "serve-local.yaml")).read()
    expect(run("serve", write("serve-good.yaml", good), "--check"), 0, r"valid", where="stdout")
    for name, change, pattern in (
            ("typo", ("platform:", "platfrom:"), r"serve-typo\.yaml:\d+:1: platfrom: unknown key; did you mean 'platform'\?"),
            ("platform-typo", ("  retry:", "  retyr:"), r"platform\.retyr: unknown key; did you mean 'retry'\?"),
            ("listen", ("127.0.0.1:8080", "127.0.0.1:http"), r"serve\.listen: the port 'http'"),
            ("serviceb", ("http://127.0.0.1:8081/serviceb", "127.0.0.1:8081"), r"serve\.serviceb: not an absolute URL"),
            ("secret", ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_short"), r"serve\.signing_secret: not a signing key"),
            ("allow", ("[loopback]", "[everything]"), r"expected one of loopback, private, link_local"),
            ("durability", ("durability: full", "durability: paranoid"), r"expected one of full, normal, off"),
            ("lease", ("  url_cache:", "  lease: 1s\n  url_cache:"), r"platform\.lease")):
        body = good.replace(*change)
        assert body != good, name
        expect(run("serve", write(f"serve-{name}.yaml", body), "--check"), EXIT_INVALID, pattern)
    expect(run("serve", write("serve-ok.yaml", good), "--listen", "256.0.0.1:1"), EXIT_INVALID, r"not an IP address")
    expect(run("serve", write("serve-ok.yaml", good), "--database", WORK, "--listen", "127.0.0.1:0"), EXIT_INVALID,
           r"is a directory; give the path of a database file")
    # A database a simulated run wrote, or anyone else's, is never written into (as run refuses serve's).
    simulated = path("simulated.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(simulated + suffix):
            os.remove(simulated + suffix)
    assert run("run", "-q", QUICKSTART, "--set", "duration=1m", "--sqlite-path", simulated)[0] in (0, 1)
    before = os.path.getsize(simulated)
    expect(run("serve", write("serve-ok.yaml", good), "--database", simulated, "--check"), EXIT_INVALID,
           r"holds a simulated run \(relaysim run --sqlite-path\)")
    assert os.path.getsize(simulated) == before, "serve wrote into the simulated run's database"
    foreign = path("foreign-for-serve.db")
    if os.path.exists(foreign):
        os.remove(foreign)
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE invoices (id INTEGER)")
    con.commit()
    con.close()
    expect(run("serve", write("serve-ok.yaml", good), "--database", foreign, "--check"), EXIT_INVALID,
           r"not a database relaysim serve wrote for the webhook platform \(it holds the tables invoices\)")
    # Nor does one system's serve take the other's database.
    sms = open(os.path.join(SRC, "config", "serve-sms.yaml")).read().replace("relaysim-sms.db", path("sms-for-serve.db"))
    assert subprocess.run([RELAYSIM, "keys", write("serve-sms-ok.yaml", sms), "--admin"], capture_output=True).returncode == 0
    expect(run("serve", write("serve-ok.yaml", good), "--database", path("sms-for-serve.db"), "--check"), EXIT_INVALID,
           r"not a database relaysim serve wrote for the webhook platform \(it holds the tables api_keys, businesses")


@case("serve.sms_bad_configurations")
def _():
    good = open(os.path.join(SRC, "config", "serve-sms.yaml")).read()
    expect(run("serve", write("sms-good.yaml", good), "--check"), 0, r"valid \(the SMS gateway\)", where="stdout")
    for name, change, pattern in (
            ("system", ("system: sms", "system: smss"), r"sms-system\.yaml:\d+:9: system: expected one of webhook, sms, outbox, got 'smss'; did you mean 'sms'\?"),
            ("typo", ("token_secret:", "token_secrt:"), r"serve\.token_secrt: unknown key; did you mean 'token_secret'\?"),
            ("short-secret", ("change-me-to-32-or-more-random-bytes", "short"), r"serve\.token_secret: must be at least 32 bytes"),
            ("no-redis", ("  redis: 127.0.0.1:6379\n", ""), r"platform\.limit: a shared limit lives in Redis: give serve\.redis"),
            ("redis", ("redis: 127.0.0.1:6379", "redis: unix:relative.sock"), r"serve\.redis: a unix socket is written unix:/absolute/path"),
            ("provider-url", ("http://127.0.0.1:8091/providers/beta/submit", "beta.example"), r"serve\.providers\[1\]\.url: not an absolute URL"),
            ("provider-twice", ("name: beta", "name: alpha"), r"serve\.providers: two providers are called 'alpha'"),
            ("receipt-secret", ("beta-receipts-secret", "short"), r"serve\.providers\[1\]\.receipt_secret: must be at least 16"),
            ("platform", ("send_timeout: 5s", "send_timeout: fast"), r"platform\.send_timeout: expected a duration"),
            # The model's own validation, with two providers from serve.providers.
            ("lease", ("lease: 1m", "lease: 2s"), r"platform\.lease: must be longer than send_timeout × providers"),
            ("business", ("max_attempts: 5", "max_attempts: 0"), r"business\.retry\.max_attempts"),
            ("poll", ("  providers:", "  poll: 0s\n  providers:"), r"serve\.poll: must be between 10ms and 1h")):
        body = good.replace(*change)
        assert body != good, name
        expect(run("serve", write(f"sms-{name}.yaml", body), "--check"), EXIT_INVALID, pattern)
    # A key of the webhook platform's serve section is not the gateway's.
    expect(run("serve", write("sms-serviceb.yaml", good.replace("serve:\n", "serve:\n  serviceb: http://x\n")), "--check"),
           EXIT_INVALID, r"serve\.serviceb: unknown key")
    expect(run("keys", write("sms-good.yaml", good), "--tenant", "cx1"), EXIT_INVALID,
           r"the SMS gateway's businesses send with the tokens its back office issues")
    # A recipient directory serve cannot read: said so at start, never a directory made up.
    for directory, pattern in ((path("no-directory.db"), r"no such file: start relaysim world with --serve first"),
                               (WORK, r"\(a directory\)"),
                               (write("not-a-directory.db", "users"), r"is not a recipient directory relaysim world wrote")):
        body = good.replace("  durability: full\n", f"  durability: full\n  directory: {directory}\n")
        expect(run("serve", write("sms-directory.yaml", body), "--listen", "127.0.0.1:0", "--database", path("sms-dir.db")),
               EXIT_INVALID, r"serve\.directory: .*" + pattern)
    assert not os.path.exists(path("no-directory.db")), "serve made a directory file of its own"


def judge_outbox(config):
    """`relaysim judge` of an outbox run refuses what no run of this relay wrote, naming where,
    before it reads the shards; and a shard it cannot reach, saying so."""
    scenario = os.path.join(SRC, "scenarios", "outbox-quickstart.yaml")
    world = '{"world": {"scenario": "outbox-quickstart", "seed": 11, "system": "outbox", "started_ns": 1000000000}}\n'
    started = '{"event":"started","pod":1,"at":2000000000,"logged":2000000000}\n'
    stopped = '{"event":"stopped","pod":1,"at":3000000000,"logged":3000000000}\n'

    def judge(events=started + stopped, receipts=world, *extra, scenario=scenario):
        return run("judge", scenario, config, "--events", write("outbox-events.jsonl", events), "--receipts",
                   write("outbox-receipts.jsonl", receipts), *extra)
    expect(judge(started + stopped, world, "--database", path("x.db")), EXIT_INVALID, r"--database is not read for the outbox")
    expect(judge(started + stopped, world, "--calls", path("x.jsonl")), EXIT_INVALID, r"--calls is not read for the outbox")
    expect(judge(scenario=QUICKSTART), EXIT_INVALID, r"the scenario's system is not outbox")
    expect(judge(receipts=""), EXIT_INVALID, r"outbox-receipts\.jsonl is empty: no world wrote it")
    expect(judge(receipts=world.replace("outbox-quickstart", "other")), EXIT_INVALID,
           r":1: these are the receipts of world 'other' \(seed 11\), not of the scenario 'outbox-quickstart'")
    expect(judge(receipts=world.replace('"seed": 11', '"seed": 12')), EXIT_INVALID, r"world 'outbox-quickstart' \(seed 12\)")
    expect(judge(receipts=world.replace("outbox", "sms", 1).replace('"system": "outbox"', '"system": "sms"')), EXIT_INVALID,
           r"served a sms scenario, not the outbox relay's")
    expect(judge(receipts=world + '{"at_ns": 5, "shard": 7, "id": 1, "attempt": 1, "key": 1, "version": 1, "fence": 1, '
                 '"applied": 1}\n'), EXIT_INVALID, r"outbox-receipts\.jsonl:2: shard 7: the relay has 2")
    expect(judge(stopped), EXIT_INVALID, r"outbox-events\.jsonl:1: .*before the process logged 'started'")
    expect(judge(started.replace('"pod":1', '"pod":3') + stopped), EXIT_INVALID, r":1: pod 3: the relay's pods are numbered")
    expect(judge(started + started.replace('"pod":1', '"pod":2')), EXIT_INVALID,
           r"outbox-events\.jsonl:2: pod 2 in the log of pod 1: give each serve process its own --events file")
    expect(judge(started.replace("2000000000", "500000000", 1) + stopped), EXIT_INVALID, r":1: 'at' is .* before the world started")
    expect(judge(started + '{"event":"granted","pod":1,"at":2500000000,"logged":2500000000,"lease":"x","holder":1,'
                 '"token":0,"renewed":false,"until":9000000000}\n' + stopped), EXIT_INVALID, r":2: granted: .*count from 1")
    expect(judge(started + '{"event":"consumed","pod":1,"at":2500000000,"logged":2500000000,"partition":99,"offset":1}\n'
                 + stopped), EXIT_INVALID, r":2: partition 99: the log has 12")
    expect(judge(started + '{"event":"consumed","pod":1,"at":2500000000,"logged":2500000000,"partition":1,'
                 '"offset":1000000000000}\n' + stopped), EXIT_INVALID,
           r"names offset 1000000000000, but the logs' publishes carried 0 records: the logs are not of one run")
    expect(judge(receipts=world.replace('"system": "outbox"', '"system": 1')), EXIT_INVALID,
           r"outbox-receipts\.jsonl:1: field 'system' is not a valid value: 1")
    expect(judge(started + '{"event":"finished","pod":1,"at":2500000000,"logged":2500000000,"records":[{"shard":0,"id":1,'
                 '"attempt":0,"type":0,"key":1,"version":1,"fence":1,"created_at":2400000000}],"status":"pending",'
                 '"reason":"none","next_attempt":2600000000,"applied":true}\n' + stopped), EXIT_INVALID,
           r":2: a record of attempt 0: attempts count from 1")
    # What is read, read whole (a process killed and started again is a run's, too): then the
    # shards, which are not there.
    for events in (started + stopped, started + started, started):
        expect(judge(events), EXIT_INVALID, r"cannot read the database: PostgreSQL: cannot connect")


@case("serve.outbox_bad_configurations")
def _():
    good = open(os.path.join(SRC, "config", "serve-outbox.yaml")).read()
    expect(run("serve", write("outbox-good.yaml", good), "--check"), 0, r"valid \(the outbox relay: 2 shards", where="stdout")
    for name, change, pattern in (
            ("typo", ("  etcd:", "  etdc:"), r"serve\.etdc: unknown key; did you mean 'etcd'\?"),
            ("one-database", ("dbname=outbox_s1", "dbname=outbox_s0"), r"serve\.shards: shards 0 and 1 are one database"),
            ("shards", ("    - host=127.0.0.1 port=5433 user=postgres dbname=outbox_s1 connect_timeout=5\n", ""),
             r"serve\.shards: names 1 databases, but platform\.shards is 2"),
            ("conninfo", ("dbname=outbox_s1", "dbname='outbox_s1"), r"serve\.shards: shard 1: unterminated quoted string"),
            ("etcd", ("etcd: http://127.0.0.1:2379", "etcd: https://127.0.0.1:2379"), r"serve\.etcd: is called over plain http"),
            ("downstream", ("downstream: http://127.0.0.1:8093/downstream", "downstream: nowhere"),
             r"serve\.downstream: not an absolute URL"),
            ("redis", ("redis: 127.0.0.1:6379", "redis: unix:relative.sock"), r"serve\.redis: a unix socket is written unix:/absolute/path"),
            ("topic", ("topic: outbox", "topic: \"{o}\""), r"serve\.topic: must not hold braces"),
            ("partitions", ("partitions: 12", "partitions: 0"), r"serve\.partitions: must be between 1 and 4096"),
            ("poll-interval", ("max_poll_interval: 1m", "max_poll_interval: 10ms"), r"serve\.max_poll_interval: must be between 1s"),
            # The scenario schema's and the model's own checks of the platform.
            ("platform", ("renew_every: 3s", "renew_every: often"), r"platform\.renew_every: expected a duration"),
            ("renewal", ("renew_every: 3s", "renew_every: 20s"), r"platform\.renew_every"),
            ("pod", ("  downstream: http://127.0.0.1:8093/downstream", "  downstream: http://127.0.0.1:8093/downstream\n  pod: 3"),
             r"serve\.pod: is 3, but platform\.pods is 2")):
        body = good.replace(*change)
        assert body != good, name
        expect(run("serve", write(f"outbox-{name}.yaml", body), "--check"), EXIT_INVALID, pattern)
    # Served on the databases it names: none here, and said so; nor a database or keys of its own.
    import socket
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        nobody = s.getsockname()[1]
    unreachable = good.replace("port=5433", f"port={nobody}")
    expect(run("serve", write("outbox-unreachable.yaml", unreachable), "--listen", "127.0.0.1:0"), EXIT_INCOMPLETE,
           r"cannot open the database: PostgreSQL: cannot connect")
    expect(run("serve", write("outbox-good.yaml", good), "--pod", "3", "--check"), EXIT_INVALID,
           r"--pod 3: platform\.pods is 2")
    expect(run("serve", write("outbox-good.yaml", good), "--database", path("x.db"), "--check"), EXIT_INVALID,
           r"--database: the outbox relay's databases are its serve\.shards")
    expect(run("keys", write("outbox-good.yaml", good), "--admin"), EXIT_INVALID, r"takes no API keys")
    # The test's crash point: counted from 1, with the log it keeps a line from, the outbox relay's.
    expect(run("serve", write("outbox-good.yaml", good), "--crash-after-commit", "0", "--check"), EXIT_INVALID,
           r"--crash-after-commit: Value 0 not in range")
    expect(run("serve", write("outbox-good.yaml", good), "--crash-after-commit", "5", "--check"), EXIT_INVALID,
           r"--crash-after-commit needs --events")
    expect(run("serve", os.path.join(SRC, "config", "serve-sms.yaml"), "--crash-after-commit", "5"), EXIT_INVALID,
           r"--crash-after-commit: only the outbox relay \(system: outbox\) has it")
    judge_outbox(write("outbox-unreachable.yaml", unreachable))
    # Its world: the downstream, which needs the relay's file, and takes no other world's options.
    scenario = os.path.join(SRC, "scenarios", "outbox-quickstart.yaml")
    expect(run("world", scenario), EXIT_INVALID, r"give it with --serve CONFIG")
    expect(run("world", scenario, "--serve", os.path.join(SRC, "config", "serve-sms.yaml")), EXIT_INVALID,
           r"is not an outbox relay's \(system: outbox\)")
    expect(run("world", scenario, "--serve", write("outbox-good.yaml", good), "--drive", "http://127.0.0.1:1"),
           EXIT_INVALID, r"an outbox world serves its downstream only")
    expect(run("world", scenario, "--serve", write("outbox-good.yaml", good), "--effects", WORK), EXIT_INCOMPLETE,
           r"cannot write the world's database")
    expect(run("world", QUICKSTART, "--effects", path("effects.db")), EXIT_INVALID, r"--effects is an outbox world's")


@case("serve.address_in_use")
def _():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        good = open(os.path.join(SRC, "config", "serve-local.yaml")).read()
        expect(run("serve", write("serve-busy.yaml", good), "--listen", f"127.0.0.1:{port}", "--database",
                   path("serve-busy.db")), EXIT_INCOMPLETE, r"cannot listen on 127\.0\.0\.1:\d+: Address already in use")
        expect(run("world", QUICKSTART, "--listen", f"127.0.0.1:{port}"), EXIT_INCOMPLETE, r"Address already in use")


@case("world.bad_inputs")
def _():
    expect(run("world"), EXIT_INVALID, r"SCENARIO is required")
    expect(run("world", os.path.join(SRC, "scenarios", "sms-quickstart.yaml")), EXIT_INVALID,
           r"give its serve configuration with --serve CONFIG")
    expect(run("world", os.path.join(SRC, "scenarios", "outbox-broker-outage.yaml")), EXIT_INVALID,
           r"an outbox world reads the relay's message types .* give it with --serve CONFIG")
    expect(run("world", QUICKSTART, "--serve", os.path.join(SRC, "config", "serve-sms.yaml")), EXIT_INVALID,
           r"a webhook world takes neither")
    expect(run("world", os.path.join(SRC, "scenarios", "sms-quickstart.yaml"), "--serve",
               os.path.join(SRC, "config", "serve-local.yaml")), EXIT_INVALID, r"is not an SMS gateway's")
    sms_serve = os.path.join(SRC, "config", "serve-sms.yaml")
    expect(run("world", os.path.join(SRC, "scenarios", "sms-quickstart.yaml"), "--serve", sms_serve, "--gateway",
               "ftp://127.0.0.1:8090"), EXIT_INVALID, r"--gateway: expected the gateway's base URL")
    any_port = open(sms_serve).read().replace("listen: 127.0.0.1:8090", "listen: 127.0.0.1:0")
    expect(run("world", os.path.join(SRC, "scenarios", "sms-quickstart.yaml"), "--serve", write("any-port.yaml", any_port)),
           EXIT_INVALID, r"listens on any free port .*: say where the gateway is with --gateway")
    one_provider = open(os.path.join(SRC, "config", "serve-sms.yaml")).read().replace(
        "    - {name: beta, url: http://127.0.0.1:8091/providers/beta/submit, receipt_secret: beta-receipts-secret}\n", "")
    expect(run("world", os.path.join(SRC, "scenarios", "sms-quickstart.yaml"), "--serve", write("one-provider.yaml", one_provider),
               "--listen", "127.0.0.1:0"), EXIT_INVALID, r"the scenario's provider 'beta' is not among the gateway's")
    expect(run("world", write("world-typo.yaml", BASE.replace("platform:", "platfrom:"))), EXIT_INVALID,
           r"did you mean 'platform'")
    expect(run("world", QUICKSTART, "--listen", "nowhere"), EXIT_INVALID, r"--listen: expected HOST:PORT")
    expect(run("world", QUICKSTART, "--signing-secret", "nope"), EXIT_INVALID, r"--signing-secret: not a key")
    expect(run("world", QUICKSTART, "--hold", "soon"), EXIT_INVALID, r"--hold")
    expect(run("world", QUICKSTART, "--receipts", WORK, "--listen", "127.0.0.1:0"), EXIT_INVALID, r"--receipts: cannot open")
    # --drive: the key comes from the environment, never the command line; the URL is serve's base.
    expect(run("world", QUICKSTART, "--drive", "http://127.0.0.1:9", "--calls", path("calls.jsonl"), "--listen", "127.0.0.1:0"),
           EXIT_INVALID, r"--drive: set RELAYSIM_API_KEY")
    os.environ["RELAYSIM_API_KEY"] = "rsk_1_" + "0" * 64
    try:
        expect(run("world", QUICKSTART, "--drive", "http://127.0.0.1:9", "--listen", "127.0.0.1:0"), EXIT_INVALID,
               r"--drive: say where the calls go with --calls")
        for bad in ("ftp://127.0.0.1:9", "http://127.0.0.1:9/v1/webhooks", "nowhere"):
            expect(run("world", QUICKSTART, "--drive", bad, "--calls", path("calls.jsonl"), "--listen", "127.0.0.1:0"),
                   EXIT_INVALID, r"--drive: expected serve's base URL")
        expect(run("world", QUICKSTART, "--drive", "http://127.0.0.1:9", "--calls", WORK, "--listen", "127.0.0.1:0"),
               EXIT_INVALID, r"--calls: cannot open")
    finally:
        del os.environ["RELAYSIM_API_KEY"]


@case("judge.bad_inputs")
def _():
    expect(run("judge"), EXIT_INVALID, r"SCENARIO is required")
    config = write("judge-serve.yaml", open(os.path.join(SRC, "config", "serve-local.yaml")).read())
    world = '{"world": {"scenario": "quickstart", "seed": 42, "base": "http://127.0.0.1:9", "started_ns": 1000}}\n'
    started = '{"event":"started","pod":1,"at":2000}\n'
    # A database as serve leaves it: serve started on it, then stopped.
    database = path("judge.db")
    serve = subprocess.Popen([RELAYSIM, "serve", config, "--listen", "127.0.0.1:0", "--database", database],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    serve.stdout.readline()
    serve.terminate()
    serve.wait(timeout=30)

    def judge(scenario=QUICKSTART, events=started, receipts=world, calls="", db=database):
        return run("judge", scenario, config, "--events", write("judge-events.jsonl", events), "--receipts",
                   write("judge-receipts.jsonl", receipts), "--database", db,
                   *(["--calls", write("judge-calls.jsonl", calls)] if calls is not None else []))
    expect(judge(), 0, r"judge: every invariant holds", where="stdout")  # a run that did nothing
    expect(judge(scenario=os.path.join(SRC, "scenarios", "sms-quickstart.yaml")), EXIT_INVALID, r"judges webhook runs")
    expect(judge(calls=None), EXIT_INVALID, r"--calls is required for the webhook platform's run")
    expect(judge(receipts=""), EXIT_INVALID, r"judge-receipts\.jsonl: no \{\"world\": \.\.\.\} line")
    expect(judge(receipts=world + "[1]\n"), EXIT_INVALID, r"judge-receipts\.jsonl:2: not a JSON object")
    expect(judge(receipts=world + '{"at_ns": 5000}\n'), EXIT_INVALID, r"judge-receipts\.jsonl:2: no field 'endpoint'")
    expect(judge(receipts=world + world), EXIT_INVALID, r"judge-receipts\.jsonl:2: a second world's receipts")
    expect(judge(receipts=world.replace("42", "43")), EXIT_INVALID, r"receipts of world 'quickstart' \(seed 43\), not of")
    receipt = ('{"at_ns": 5000, "endpoint": 7, "cxid": "cx7", "version": 1, "target": "/ep7/hooks/cx7/v1", "webhook_id": "msg_1", "status": 200, '
               '"answered": true, "key": 0, "payload_digest": 1}\n')
    expect(judge(receipts=world + receipt), EXIT_INVALID, r"judge-receipts\.jsonl:2: the payload names no key")
    expect(judge(receipts=world + receipt.replace('"at_ns": 5000', '"at_ns": 18446744073709551615')), EXIT_INVALID,
           r"field 'at_ns' is not a valid value")
    expect(judge(events=""), EXIT_INVALID, r"judge-events\.jsonl is empty: no serve process wrote it")
    expect(run("judge", QUICKSTART, config, "--events", write("judge-a.jsonl", started), write("judge-b.jsonl", started),
               "--receipts", write("judge-receipts.jsonl", world), "--calls", write("judge-calls.jsonl", ""),
               "--database", database), EXIT_INVALID, r"judge-b\.jsonl:1: pod 1 also logged in .*judge-a\.jsonl")
    expect(judge(events=started + started.replace('"pod":1', '"pod":2')), EXIT_INVALID, r":2: pod 2 in the log of pod 1")
    expect(judge(events=started.replace("2000", "500")), EXIT_INVALID, r"judge-events\.jsonl:1: 'started' .* before the world started")
    expect(judge(events=started + '{"event":"claimed","pod":1,"at":3000,"id":3,"token":1}\n'), EXIT_INVALID,
           r"judge-events\.jsonl:2: claimed: no field 'deadline_at'")
    expect(judge(events=started + '{"event":"claimed","pod":1,"at":3000,"id":0,"token":1,"deadline_at":9}\n'),
           EXIT_INVALID, r"judge-events\.jsonl:2: a claimed of request 0")
    expect(judge(events=started.replace("2000", "18446744073709551615")), EXIT_INVALID, r"field 'at' is not a valid value")
    # Requests of cxids ServiceB does not have (the live API takes any): judged, not a crash.
    for cxid in ("foo", "", "cx4294967296", "cx200"):
        events = started + "".join(json.dumps(line) + "\n" for line in (
            {"event": "ingested", "pod": 1, "at": 3000, "id": 1, "cxid": cxid, "request_id": "r1", "outcome": "created",
             "created_at": 3000, "deadline_at": 9000},
            {"event": "claimed", "pod": 1, "at": 4000, "id": 1, "deadline_at": 9000, "token": 1},
            {"event": "attempt_started", "pod": 1, "at": 5000, "id": 1, "number": 1, "url": "http://x/ep1/hooks/cx1/v1",
             "version": 1}))
        expect(judge(events=events), 1, r"W-url at .* attempt used http://x/ep1/hooks/cx1/v1 ", where="stdout")
    expect(judge(calls='{"cxid": "cx1", "request_id": "r1"}\n'), EXIT_INVALID, r"judge-calls\.jsonl:1: no field 'key'")
    expect(judge(calls='{"cxid": "cx1", "request_id": "r1", "key": "one"}\n'), EXIT_INVALID,
           r"judge-calls\.jsonl:1: field 'key' is not a valid value")
    call = '{"cxid": "cx1", "request_id": "r1", "key": 1, "payload": {"seq": 1}, "sent_ns": 3000, "answered_ns": 4000, "status": 202}\n'
    expect(judge(calls=call.replace('"key": 1', '"key": 18446744073709551616')), EXIT_INVALID, r"field 'key' is not a valid value")
    expect(judge(calls=call.replace("202", "99999")), EXIT_INVALID, r"field 'status' is not an HTTP status")
    expect(judge(calls=call.replace("3000", "10")), EXIT_INVALID, r"'sent_ns' is .* before the world started")
    expect(run("judge", QUICKSTART, config, "--events", path("no-such.jsonl"), "--receipts", path("no-such.jsonl"),
               "--calls", path("no-such.jsonl"), "--database", database), EXIT_INVALID, r"cannot open .*no-such\.jsonl")
    expect(run("judge", QUICKSTART, config, "--events", WORK, "--receipts", write("judge-receipts.jsonl", world),
               "--calls", write("judge-calls.jsonl", ""), "--database", database), EXIT_INVALID, r"--events: .* is a directory")
    for db, pattern in ((path("no-such.db"), r"no such file"), (WORK, r"a directory"),
                        (write("judge-empty.db", ""), r"is not a database relaysim serve left"),
                        (QUICKSTART, r"is not a database relaysim serve left")):
        expect(judge(db=db), EXIT_INVALID, "--database: .*" + pattern)
    assert os.path.getsize(path("judge-empty.db")) == 0, "the judge wrote into an empty file given as --database"
    # A database from before the notices' outbox is refused, not changed.
    old = path("judge-old.db")
    shutil.copy(database, old)
    with sqlite3.connect(old) as db:
        db.execute("DROP TABLE notices")
    expect(judge(db=old), EXIT_INVALID, r"--database: .* no outbox of tenants' notices")
    with sqlite3.connect(old) as db:
        assert not db.execute("SELECT name FROM sqlite_master WHERE name = 'notices'").fetchall(), "the judge changed a database"
    # --json: written where it is told, or a clear failure.
    expect(run("judge", QUICKSTART, config, "--events", write("judge-events.jsonl", started), "--receipts",
               write("judge-receipts.jsonl", world), "--calls", write("judge-calls.jsonl", ""), "--database", database,
               "--json", WORK), EXIT_INCOMPLETE, r"--json: cannot write")


@case("judge.sms_bad_inputs")
def _():
    sms_scenario = os.path.join(SRC, "scenarios", "sms-quickstart.yaml")
    config = write("judge-sms.yaml", open(os.path.join(SRC, "config", "serve-sms.yaml")).read())
    world = '{"world": {"scenario": "sms-quickstart", "seed": 7, "system": "sms", "started_ns": 1000, "epoch_ns": 0}}\n'
    started = '{"event":"started","pod":1,"at":2000,"logged":2000}\n'
    # A database as serve leaves it: serve started on it, then stopped (Redis is never asked).
    database = path("judge-sms.db")
    serve = subprocess.Popen([RELAYSIM, "serve", config, "--listen", "127.0.0.1:0", "--database", database],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    serve.stdout.readline()
    serve.terminate()
    serve.wait(timeout=30)

    def judge(scenario=sms_scenario, events=started, receipts=world, db=database, more=()):
        return run("judge", scenario, config, "--events", write("judge-sms-events.jsonl", events), "--receipts",
                   write("judge-sms-world.jsonl", receipts), "--database", db, *more)
    expect(judge(), 0, r"judge: every invariant holds", where="stdout")  # a run that did nothing
    expect(judge(scenario=QUICKSTART), EXIT_INVALID, r"the scenario's system is not sms")
    def calls(text):
        return ("--calls", write("judge-sms-calls.jsonl", text))
    expect(judge(more=calls("")), 0, r"0 client calls answered, ", where="stdout")
    expect(judge(), 0, r"no --calls: what the clients were answered is not judged", where="stdout")
    call = ('{"sent_ns": 3000, "answered_ns": 4000, "key": "otp/a", "token": "forged", "repeat": false, "status": 401, '
            '"answer": {"fault": "bad_signature", "error": "the token is refused"}}\n')
    expect(judge(more=calls(call)), 0, r"1 client calls answered", where="stdout")
    # A request the API refused before it was a send (no token at all) is not one the gateway judged.
    expect(judge(more=calls(call.replace('"fault": "bad_signature", ', ""))), 0, r"0 client calls answered", where="stdout")
    expect(judge(more=calls(call.replace('"status": 401', '"status": 200').replace('"fault": "bad_signature", ', ""))),
           EXIT_INVALID, r"judge-sms-calls\.jsonl:1: an answer of status 200 with no 'outcome' or 'fault'")
    expect(judge(more=calls(call.replace("forged", "stolen"))), EXIT_INVALID, r":1: 'token' is not one of good, forged")
    expect(judge(more=calls(call.replace("bad_signature", "none"))), EXIT_INVALID, r":1: 'fault' is not a token's fault")
    expect(judge(more=calls(call.replace('"answered_ns": 4000', '"answered_ns": 2500'))), EXIT_INVALID,
           r":1: answered before it was sent")
    expect(judge(more=calls(call.replace('"key": "otp/a", ', ""))), EXIT_INVALID, r":1: no field 'key'")
    expect(judge(more=calls(call.replace('"status": 401', '"status": 1000'))), EXIT_INVALID, r"'status' is not an HTTP status")
    # A forged token let through is S-scope broken: the calls are judged.
    let_through = call.replace('"status": 401', '"status": 202').replace(
        '"fault": "bad_signature", "error": "the token is refused"', '"outcome": "accepted", "id": 1')
    expect(judge(more=calls(let_through)), 1, r"S-scope .* a forged token of request otp/a was let through", where="stdout")
    expect(judge(receipts=""), EXIT_INVALID, r"judge-sms-world\.jsonl is empty: no world wrote it")
    expect(judge(receipts=world.replace(', "system": "sms"', "")), EXIT_INVALID, r":1: the world served a webhook scenario")
    expect(judge(receipts=world.replace("sms-quickstart", "other")), EXIT_INVALID, r"receipts of world 'other' \(seed 7\), not of the scenario 'sms-quickstart'")
    expect(judge(receipts=world + world), EXIT_INVALID, r":2: a second world's log")
    expect(judge(events=started + started.replace('"pod":1', '"pod":2')), EXIT_INVALID,
           r"judge-sms-events\.jsonl:2: pod 2 in the log of pod 1: give each serve process its own --events file")
    submit = '{"at_ns": 5000, "provider": "alpha", "reference": "1", "attempt": 1, "fate": "accepted"}\n'
    expect(judge(receipts=world + submit.replace("alpha", "gamma")), EXIT_INVALID, r":2: provider 'gamma' is not among")
    expect(judge(receipts=world + submit.replace('"1"', '"one"')), EXIT_INVALID, r"'reference' is not a message id")
    expect(judge(receipts=world + submit.replace("accepted", "eaten")), EXIT_INVALID, r"'fate' is not a provider's fate")
    expect(judge(receipts=world + submit.replace('"attempt": 1', '"attempt": 70000')), EXIT_INVALID,
           r"field 'attempt' is not a valid value")
    expect(judge(events=""), EXIT_INVALID, r"judge-sms-events\.jsonl is empty")
    expect(judge(events=started.replace("2000", "500")), EXIT_INVALID, r":1: 'at' is .* before the world started")
    expect(judge(events='{"event":"stopped","pod":1,"at":2000,"logged":2000}\n'), EXIT_INVALID, r":1: a record before the process logged 'started'")
    expect(judge(events=started.replace('"pod":1', '"pod":0')), EXIT_INVALID, r":1: pod 0")
    claimed = '{"event":"claimed","pod":1,"at":3000,"logged":3000,"id":1,"token":7,"prior":"pending","provider":0,"provider_accepted":false,"kind":"single","recipient":1}\n'
    expect(judge(events=started + claimed + claimed), EXIT_INVALID, r":3: claim token 7 was handed out already, at .*:2")
    expect(judge(events=started + claimed.replace(',"prior":"pending"', "")), EXIT_INVALID, r":2: claimed: no field 'prior'")
    submit_started = ('{"event":"submit_started","pod":1,"at":4000,"logged":4000,"id":1,"token":8,"provider":0,"attempt":1,"path":"async",'
                      '"kind":"single","recipient":1}\n')
    expect(judge(events=started + submit_started), EXIT_INVALID, r":2: message 1 under claim token 8, a claim this process does not hold")
    accepted = ('{"event":"accepted","pod":1,"at":3000,"logged":3000,"id":2,"business":1,"epoch":1,"period":0,"path":"async",'
                '"outcome":"accepted","status":"pending","messages":[{"biz_type":"otp","biz_id":"a","send_at":3000}]}\n')
    expect(judge(events=started + accepted.replace('{"biz_type":"otp","biz_id":"a","send_at":3000}', "")), EXIT_INVALID,
           r":2: accepted: an accepted request names no message")
    expect(judge(events=started + accepted.replace('"send_at":3000', '"send_at":"soon"')), EXIT_INVALID,
           r"field 'messages', item 0: field 'send_at' is not a valid value")
    expect(judge(events=started + accepted + accepted), EXIT_INVALID, r":3: message 2 accepted after message 2: the database hands ids out in order")
    expect(judge(events=started + accepted.replace('"send_at":3000', '"send_at":9223372036854775000')), EXIT_INVALID,
           r":2: 'send_at' is past any real run's time")

    # Message 2 accepted, on a database that holds none: lost, as far as the judge can tell.
    expect(judge(events=started + accepted), 1, r"S-final .* 1 accepted messages are missing from the store", where="stdout")
    expect(judge(events=started + accepted.replace('"id":2', '"id":5000000')), EXIT_INVALID,
           r"holds 0 messages, but a log accepted message 5000000: the logs are not of this database's run")
    expect(judge(events=started.replace('"pod":1', '"pod":2')), 0, r"every invariant holds", where="stdout")
    expect(run("judge", sms_scenario, config, "--events", write("judge-sms-a.jsonl", started), "--events",
               write("judge-sms-b.jsonl", started), "--receipts", write("judge-sms-world.jsonl", world),
               "--database", database), EXIT_INVALID, r"judge-sms-b\.jsonl:1: pod 1 also logged in .*judge-sms-a\.jsonl")
    for db, pattern in ((path("no-such.db"), r"no such file"), (WORK, r"a directory"),
                        (write("judge-sms-empty.db", ""), r"is not a database the SMS gateway's relaysim serve left")):
        expect(judge(db=db), EXIT_INVALID, "--database: .*" + pattern)


# ---- mmc --------------------------------------------------------------------------------------

@case("mmc.bad_rates")
def _():
    for args in (["--lambda", "nan"], ["--mu", "nan"], ["--lambda", "1e-10"], ["--lambda", "1e-300", "--mu", "1e300"],
                 ["--seed", "-1"]):
        expect(run("mmc", *args), EXIT_INVALID, None)
    code, out, _ = run("mmc", "--lambda", "9000", "--mu", "1", "--servers", "10000", "--customers", "1000", "--json")
    assert code == 0 and json.loads(out)["erlang_c_wait_s"] >= 0, out
    # Waits summed over a long queue pass 2^63 nanoseconds; the mean must not wrap negative.
    code, out, _ = run("mmc", "--lambda", "0.001", "--mu", "0.001000001", "--servers", "1", "--customers", "100000",
                       "--json")
    assert code == 0 and json.loads(out)["mean_wait_s"] > 0, out


print(f"\n{len(failures)} of the cases failed: {' '.join(failures)}" if failures else "\nevery case held")
sys.exit(1 if failures else 0)
