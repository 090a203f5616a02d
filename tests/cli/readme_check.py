#!/usr/bin/env python3
"""The README's sample output must be what the run it shows prints: every line of the sample
(but the `...` that stand for lines left out) appears in the run's output, in the same order.

    readme_check.py RELAYSIM SOURCE_DIR
"""
import re
import subprocess
import sys

relaysim, src = sys.argv[1], sys.argv[2]
readme = open(f"{src}/README.md", encoding="utf-8").read()
m = re.search(r"<!-- sample: (.*?) -->\n```\n(.*?)```", readme, re.S)
if not m:
    sys.exit("README.md has no sample block (<!-- sample: COMMAND --> followed by a ``` block)")
command, sample = m.group(1).split(), m.group(2).splitlines()
assert command[0] == "relaysim", command
out = subprocess.run([relaysim, *command[1:]], capture_output=True, text=True, cwd=src).stdout.splitlines()
at = 0
for line in sample:
    if line.strip() == "...":
        continue
    while at < len(out) and out[at].rstrip() != line.rstrip():
        at += 1
    if at == len(out):
        sys.exit(f"README.md's sample shows a line `{command[1:]}` does not print (or not in this order):\n  {line}")
    at += 1
print(f"README.md: all {sum(1 for l in sample if l.strip() != '...')} sample lines are printed by: {' '.join(command)}")
