#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The flow engine against the packet engine (issue 42, item 2): cases of the
experiment files E1, E2 and E6 at 128 ranks run by rocelab-dp --fabric packet
and --fabric flow, and one markdown table: case, size, packet busbw, flow
busbw, error, wall-time ratio, and the packet run's counters that name a
mechanism the flow engine leaves out (PFC frames, drops, mean peak queue up
and down, message latency p99).

A case is FILE:VARIANT:PLACEMENT, a variant label and a placement of an
experiment file (experiments/README.md): its fabric, switch settings, events,
--te and collective, seed 1 (switch seed and --seed), with what the flow
engine does not model taken out of both runs: the proxy costs
(proxy_post_wqe, proxy_poll_cqe) and the file's nic: line (NIC arbitration
and message rate). --sizes replaces the file's sizes (default 16M: the packet
runs stay short).

Example: scripts/flow-vs-packet.py --out /tmp/fvp.md
         scripts/flow-vs-packet.py --case 'e2-128-1to1.yaml:pinning, 1 QP:fragmented'
"""
import argparse
import copy
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "tools", "rocelab-viz-lib")]
import experiment  # noqa: E402
import rlcli  # noqa: E402
from expcheck import ExpError  # noqa: E402

CASES = [
    "e1-nccl-128.yaml:ECMP, 1 QP:rack-aware",
    "e1-nccl-128.yaml:ECMP, 1 QP:random",
    "e1-nccl-128.yaml:E-ECMP, 16 QPs rr:rack-aware",
    "e1-nccl-128.yaml:E-ECMP, 16 QPs rr:random",
    "e1-nccl-128.yaml:E-ECMP, 16 QPs split:rack-aware",
    "e2-128-1to1.yaml:pinning, 1 QP:full",
    "e2-128-1to1.yaml:pinning, 1 QP:fragmented",
    "e2-128-1to1.yaml:ECMP, 1 QP:fragmented",
    "e2-128-1to1.yaml:E-ECMP, 16 QPs rr:fragmented",
    "e2-128-te.yaml:TE, 1 QP:fragmented",
    "e6-128.yaml:TE, 1 QP:full-random",
    "e6-128.yaml:E-ECMP, 16 QPs rr:full-random",
    "e6-128.yaml:TE, 1 QP, link down:fragmented",
    "e6-128.yaml:E-ECMP, 16 QPs rr, link down:fragmented",
]
HOST_COSTS = ("proxy_post_wqe", "proxy_poll_cqe")


def parse_case(text):
    """FILE:VARIANT:PLACEMENT -> (path, variant label, placement); FILE relative to
    experiments/ unless it names a file. Raises ExpError (2) on another form."""
    parts = text.split(":")
    if len(parts) != 3 or not all(parts):
        raise ExpError(f"--case {text!r}: expected FILE:VARIANT:PLACEMENT", 2)
    path = parts[0] if os.path.exists(parts[0]) else os.path.join(ROOT, "experiments", parts[0])
    return path, parts[1], parts[2]


def case_runs(case, sizes, topo_tool, tmp):
    """What both engines run for a case: (topology file, --coll, extra arguments, seed).
    The file's proxy costs and nic: line are left out (the flow engine has neither)."""
    path, label, place = parse_case(case)
    exp = experiment.load(path)
    v = next((v for v in exp["variants"] if v["label"] == label), None)
    if v is None:
        raise ExpError(f"{path}: no variant {label!r} (has: "
                       f"{', '.join(repr(x['label']) for x in exp['variants'])})", 2)
    if place not in exp["placements"]:
        raise ExpError(f"{path}: no placement {place!r} (has: {', '.join(exp['placements'])})", 2)
    exp = dict(exp, nic=None, nccl={k: x for k, x in (exp.get("nccl") or {}).items() if k not in HOST_COSTS})
    v = copy.deepcopy(v)
    v["nccl"] = {k: x for k, x in (v.get("nccl") or {}).items() if k not in HOST_COSTS}
    base, _ = experiment.base_topology(exp, path, tmp, topo_tool)
    hosts = experiment.resolve_placements(exp, base)[place]
    seed = exp["seeds"][0]
    tag = experiment.slug(f"{os.path.basename(path)}-{label}-{place}")
    topo = experiment.topology_for(base, v.get("switch"), v.get("topology"), seed, tmp, tag)
    coll = re.sub(r"(^|,)sizes=[^,]*", rf"\1sizes={sizes}", exp["collective"]) if sizes else exp["collective"]
    return topo, experiment.coll_for(exp, coll, v, hosts), experiment.dp_args_for(exp, v), seed


