#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The flow engine against the packet engine (issue 42, item 2): the E1 cases
at 128 ranks (experiments/e1-nccl-128.yaml's fabric, collective, placements
and variants) run by rocelab-dp --fabric packet and --fabric flow, and one
markdown table: case, packet busbw, flow busbw, error, wall-time ratio.

Both engines run the same conditions, which are E1's less what the flow
engine does not model: no proxy-thread costs and no NIC arbitration or
message-rate limit (E1's nic: line). Sizes 16 MiB and 32 MiB.

Example: scripts/flow-vs-packet.py --out /tmp/fvp.md
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(ROOT, "tools", "rocelab-viz-lib")]
import rlcli  # noqa: E402

# experiments/e1-nccl-128.yaml, less its proxy costs and its nic: line
TOPO = "spines=16,leaves=8,hosts=16,host-rate=400G,leaf-rate=400G,host-mtu=9000,attach=emulated"
COLL = ("op=allreduce,sizes=16M:32M,data=off,sport=rxe,model=nccl,"
        "NCCL_MIN_NCHANNELS=2,NCCL_MAX_NCHANNELS=2")
VARIANTS = [
    ("ECMP, 1 QP", "5tuple", "NCCL_IB_QPS_PER_CONNECTION=1"),
    ("E-ECMP, 16 QPs split", "eecmp", "NCCL_IB_QPS_PER_CONNECTION=16,NCCL_IB_SPLIT_DATA_ON_QPS=1"),
    ("E-ECMP, 16 QPs rr", "eecmp", "NCCL_IB_QPS_PER_CONNECTION=16,NCCL_IB_SPLIT_DATA_ON_QPS=0"),
]


def placements():
    """E1's two rank orders: racks in order, and random.Random(128)'s shuffle of it."""
    hosts = ["h%d" % i for i in range(128)]
    shuffled = list(hosts)
    random.Random(128).shuffle(shuffled)
    return [("rack-aware", hosts), ("random", shuffled)]


def run(dp, topo, coll, fabric, timeout):
    """One rocelab-dp run: its sizes' busbw (GB/s) and its wall time (s)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as js:
        t0 = time.monotonic()
        p = subprocess.run([dp, "--topology", topo, "--clock", "virtual", "--flows", "0",
                            "--quiet", "--fabric", fabric, "--coll", coll, "--json", js.name,
                            "--name", "rl-fvp-%d" % os.getpid()],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            raise RuntimeError("rocelab-dp --fabric %s exited %d: %s" %
                               (fabric, p.returncode, p.stderr.strip()[-300:]))
        sizes = json.load(open(js.name))["collectives"][0]["sizes"]
    return [(s["size_bytes"], s["busbw_GBps"]) for s in sizes], wall


def main(argv):
    ap = rlcli.ArgParser(prog="flow-vs-packet.py", description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build folder")
    ap.add_argument("--out", help="write the table here too (default: stdout only)")
    ap.add_argument("--run-timeout", type=int, default=1800, help="seconds per run")
    a = ap.parse_args(argv)
    dp = os.path.join(a.build, "dataplane", "rocelab-dp")
    topo_tool = os.path.join(a.build, "topology", "rocelab-topo")
    for prog in (dp, topo_tool):
        if not os.access(prog, os.X_OK):
            print("flow-vs-packet.py: %s is not built" % prog, file=sys.stderr)
            return 2
    rows = ["| case | size | packet busbw (GB/s) | flow busbw (GB/s) | error | wall packet / flow |",
            "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for label, profile, keys in VARIANTS:
            topo = os.path.join(tmp, profile + ".yaml")
            subprocess.run([topo_tool, "--generate", TOPO + ",profile=" + profile, "-o", topo],
                           check=True, stdout=subprocess.DEVNULL)
            for place, hosts in placements():
                coll = COLL + "," + keys + ",hosts=" + "+".join(hosts)
                pk, pw = run(dp, topo, coll, "packet", a.run_timeout)
                fl, fw = run(dp, topo, coll, "flow", a.run_timeout)
                for (size, pb), (_, fb) in zip(pk, fl):
                    row = "| %s, %s | %d MiB | %.2f | %.2f | %+.1f%% | %.1fx (%.0f s / %.1f s) |" % (
                        label, place, size >> 20, pb, fb, 100.0 * (fb - pb) / pb, pw / fw, pw, fw)
                    rows.append(row)
                    print(row, flush=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
