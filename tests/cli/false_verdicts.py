#!/usr/bin/env python3
"""Configurations that once drew a false verdict: each is a shipped scenario with one value set
to an edge its reference allows, and each run must hold every invariant (its `expect:` block, which
the changed value may well break, is not judged here).

    false_verdicts.py RELAYSIM SOURCE_DIR

Each case names what the oracle or the model got wrong. Exit 0 when every run holds every invariant.
"""
import json
import os
import subprocess
import sys

RELAYSIM, SRC = sys.argv[1], sys.argv[2]

CASES = [
    # A produce whose record is written after the producer's timeout (a write slower than the
    # timeout) is as ambiguous as one written before it: the next publish's duplicate is explained.
    ("outbox-lost-acks.yaml", ["outbox.platform.publish_timeout=20ms"], "a late write after a publish timed out"),
    ("outbox-lost-acks.yaml", ["outbox.platform.publish_timeout=2ms"], "every publish timing out"),
    # A token's expiry counts whole seconds: a client holding one past it presents an expired token.
    ("sms-quickstart.yaml", ["sms.platform.token_lifetime=1s"], "tokens living a second"),
    # A revoked business's clients keep their token; past its expiry it is an expired one.
    ("sms-quota-exhaustion.yaml", ["sms.platform.token_lifetime=2m"], "a token expiring while its business is revoked"),
    # A claim waiting on the shared limit (or on an in-memory retry) may lose its message to a
    # receipt of an earlier submit: the gateway must not submit it again.
    ("sms-redis-down.yaml", ["sms.platform.send_timeout=100ms"], "a receipt arriving while the limit is asked"),
    ("sms-redis-down.yaml", ["sms.platform.send_timeout=30ms"], "every submit timing out"),
    # Per-key ordering with consumers that never wait for the mark: a hot entity drains slowly, and
    # the messages queued behind its head are not stuck.
    ("../tests/cli/per-key-hot-entity.yaml", [], "a hot entity's queue under per-key ordering"),
    # A pod paused past its claims' lease: it took calls while frozen, sent beside the pod that had
    # rescued its claims, and the oracle judged answers by when they came, not when it read them.
    ("../tests/cli/pause-past-lease.yaml", [], "pods paused past their lease, mid-lookup"),
    ("../tests/cli/pause-past-lease.yaml", ["webhook.platform.pods=1"], "the only pod paused past its lease"),
    ("../tests/cli/pause-past-lease.yaml", ["webhook.platform.url_cache.ttl=2m", "webhook.platform.lease=10m"],
     "a pause longer than the cache's TTL, shorter than the lease"),
]

failures = 0
for scenario, sets, what in CASES:
    args = [RELAYSIM, "run", "-q", os.path.join(SRC, "scenarios", scenario), "--json", "-"]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    label = f"{scenario} {' '.join(sets)} ({what})"
    try:
        result = json.loads(p.stdout)
    except json.JSONDecodeError:
        print(f"FAIL  {label}: exit {p.returncode}, no result: {p.stderr.strip()[:300]}")
        failures += 1
        continue
    broken = [f"{i['id']} ({i['violations']}): {i['examples'][0] if i['examples'] else ''}"
              for i in result["invariants"] if not i["ok"]]
    if broken or result.get("stalled") or result.get("ending") not in ("finished", "drained"):
        print(f"FAIL  {label}: ending {result.get('ending')}; " + "; ".join(broken)[:600])
        failures += 1
    else:
        print(f"ok    {label}")
sys.exit(1 if failures else 0)
