#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run the commands the documentation shows, and check the outputs it prints.

A Markdown page marks its blocks with HTML comments, which readers do not see:

  <!-- save: /tmp/mylab.yaml -->   the next fenced block is a file the reader saves
  <!-- run -->                     the next fenced block is commands the reader runs;
                                   they must succeed (exit 0)
  <!-- sample: COMMAND -->         the next fenced block is COMMAND's output, exactly

Each page runs on its own, top to bottom, as a reader would: from a copy of the
repository's root (links to its folders, and build/ to the build folder), in one
scratch folder that stands for /tmp/ and is removed at the end. The virtual clock
makes the outputs the same on every machine.

Any fenced block, marked or not, that holds a table header the programs print
(the link table's) must hold it as rocelab-dp prints it now.

usage: doc-samples.py [--check | --update] [--build DIR] [PAGE.md ...]
  --check    (default) exit 1 and show a diff where a page differs from its run
  --update   write the outputs into the pages instead
  --build    the meson build folder (default build/)
Exit 0: every page is as its commands make it; 1: a command failed or an output
differs; 2: bad use or a page's markers are wrong (FILE:LINE).
"""
import argparse
import difflib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "rocelab-viz-lib"))
import rlcli  # noqa: E402
MARK = re.compile(r"^<!-- (save|run|sample)(?:: (.*?))? -->$")
FENCE = re.compile(r"^```")
TIMEOUT_S = 600


class PageError(Exception):
    """A page's markers are wrong: FILE:LINE and what."""


def blocks(path, lines):
    """[(kind, arg, first, last)]: each marker's block, lines first..last (0-based,
    the content between the fences)."""
    out = []
    for i, line in enumerate(lines):
        m = MARK.match(line.rstrip("\n"))
        if not m:
            continue
        kind, arg = m.group(1), m.group(2)
        if (kind == "run") != (arg is None):
            raise PageError(f"{path}:{i + 1}: '{kind}' {'takes no argument' if kind == 'run' else 'needs an argument'}")
        if i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
            raise PageError(f"{path}:{i + 1}: a '{kind}' marker must stand right above a ``` block")
        end = next((j for j in range(i + 2, len(lines)) if FENCE.match(lines[j])), None)
        if end is None:
            raise PageError(f"{path}:{i + 2}: the ``` block never closes")
        out.append((kind, arg, i + 2, end - 1))
    return out


def link_root(build, where):
    """A folder that looks like the repository's root: links to its entries, build/
    to the build folder, and no results/ (the runs write theirs here). scripts/ is a
    copy: the Python commands find their root from their own real path, and write
    their results under it."""
    os.makedirs(where)
    for name in os.listdir(ROOT):
        if name in (".git", "results", "scripts") or name.startswith("build"):
            continue
        os.symlink(os.path.join(ROOT, name), os.path.join(where, name))
    shutil.copytree(os.path.join(ROOT, "scripts"), os.path.join(where, "scripts"), symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    os.symlink(os.path.abspath(build), os.path.join(where, "build"))


def shell(cmd, cwd, scratch):
    """Run cmd as bash from cwd with /tmp/ standing for scratch; (rc, stdout, stderr)."""
    cmd = cmd.replace("/tmp/", scratch + "/")
    try:
        p = subprocess.run(["bash", "-eo", "pipefail", "-c", cmd], cwd=cwd, text=True,
                           capture_output=True, timeout=TIMEOUT_S,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {TIMEOUT_S} s"
    return p.returncode, p.stdout.replace(scratch + "/", "/tmp/"), p.stderr


def link_header(build, cwd, scratch):
    """The link table's header line as rocelab-dp prints it now."""
    rc, out, err = shell("build/dataplane/rocelab-dp --topology topologies/default.yaml "
                         "--clock virtual --gen 'h0>h4:count=1' 2>/dev/null", cwd, scratch)
    head = next((ln for ln in out.splitlines() if ln.startswith("link (from>to)")), None)
    if rc or head is None:
        raise RuntimeError(f"rocelab-dp gave no link table (exit {rc}): {err.strip()[-300:]}")
    return head


def stale_headers(path, lines, header):
    """Problems: lines in any fenced block that begin a link table unlike today's."""
    probs, inb = [], False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            inb = not inb
        elif inb and line.startswith("link (from>to)") and line.rstrip() != header.rstrip():
            probs.append(f"{path}:{i + 1}: the link table's header is not what rocelab-dp prints:\n"
                         f"  page: {line.rstrip()}\n  now:  {header.rstrip()}")
    return probs


def run_page(path, lines, cwd, scratch):
    """Run a page's blocks in order; (problems, new lines with the outputs)."""
    probs, new = [], list(lines)
    for kind, arg, first, last in blocks(path, lines):
        body = "".join(lines[first:last + 1])
        where = f"{path}:{first}"
        if kind == "save":
            with open(arg.replace("/tmp/", scratch + "/"), "w") as f:
                f.write(body)
            continue
        rc, out, err = shell(body if kind == "run" else arg, cwd, scratch)
        if rc:
            probs.append(f"{where}: the commands exit {rc}:\n{err.strip()[-800:]}")
            continue
        if kind == "sample":
            want = [ln.rstrip() + "\n" for ln in out.rstrip("\n").split("\n")]
            have = [ln.rstrip() + "\n" for ln in lines[first:last + 1]]
            if want != have:
                diff = "".join(difflib.unified_diff(have, want, "page", "run", n=1))
                probs.append(f"{where}: the sample differs from what '{arg}' prints now:\n{diff}")
                off = len(new) - len(lines)
                new[first + off:last + 1 + off] = want
    return probs, new


def pages(args):
    if args.pages:
        return args.pages
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))


def main(argv=None):
    ap = rlcli.ArgParser(prog="doc-samples.py", description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[2:]))
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="show where pages differ (default)")
    mode.add_argument("--update", action="store_true", help="write the outputs into the pages")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build folder")
    ap.add_argument("pages", nargs="*", help="pages (default README.md and docs/**/*.md)")
    args = ap.parse_args(argv)
    if not os.access(os.path.join(args.build, "dataplane", "rocelab-dp"), os.X_OK):
        print(f"doc-samples: {args.build}/dataplane/rocelab-dp: not built", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="rocelab-doc-samples.")
    try:
        return check_all(args, tmp)
    except PageError as e:
        print(f"doc-samples: {e}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_all(args, tmp):
    cwd = os.path.join(tmp, "root")
    link_root(args.build, cwd)
    header, fails, n = None, 0, 0
    for path in pages(args):
        with open(path) as f:
            lines = f.readlines()
        rel = os.path.relpath(path, ROOT)
        marked = blocks(rel, lines)
        scratch = os.path.join(tmp, f"page{n}")
        os.makedirs(scratch)
        n += 1
        if header is None:
            header = link_header(args.build, cwd, scratch)
        probs = stale_headers(rel, lines, header)
        if marked:
            run_probs, new = run_page(rel, lines, cwd, scratch)
            probs += run_probs
            if args.update and new != lines:
                with open(path, "w") as f:
                    f.writelines(new)
                print(f"updated {rel}")
            bad = [p for p in run_probs if not (args.update and "differs from what" in p)]
            print(f"{'FAIL' if bad else 'ok  '} {rel}: {len(marked)} marked blocks")
        if args.update:  # the differences are written; what is left is a failure
            probs = [p for p in probs if "differs from what" not in p]
        for p in probs:
            print(p)
        fails += bool(probs)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
