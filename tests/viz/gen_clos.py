#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write a 2-tier Clos topology YAML: S spines, L leaves, H net_null hosts per
leaf (host h(L*H+i) under leaf L), every leaf linked to every spine.
usage: gen_clos.py S L H FILE"""
import sys


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if len(argv) != 4 or not all(a.isdigit() and int(a) > 0 for a in argv[:3]):
        print(__doc__, file=sys.stderr)
        return 2
    s, l, h = (int(a) for a in argv[:3])
    out = [f"name: clos-{s}x{l}x{h}", "defaults:", "  host: {attach: net_null}", "switches:"]
    out += [f"  - {{name: leaf{i}, role: rtsw}}" for i in range(l)]
    out += [f"  - {{name: spine{i}, role: ctsw}}" for i in range(s)]
    out.append("hosts:")
    out += [f"  - {{name: h{i * h + j}, leaf: leaf{i}}}" for i in range(l) for j in range(h)]
    out.append("links:")
    out += [f"  - [leaf{i}, spine{k}]" for i in range(l) for k in range(s)]
    with open(argv[3], "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
