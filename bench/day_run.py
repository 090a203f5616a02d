#!/usr/bin/env python3
"""Runs one scenario with `relaysim run` and reports its wall time and peak memory (the largest
resident set of the process, from the kernel's rusage), as JSON for bench/summarize.py.

  bench/day_run.py [--relaysim build/relaysim] [--json OUT] FILE
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def cpu_times():
    """(busy, steal) jiffies of all CPUs from /proc/stat, or None off Linux. On a shared virtual
    machine, steal is time the hypervisor gave our CPUs to someone else: wall times stretch by it."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return user + nice + system + irq + softirq, steal


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file")
    p.add_argument("--relaysim", default=os.path.join(here, "..", "build", "relaysim"))
    p.add_argument("--json", help="write the figures here")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result_path = os.path.join(tmp, "run.json")
        print(f"day_run: {os.path.basename(a.file)} (this takes minutes)...", file=sys.stderr, flush=True)
        before = cpu_times()
        t0 = time.perf_counter()
        code = subprocess.call([a.relaysim, "run", "-q", a.file, "--json", result_path])
        wall = time.perf_counter() - t0
        after = cpu_times()
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
        with open(result_path) as f:
            run = json.load(f)
    figures = {"file": a.file, "exit": code, "verdict": run["verdict"], "wall_seconds": wall,
               "peak_rss_bytes": peak_kib * 1024, "requests": run["requests"]["ingested"],
               "events": run["events"], "virtual_seconds": run["virtual_seconds"],
               "requests_per_second": run["requests"]["ingested"] / wall}
    if before and after:
        busy, steal = after[0] - before[0], after[1] - before[1]
        figures["steal_share"] = steal / (busy + steal) if busy + steal > 0 else 0.0
    print(f"{os.path.basename(a.file)}: {figures['verdict']}, {int(figures['requests']):,} requests in {wall:.1f} s wall "
          f"({figures['requests_per_second']:,.0f} requests/s), peak memory {peak_kib / 1024 / 1024:.2f} GiB"
          + (f", CPU stolen by the hypervisor {100 * figures['steal_share']:.0f} %" if "steal_share" in figures else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(figures, f, indent=2)
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
