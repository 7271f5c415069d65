#!/usr/bin/python3
"""Make one man page from markdown pages of docs/ with pandoc: the pages a user
reads on the web and in man(1) are the same text.

usage: mkman.py --name NAME --section N --summary TEXT --version V --out FILE
                [--only HEADING] [--drop HEADING]... MARKDOWN...

Each MARKDOWN file's first '# ' line (the page title) is dropped; the man page
starts with NAME (NAME - SUMMARY) and DESCRIPTION, and every '## ' heading
becomes a section (.SH), '### ' a subsection. --only HEADING keeps one '## '
section of the files (e.g. "Traffic files" of topologies/README.md); --drop
HEADING leaves one out. Fenced code and tables pass through pandoc unchanged.
Exit status: 0; 2 for bad arguments or a heading not found; 1 when pandoc fails.
"""
import argparse
import re
import subprocess
import sys


def sections(text):
    """[(heading or None, lines)] split at '## ' headings outside fenced code."""
    out, cur, fence = [], (None, []), False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("## "):
            out.append(cur)
            cur = (line[3:].strip(), [])
        else:
            cur[1].append(line)
    out.append(cur)
    return out


def body(path, only, drop):
    """PATH's markdown without its title, cut to --only / --drop. Exits 2 on a
    heading that is not there."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"\A# .*\n", "", text)
    parts = sections(text)
    names = [h for h, _ in parts if h]
    for h in ([only] if only else []) + drop:
        if h not in names:
            print(f"mkman: {path}: no section '## {h}' (it has: {', '.join(names)})",
                  file=sys.stderr)
            sys.exit(2)
    if only:
        # the section's own text is the description; its '### ' become sections
        lines = next(ls for h, ls in parts if h == only)
        return "\n".join(re.sub(r"^###", "##", l) for l in lines)
    keep = []
    for h, ls in parts:
        if h in drop:
            continue
        if h:
            keep.append("## " + h)
        keep += ls
    return "\n".join(keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--section", required=True, choices=["1", "5", "7"])
    ap.add_argument("--summary", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only")
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("markdown", nargs="+")
    a = ap.parse_args()
    md = f"## NAME\n\n{a.name} - {a.summary}\n\n## DESCRIPTION\n\n"
    md += "\n\n".join(body(p, a.only, a.drop) for p in a.markdown)
    cmd = ["pandoc", "--from", "markdown-smart", "--to", "man", "--standalone",
           "--shift-heading-level-by=-1",
           "-M", f"title={a.name.upper()}", "-M", f"section={a.section}",
           "-M", f"header=rocelab {a.version}", "-M", f"footer=rocelab {a.version}",
           "-o", a.out]
    try:
        p = subprocess.run(cmd, input=md, text=True)
    except FileNotFoundError:
        print("mkman: pandoc not found (apt install pandoc)", file=sys.stderr)
        return 1
    return 1 if p.returncode else 0


if __name__ == "__main__":
    sys.exit(main())
