#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The project's size rules (issue 38), over every C file outside tests/: no file
longer than 1,000 lines, no function longer than 100 (a body opens with '{' alone at
column 0 and closes with '}' at column 0, the project's style). Prints one line per
breach and the plain closing line; exit 1 on any breach.
usage: test_sizes.py SOURCE_ROOT"""
import os
import sys

FILE_MAX, FUNC_MAX = 1000, 100
SKIP = ("tests", "build", ".git")


def sources(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if not (rel == "." and (x in SKIP or x.startswith("build")))]
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def breaches(path, root):
    lines = open(path, errors="replace").read().splitlines()
    rel = os.path.relpath(path, root)
    if len(lines) > FILE_MAX:
        yield f"{rel}: {len(lines)} lines (at most {FILE_MAX})"
    start = None
    for i, line in enumerate(lines):
        if line == "{":
            start = i
        elif line == "}" and start is not None:
            n = i - start + 1
            if n > FUNC_MAX:
                yield f"{rel}:{start + 1}: a function of {n} lines (at most {FUNC_MAX}): {lines[start - 1].strip()[:60]}"
            start = None


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    root = sys.argv[1]
    files = list(sources(root))
    bad = [b for f in files for b in breaches(f, root)]
    for b in bad:
        print("not ok -", b)
    if not files:
        print("not ok - no C file found under", root)
    elif not bad:
        print(f"ok - {len(files)} C files within the size rules")
    return 1 if bad or not files else 0


if __name__ == "__main__":
    sys.exit(main())