def run(dp, topo, coll, seed, extra, fabric, timeout):
    """One rocelab-dp run: its rows, totals and wall time (s)."""
    t0 = time.monotonic()
    rows, totals, stalled, _ = experiment.run_one(dp, topo, coll, "rl-fvp-%d" % os.getpid(), seed,
                                                  list(extra) + ["--fabric", fabric], timeout=timeout)
    if stalled:
        raise ExpError(f"--fabric {fabric} stalled: {stalled}", 1)
    return rows, totals, time.monotonic() - t0


def row(case, pr, fr, pt, pw, fw):
    """One table line for one size: busbw of both, error, wall ratio, the packet run's
    mechanism counters."""
    err = 100.0 * (fr["busbw"] - pr["busbw"]) / pr["busbw"]
    label = case.replace(".yaml", "")
    return ("| %s | %d MiB | %.2f | %.2f | %+.1f%% | %.0fx (%.0f s / %.1f s) | %s / %s | %s / %s | %s |" % (
        label, pr["size"] >> 20, pr["busbw"], fr["busbw"], err, pw / fw, pw, fw,
        pt.get("pfc_frames", "-"), pt.get("drops", "-"), pt.get("qpeak_up", "-"),
        pt.get("qpeak_down", "-"), pr.get("lat_p99_us", "-")))


def write_table(rows, path):
    """The table's rows into path, one a line (nothing when path is None)."""
    if path:
        with open(path, "w") as f:
            f.write("\n".join(rows) + "\n")


def main(argv):
    ap = rlcli.ArgParser(prog="flow-vs-packet.py", description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build folder")
    ap.add_argument("--case", action="append", metavar="FILE:VARIANT:PLACEMENT",
                    help="run this case (repeatable; default: the E1, E2 and E6 list)")
    ap.add_argument("--sizes", default="16M", help="the collective's sizes (default 16M; '' keeps the file's)")
    ap.add_argument("--out", help="write the table here too (default: stdout only)")
    ap.add_argument("--run-timeout", type=int, default=1800, help="seconds per run")
    a = ap.parse_args(argv)
    dp = os.path.join(a.build, "dataplane", "rocelab-dp")
    topo_tool = os.path.join(a.build, "topology", "rocelab-topo")
    for prog in (dp, topo_tool):
        if not os.access(prog, os.X_OK):
            print("flow-vs-packet.py: %s is not built" % prog, file=sys.stderr)
            return 2
    rows = ["| case | size | packet busbw (GB/s) | flow busbw (GB/s) | error | wall packet / flow "
            "| packet: PFC frames / drops | packet: mean peak queue up / down (B) | packet: msg p99 (us) |",
            "|---|---|---|---|---|---|---|---|---|"]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for case in a.case or CASES:
                topo, coll, extra, seed = case_runs(case, a.sizes, topo_tool, tmp)
                pk, pt, pw = run(dp, topo, coll, seed, extra, "packet", a.run_timeout)
                fl, _, fw = run(dp, topo, coll, seed, extra, "flow", a.run_timeout)
                for pr, fr in zip(pk, fl):
                    rows.append(row(case, pr, fr, pt, pw, fw))
                    print(rows[-1], flush=True)
    except ExpError as e:
        print("flow-vs-packet.py: %s" % e, file=sys.stderr)
        return e.code
    write_table(rows, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
