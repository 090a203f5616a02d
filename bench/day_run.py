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
        t0 = time.perf_counter()
        code = subprocess.call([a.relaysim, "run", "-q", a.file, "--json", result_path])
        wall = time.perf_counter() - t0
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
        with open(result_path) as f:
            run = json.load(f)
    figures = {"file": a.file, "exit": code, "verdict": run["verdict"], "wall_seconds": wall,
               "peak_rss_bytes": peak_kib * 1024, "requests": run["requests"]["ingested"],
               "events": run["events"], "virtual_seconds": run["virtual_seconds"],
               "requests_per_second": run["requests"]["ingested"] / wall}
    print(f"{os.path.basename(a.file)}: {figures['verdict']}, {int(figures['requests']):,} requests in {wall:.1f} s wall "
          f"({figures['requests_per_second']:,.0f} requests/s), peak memory {peak_kib / 1024 / 1024:.2f} GiB")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(figures, f, indent=2)
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
