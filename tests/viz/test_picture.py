#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocelab-viz on real runs (virtual clock, in-process traffic, no networking):
the default 2-tier topology, a 3-tier one with ATSW switches, a PFC incast with
and without PFC, and a fabric large enough to be aggregated. The files exist
and are valid PNG/SVG/HTML; the SVG's link elements carry the utilisation the
CSV says (parsed back and compared with a computation of the test's own);
pauses and drops are marked; a malformed or truncated CSV fails with FILE:LINE
and exit 2.

usage: test_picture.py ROCELAB_DP ROCELAB_TOPO ROCELAB_VIZ TOPOLOGIES_DIR DATA_DIR
"""

import csv
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

DP, TOPO, VIZ, TOPOS, DATA = sys.argv[1:6]
HERE = os.path.dirname(os.path.abspath(__file__))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SVG_NS = "{http://www.w3.org/2000/svg}"
RUN_TIMEOUT = 120
DPDK_RUN_DIR = "/var/run/dpdk"
results = {"pass": 0, "fail": 0}


def check(name, ok):
    results["pass" if ok else "fail"] += 1
    print(("ok - " if ok else "not ok - ") + name, flush=True)
    return ok


def run_dp(tmp, tag, topo, gens, interval="50us"):
    """A virtual-clock run with --csv (its stdout in TAG.txt); returns the CSV path."""
    out = os.path.join(tmp, f"{tag}.csv")
    prefix = f"rlviz-{os.getpid()}-{tag}"
    cmd = [DP, "--topology", topo, "--clock", "virtual", "--name", prefix,
           "--csv", out, "--csv-interval", interval]
    for g in gens:
        cmd += ["--gen", g]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    shutil.rmtree(os.path.join(DPDK_RUN_DIR, prefix), ignore_errors=True)  # DPDK leaves it
    with open(os.path.join(tmp, f"{tag}.txt"), "w") as f:
        f.write(p.stdout)
    if p.returncode != 0:
        print(f"# {' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-1500:]}")
    return out


def viz(*args):
    return subprocess.run([VIZ, *args], capture_output=True, text=True, timeout=RUN_TIMEOUT)


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def expected_mean_util(path):
    """{from>to: time-weighted mean util}, computed here from the rows: each
    sample's util covers the time since the previous sample (from 0 for the
    first, virtual clock)."""
    rows = csv_rows(path)
    times = sorted({int(r["time_ns"]) for r in rows})
    span = {t: t - p for p, t in zip([0] + times, times)}
    acc = {}
    for r in rows:
        k = f"{r['from']}>{r['to']}"
        acc[k] = acc.get(k, 0.0) + float(r["util"]) * span[int(r["time_ns"])]
    return {k: v / times[-1] for k, v in acc.items()}


def svg_links(path):
    """{data-link: attributes} of every link element of an SVG (and the tree)."""
    tree = ET.parse(path)
    return {g.get("data-link"): g.attrib for g in tree.iter(SVG_NS + "g")
            if g.get("class") == "rlviz-link"}, tree


def png_ok(path):
    """A PNG signature and a non-empty IHDR."""
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != PNG_MAGIC or head[12:16] != b"IHDR":
        return False
    w, h = struct.unpack(">II", head[16:24])
    return w > 100 and h > 100


def svg_texts(tree):
    return {t.text for t in tree.iter(SVG_NS + "text") if t.text}


def picture_case(tmp, tag, topo_path, gens, busy_link):
    """Draw a run; the files are valid and every direction's data-util is the
    CSV's mean; the switches are all named; busy_link carries traffic."""
    csvp = run_dp(tmp, tag, topo_path, gens)
    prefix = os.path.join(tmp, tag)
    p = viz(csvp, "--topology", topo_path, "--out", prefix)
    check(f"{tag}: rocelab-viz exit 0 ({p.stderr.strip()[:200]})", p.returncode == 0)
    check(f"{tag}: PNG valid", os.path.exists(prefix + ".png") and png_ok(prefix + ".png"))
    try:
        links, tree = svg_links(prefix + ".svg")
    except (OSError, ET.ParseError) as e:
        check(f"{tag}: SVG parses ({e})", False)
        return csvp
    exp = expected_mean_util(csvp)
    check(f"{tag}: SVG has one element per link direction ({len(links)} of {len(exp)})",
          set(links) == set(exp))
    bad = [k for k in exp if k in links and abs(float(links[k]["data-util"]) - exp[k]) > 6e-5]
    check(f"{tag}: every data-util is the CSV's mean utilisation ({len(bad)} differ: {bad[:3]})",
          not bad and len(links) > 0)
    u = float(links.get(busy_link, {}).get("data-util", 0))
    check(f"{tag}: {busy_link} carried the traffic (util {u:.3f})", u > 0.05)
    d = json.loads(subprocess.run([TOPO, "--json", topo_path], capture_output=True, text=True,
                                  timeout=RUN_TIMEOUT).stdout)
    nodes = [s["name"] for s in d["switches"]] + [h["name"] for h in d["hosts"]]
    missing = [n for n in nodes if n not in svg_texts(tree)]
    check(f"{tag}: every switch and host is named in the SVG (missing: {missing})",
          not missing and any(s["role"] == "rtsw" for s in d["switches"]))
    with open(prefix + ".html") as f:
        html = f.read()
    check(f"{tag}: HTML time slider written, self-contained",
          'type="range"' in html and "http://" not in html.replace("http://www.w3.org", "")
          and "https://" not in html and "<script src" not in html)
    return csvp


