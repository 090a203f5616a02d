#!/usr/bin/env python3
"""The same M/M/c in SimPy and in relaysim, side by side.

Runs the queue (Poisson arrivals at rate lambda, c servers, exponential service at rate mu each,
first come first served) for the same number of customers in SimPy 3 (Debian: python3-simpy3)
and with `relaysim mmc`, then prints both throughputs, their ratio, and both mean waits next to
the Erlang C value. Exit status 0; 2 when SimPy or the relaysim binary is missing.

  bench/simpy_mmc.py [--lambda 9] [--mu 1] [--servers 10] [--customers 200000] [--relaysim build/relaysim]
                     [--json OUT]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time


def erlang_c_wait(lam, mu, c):
    a = lam / mu
    rho = a / c
    term, total = 1.0, 0.0
    for k in range(c):
        total += term
        term *= a / (k + 1)
    top = term / (1.0 - rho)
    return top / (total + top) / (c * mu - lam)


def run_simpy(lam, mu, c, customers, seed):
    import simpy  # imported here so --help works without it

    rng = random.Random(seed)
    env = simpy.Environment()
    servers = simpy.Resource(env, capacity=c)
    stats = {"served": 0, "wait": 0.0}

    def customer(service):
        arrived = env.now
        with servers.request() as req:
            yield req
            stats["wait"] += env.now - arrived
            stats["served"] += 1
            yield env.timeout(service)

    def source():
        for i in range(customers):
            gap = rng.expovariate(lam)
            service = rng.expovariate(mu)
            env.process(customer(service))
            if i + 1 < customers:
                yield env.timeout(gap)

    env.process(source())
    t0 = time.perf_counter()
    env.run()
    wall = time.perf_counter() - t0
    return {"customers": stats["served"], "wall_seconds": wall,
            "customers_per_second": stats["served"] / wall, "mean_wait_s": stats["wait"] / stats["served"]}


def run_relaysim(binary, lam, mu, c, customers, seed):
    out = subprocess.run([binary, "mmc", "--lambda", str(lam), "--mu", str(mu), "--servers", str(c),
                          "--customers", str(customers), "--seed", str(seed), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lambda", dest="lam", type=float, default=9.0, help="arrivals per second (default 9)")
    p.add_argument("--mu", type=float, default=1.0, help="services per second per server (default 1)")
    p.add_argument("--servers", type=int, default=10, help="servers, c (default 10)")
    p.add_argument("--customers", type=int, default=200_000, help="customers (default 200000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=1, help="runs of each; the median throughput is reported")
    p.add_argument("--relaysim", default=os.path.join(here, "..", "build", "relaysim"), help="the relaysim binary")
    p.add_argument("--json", help="also write the figures as JSON here")
    a = p.parse_args()
    if a.lam >= a.mu * a.servers:
        p.error("lambda must be below servers * mu, or the queue has no steady state")
    try:
        import simpy  # noqa: F401
    except ImportError:
        print("simpy_mmc: SimPy 3 is not installed (Debian: apt-get install python3-simpy3)", file=sys.stderr)
        return 2
    if not os.access(a.relaysim, os.X_OK):
        print(f"simpy_mmc: no relaysim binary at {a.relaysim} (build it: ./relaysim build)", file=sys.stderr)
        return 2

    def median(runs):
        return sorted(runs, key=lambda r: r["customers_per_second"])[len(runs) // 2]

    simpy_r = median([run_simpy(a.lam, a.mu, a.servers, a.customers, a.seed + i) for i in range(a.repeat)])
    relay_r = median([run_relaysim(a.relaysim, a.lam, a.mu, a.servers, a.customers, a.seed + i) for i in range(a.repeat)])
    erlang = erlang_c_wait(a.lam, a.mu, a.servers)
    ratio = relay_r["customers_per_second"] / simpy_r["customers_per_second"]
    print(f"M/M/{a.servers}: lambda {a.lam:g}/s, mu {a.mu:g}/s, {a.customers} customers, median of {a.repeat}")
    print(f"  {'':10} {'customers/s':>14} {'wall s':>9} {'mean wait s':>12}")
    print(f"  {'SimPy':10} {simpy_r['customers_per_second']:14.4g} {simpy_r['wall_seconds']:9.3f} {simpy_r['mean_wait_s']:12.4f}")
    print(f"  {'relaysim':10} {relay_r['customers_per_second']:14.4g} {relay_r['wall_seconds']:9.3f} {relay_r['mean_wait_s']:12.4f}")
    print(f"  {'Erlang C':10} {'':14} {'':9} {erlang:12.4f}")
    print(f"  relaysim / SimPy: {ratio:.0f}x   (target >= 50x)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"lambda": a.lam, "mu": a.mu, "servers": a.servers, "customers": a.customers,
                       "simpy": simpy_r, "relaysim": relay_r, "erlang_c_wait_s": erlang, "ratio": ratio}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
