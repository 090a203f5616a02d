#!/usr/bin/env python3
"""A doc's generated section must be what the program prints: docs/scenario-format.md's is
`relaysim reference`, docs/live.md's is `relaysim serve --reference`.

    docs_check.py RELAYSIM DOC [--command "serve --reference"] [--write]

With --write, the section is replaced instead (./relaysim docs does that).
"""
import difflib
import subprocess
import sys

BEGIN, END = "<!-- BEGIN relaysim reference -->\n", "<!-- END relaysim reference -->\n"
relaysim, doc = sys.argv[1], sys.argv[2]
command = sys.argv[sys.argv.index("--command") + 1].split() if "--command" in sys.argv else ["reference"]
generated = subprocess.run([relaysim] + command, capture_output=True, text=True, check=True).stdout
text = open(doc, encoding="utf-8").read()
head, rest = text.split(BEGIN, 1)
current, tail = rest.split(END, 1)
if "--write" in sys.argv:
    open(doc, "w", encoding="utf-8").write(head + BEGIN + generated + END + tail)
    sys.exit(0)
if current != generated:
    sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), generated.splitlines(True),
                                               doc + " (as it is)", "relaysim " + " ".join(command) + " (as it should be)"))
    print(f"\n{doc} differs from `relaysim {' '.join(command)}`: run ./relaysim docs")
    sys.exit(1)
print(f"{doc}: the generated section is what the program prints")
