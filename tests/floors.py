#!/usr/bin/env python3
"""Includes point down: every source file stands on a floor declared in docs/architecture.md
(section "Floors") and includes only files of its own floor or of those below it.

  floors.py ROOT          check the tree; exit 1 listing each upward include (file:line) and each
                          file no floor names
  floors.py ROOT --self-test
                          check that the check can fail: an include planted from the lowest floor
                          to the highest must be reported
"""
import os
import re
import sys

SOURCES = ('.h', '.cpp')
SKIP = ('build', '.git')


def read_floors(root):
    """[(floor number, path)] from the Floors table of docs/architecture.md."""
    text = open(os.path.join(root, 'docs', 'architecture.md'), encoding='utf-8').read()
    section = re.search(r'^## Floors\n(.*?)(?=^## )', text, re.M | re.S)
    if not section:
        sys.exit('docs/architecture.md has no "## Floors" section')
    floors = []
    for row in re.finditer(r'^\| (\d+) \| (.+) \|$', section.group(1), re.M):
        for path in re.findall(r'`([^`]+)`', row.group(2)):
            floors.append((int(row.group(1)), path))
    if not floors:
        sys.exit('the Floors section of docs/architecture.md declares no floor')
    return floors


def floor_of(floors, path):
    """The floor of the longest declared path naming `path` (a folder ends with '/'), or None."""
    best, length = None, -1
    for number, declared in floors:
        named = path.startswith(declared) if declared.endswith('/') else path == declared
        if named and len(declared) > length:
            best, length = number, len(declared)
    return best


def sources(root):
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        dirs[:] = [d for d in dirs if not (rel == '.' and d.startswith(SKIP))]
        for name in files:
            if name.endswith(SOURCES):
                yield os.path.normpath(os.path.join(rel, name))


def includes(root, path):
    """(line, included path) for each #include "…" of the repository's own files."""
    with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
        for number, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and os.path.isfile(os.path.join(root, m.group(1))):
                yield number, m.group(1)


def problems(root, floors, planted=()):
    found = []
    for path in sorted(sources(root)):
        here = floor_of(floors, path)
        if here is None:
            found.append(f'{path}: on no floor; name it (or its folder) in the Floors table of docs/architecture.md')
            continue
        edges = list(includes(root, path)) + [(0, inc) for src, inc in planted if src == path]
        for number, inc in edges:
            there = floor_of(floors, inc)
            if there is not None and there > here:
                found.append(f'{path}:{number}: includes {inc}, floor {there}, above its own floor {here}')
    return found


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    floors = read_floors(root)
    if sys.argv[2:] == ['--self-test']:
        files = sorted(sources(root))
        low = next(p for p in files if floor_of(floors, p) == min(floors)[0])
        high = next(p for p in files if floor_of(floors, p) == max(floors)[0])
        found = problems(root, floors, planted=[(low, high)])
        if not any(f.startswith(f'{low}:0: includes {high}') for f in found):
            print(f'the check missed an include planted from {low} to {high}')
            return 1
        print(f'an include planted from {low} (floor {min(floors)[0]}) to {high} (floor {max(floors)[0]}) is reported')
        return 0
    found = problems(root, floors)
    for line in found:
        print(line)
    if found:
        print(f'{len(found)} problems: includes must point down the floors of docs/architecture.md')
        return 1
    print(f'{len(list(sources(root)))} files, every include points down or along its floor')
    return 0


if __name__ == '__main__':
    sys.exit(main())