def at_case(tmp, csvp, topo_path):
    """--at TIME: the data-util of each direction is that sample's CSV value."""
    rows = csv_rows(csvp)
    times = sorted({int(r["time_ns"]) for r in rows})
    t = times[len(times) // 2]
    out = os.path.join(tmp, "at.svg")
    p = viz(csvp, "--topology", topo_path, "--svg", out, "--at", f"{t}ns")
    links, _ = svg_links(out) if p.returncode == 0 else ({}, None)
    want = {f"{r['from']}>{r['to']}": float(r["util"]) for r in rows if int(r["time_ns"]) == t}
    check(f"--at {t}ns: data-util equals the CSV's sample at that time",
          want and all(abs(float(links[k]["data-util"]) - v) < 1e-9 for k, v in want.items()
                       if k in links) and set(links) == set(want))


def pfc_cases(tmp):
    gens = ["h0>h2:dscp=26,rate=10G,count=30000", "h1>h2:dscp=26,rate=10G,count=30000"]
    on = run_dp(tmp, "pfc-on", os.path.join(DATA, "incast-pfc-on.yaml"), gens)
    off = run_dp(tmp, "pfc-off", os.path.join(DATA, "incast-pfc-off.yaml"), gens)
    out = os.path.join(tmp, "pfc")
    p = viz(on, off, "--label", "PFC on", "--label", "PFC off", "--out", out,
            "--report", on[:-4] + ".txt", "--report", off[:-4] + ".txt")
    check(f"PFC on/off side by side: exit 0 ({p.stderr.strip()[:200]})", p.returncode == 0)
    tree = ET.parse(out + ".svg")
    by_run = {}
    for g in tree.iter(SVG_NS + "g"):
        if g.get("class") == "rlviz-link":
            by_run.setdefault(g.get("data-run").split(":")[0], {})[g.get("data-link")] = g.attrib
    on_l, off_l = by_run.get("PFC on", {}), by_run.get("PFC off", {})
    paused = [k for k, a in on_l.items() if float(a["data-paused"]) > 0]
    check(f"PFC on: the senders' directions are marked paused ({paused})",
          "h0>leaf0" in paused and "h1>leaf0" in paused)
    check("PFC on: no drops marked", on_l and all(a["data-drops"] == "0" for a in on_l.values()))
    check("PFC off: no direction marked paused",
          off_l and all(float(a["data-paused"]) == 0 for a in off_l.values()))
    with open(off[:-4] + ".txt") as f:
        row = next((ln.split() for ln in f if ln.startswith("leaf0 ")), ["?"] * 8)
    node = next((g.attrib for g in tree.iter(SVG_NS + "g") if g.get("class") == "rlviz-node"
                 and g.get("data-node") == "leaf0" and g.get("data-run").startswith("PFC off")), {})
    check(f"PFC off: leaf0 marked with the drops of its switch table ({row[7]})",
          row[7].isdigit() and int(row[7]) > 0 and node.get("data-drops") == row[7])


def write_clos(path, spines, leaves, hosts):
    subprocess.run([sys.executable, os.path.join(HERE, "gen_clos.py"), str(spines), str(leaves),
                    str(hosts), path], check=True, timeout=RUN_TIMEOUT)


def aggregate_case(tmp):
    """128 hosts: drawn as racks; a rack line's util is the mean of its hosts'."""
    topo = os.path.join(tmp, "clos-4x8x16.yaml")
    write_clos(topo, 4, 8, 16)
    csvp = run_dp(tmp, "big", topo, ["h0>h17:rate=40G,count=3000"])
    p = viz(csvp, "--topology", topo, "--svg", os.path.join(tmp, "big.svg"))
    check(f"128 hosts: exit 0 ({p.stderr.strip()[:200]})", p.returncode == 0)
    links, _ = svg_links(os.path.join(tmp, "big.svg")) if p.returncode == 0 else ({}, None)
    exp = expected_mean_util(csvp)
    rack = links.get("rack leaf0>leaf0", {})
    members = [k for k in exp if k.endswith(">leaf0") and k.startswith("h")]
    mean = sum(exp[k] for k in members) / max(1, len(members))
    check(f"128 hosts: one line per rack direction, {rack.get('data-members')} members, "
          f"util {rack.get('data-util')} = mean {mean:.4f}",
          rack.get("data-members") == "16" and abs(float(rack.get("data-util", -1)) - mean) < 6e-5)


def bad_input_cases(tmp, good):
    with open(good) as f:
        lines = f.readlines()
    cases = {
        "truncated mid-line": ("".join(lines)[:-7], f":{len(lines)}:"),
        "truncated mid-sample": ("".join(lines[:len(lines) // 2 + 3]), f":{len(lines) // 2 + 3}:"),
        "malformed number": ("".join(lines[:4] + [lines[4].replace(",1,", ",x,", 1)] + lines[5:]),
                             ":5:"),
        "wrong header": ("time,link\n" + "".join(lines[1:]), ":1:"),
        "missing field": ("".join(lines[:6] + [lines[6].rsplit(",", 1)[0] + "\n"] + lines[7:]),
                          ":7:"),
        "empty file": ("", ":1:"),
    }
    for name, (text, where) in cases.items():
        path = os.path.join(tmp, "bad.csv")
        with open(path, "w") as f:
            f.write(text)
        p = viz(path, "--svg", os.path.join(tmp, "bad.svg"))
        check(f"{name}: exit 2 and 'bad.csv{where}' in the message ({p.stderr.strip()[-120:]})",
              p.returncode == 2 and f"bad.csv{where}" in p.stderr and "Traceback" not in p.stderr)
    p = viz("--help")
    check("--help: exit 0 with usage", p.returncode == 0 and "usage" in p.stdout)


def main():
    tmp = tempfile.mkdtemp(prefix="rlviz-test-")
    try:
        default = os.path.join(TOPOS, "default.yaml")
        good = picture_case(tmp, "default", default,
                            ["h0>h4:proto=roce,flows=16,sport=0xc0a5,rate=50G,count=8000"],
                            "h0>leaf0")
        at_case(tmp, good, default)
        picture_case(tmp, "3tier", os.path.join(HERE, "3tier-small.yaml"),
                     ["a0>b2:proto=roce,flows=8,rate=50G,count=3000"], "a0>z0-leaf0")
        pfc_cases(tmp)
        aggregate_case(tmp)
        bad_input_cases(tmp, good)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    left = [d for d in os.listdir(DPDK_RUN_DIR) if d.startswith(f"rlviz-{os.getpid()}-")] \
        if os.path.isdir(DPDK_RUN_DIR) else []
    check(f"nothing left in /tmp or {DPDK_RUN_DIR} ({left})", not left and not os.path.exists(tmp))
    print(f"{results['pass']} passed, {results['fail']} failed")
    return 1 if results["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
