#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The flow engine against the packet engine (issue 42, item 2): cases of the
experiment files E1, E2 and E6 (default: at 128 ranks) and of the production
mixes run by rocelab-dp --fabric packet and --fabric flow, and one markdown
table: case, what is compared (busbw at a size, or a mix's mean iteration
time), both engines' values, error, wall-time ratio, and the packet run's
counters that name a mechanism the flow engine leaves out (PFC frames, drops,
mean peak queue up and down, message latency p99).

A case is FILE:VARIANT:PLACEMENT, a variant label and a placement of an
experiment file (experiments/README.md): its fabric, switch settings, events,
--te and collective, seed 1 (switch seed and --seed), with what the flow
engine does not model taken out of both runs: the proxy costs
(proxy_post_wqe, proxy_poll_cqe) and the file's nic: line (NIC arbitration
and message rate). --sizes replaces the file's sizes (default 16M: the packet
runs stay short).

A file with jobs: (a production mix, scripts/exp_jobs.py) has no placement:
its case is FILE:VARIANT: (or FILE:VARIANT). Each engine runs the mix once
(rocelab-dp --jobs, which also runs each job alone, on the same engine), and
the table compares the jobs' mean iteration time in the mix (the --json
document's mix object); --sizes does not apply.

--refill TIME runs the flow engine with a refill period (rocelab-dp --fabric
flow,refill=TIME); --reference flow compares it with the exact flow engine
instead of the packet engine, which measures the refill's own error.

Example: scripts/flow-vs-packet.py --out /tmp/fvp.md
         scripts/flow-vs-packet.py --case 'e2-128-1to1.yaml:pinning, 1 QP:fragmented'
         scripts/flow-vs-packet.py --case 'mix-e1-1024.yaml:ECMP, 1 QP:'
         scripts/flow-vs-packet.py --reference flow --refill 1us --case 'e6-128.yaml:TE, 1 QP:full-random'
"""
import argparse
import copy
import os
import re
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "tools", "rocelab-viz-lib")]
import experiment  # noqa: E402
import exp_jobs  # noqa: E402
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
    experiments/ unless it names a file. PLACEMENT may be empty or left out
    (FILE:VARIANT: or FILE:VARIANT, a jobs: file's case); case_runs checks it against
    the file. Raises ExpError (2) on another form."""
    parts = text.split(":")
    if len(parts) == 2:
        parts.append("")
    if len(parts) != 3 or not parts[0] or not parts[1]:
        raise ExpError(f"--case {text!r}: expected FILE:VARIANT:PLACEMENT "
                       "(FILE:VARIANT: for a file with jobs:)", 2)
    path = parts[0] if os.path.exists(parts[0]) else os.path.join(ROOT, "experiments", parts[0])
    return path, parts[1], parts[2]


def without_host_costs(exp, v):
    """The file and variant v without what the flow engine does not model: the proxy
    costs (nccl: proxy_post_wqe, proxy_poll_cqe) and the nic: line."""
    exp = dict(exp, nic=None, nccl={k: x for k, x in (exp.get("nccl") or {}).items() if k not in HOST_COSTS})
    v = copy.deepcopy(v)
    v["nccl"] = {k: x for k, x in (v.get("nccl") or {}).items() if k not in HOST_COSTS}
    return exp, v


def case_variant(case):
    """The case's file, variant (host costs out), placement and path; ExpError (2) when
    the file has no such variant, or the placement does not fit the file (a collective
    needs one of its placements; a jobs: file takes none)."""
    path, label, place = parse_case(case)
    exp = experiment.load(path)
    v = next((v for v in exp["variants"] if v["label"] == label), None)
    if v is None:
        raise ExpError(f"{path}: no variant {label!r} (has: "
                       f"{', '.join(repr(x['label']) for x in exp['variants'])})", 2)
    if "jobs" in exp and place:
        raise ExpError(f"--case {case!r}: {path} runs jobs: (a mix): it has no placements; "
                       f"write the case FILE:VARIANT:", 2)
    if "collective" not in exp and "jobs" not in exp:
        raise ExpError(f"--case {case!r}: {path} has neither collective: nor jobs:", 2)
    if "collective" in exp and place not in exp["placements"]:
        raise ExpError(f"{path}: no placement {place!r} (has: {', '.join(exp['placements'])})", 2)
    exp, v = without_host_costs(exp, v)
    return path, exp, v, place


def case_runs(case, sizes, topo_tool, tmp):
    """What both engines run for a case: (topology file, what runs, extra arguments, seed),
    what runs being ["--coll", SPEC] or, for a jobs: file, ["--jobs", FILE] and its
    --job-coll. The file's proxy costs and nic: line are left out (the flow engine has
    neither)."""
    path, exp, v, place = case_variant(case)
    base, _ = experiment.base_topology(exp, path, tmp, topo_tool)
    seed = exp["seeds"][0]
    tag = experiment.slug(f"{os.path.basename(path)}-{v['label']}-{place}")
    topo = experiment.topology_for(base, v.get("switch"), v.get("topology"), seed, tmp, tag)
    if "jobs" in exp:
        jc = exp_jobs.job_coll(experiment, exp, v)
        what = exp_jobs.what_args(exp, v, os.path.dirname(os.path.abspath(path)), tmp, tag)
        return topo, what + (["--job-coll", jc] if jc else []), experiment.dp_args_for(exp, v), seed
    hosts = experiment.resolve_placements(exp, base)[place]
    coll = re.sub(r"(^|,)sizes=[^,]*", rf"\1sizes={sizes}", exp["collective"]) if sizes else exp["collective"]
    return topo, ["--coll", experiment.coll_for(exp, coll, v, hosts)], experiment.dp_args_for(exp, v), seed


def run_mix(dp, topo, what, seed, extra, timeout):
    """One rocelab-dp --jobs run: read_dp_json's result. ExpError when it fails, or when
    the packet pool ran dry (an emulator limit: not the model's numbers)."""
    with tempfile.TemporaryDirectory(prefix="rocelab-fvp-") as tmp:
        doc_path = os.path.join(tmp, "run.json")
        cmd = [dp, "--topology", topo, "--clock", "virtual", "--quiet", "--seed", str(seed),
               "--name", "rl-fvp-%d" % os.getpid(), "--json", doc_path] + what + list(extra)
        p = experiment.run_dp(cmd, timeout)
        if p.returncode != 0 or not os.path.exists(doc_path):
            raise ExpError(f"rocelab-dp failed ({p.returncode}): {' '.join(cmd)}\n"
                           f"{p.stderr.strip()[-2000:]}", 2 if p.returncode == 2 else 1)
        if exp_jobs.pool_dry(p.stderr):
            raise ExpError(f"--fabric {extra[-1]}: the packet pool ran dry {exp_jobs.pool_dry(p.stderr)} "
                           "times (give the file's dp_args more --mbufs)", 1)
        return experiment.read_dp_json(doc_path)


def mix_result(got):
    """A mix's one row and its counters. The row: the jobs' mean iteration 1 time in the
    mix (us), each job's, and the largest message p99 over the mix's collectives. The
    counters (a --jobs document has no totals): PFC frames and drops summed over the
    link table (exp_jobs.counters), the queue peaks."""
    doc = got["doc"]
    jobs = {j["name"]: j["mix_us"] for j in doc["mix"]["jobs"]}
    if not all(jobs.values()):
        raise ExpError("jobs that did not end iteration 1 in the mix: "
                       + ", ".join(n for n, t in jobs.items() if not t), 1)
    p99 = [z["latency"]["lat_p99_us"] for c in doc.get("collectives") or [] for z in c["sizes"]
           if z.get("latency", {}).get("msgs")]
    c = exp_jobs.counters(doc)
    totals = dict(got["totals"], pfc_frames=c["pfc_frames"], drops=c["drops_frames"])
    return [{"mix_us": statistics.mean(jobs.values()), "jobs": jobs,
             "lat_p99_us": max(p99) if p99 else "-"}], totals


def run(dp, topo, what, seed, extra, fabric, timeout):
    """One rocelab-dp run: its rows (one per size; a mix's one), totals and wall time (s)."""
    t0 = time.monotonic()
    extra = list(extra) + ["--fabric", fabric]
    if what[0] == "--jobs":
        rows, totals = mix_result(run_mix(dp, topo, what, seed, extra, timeout))
        return rows, totals, time.monotonic() - t0
    rows, totals, stalled, _ = experiment.run_one(dp, topo, what[1], "rl-fvp-%d" % os.getpid(), seed,
                                                  extra, timeout=timeout)
    if stalled:
        raise ExpError(f"--fabric {fabric} stalled: {stalled}", 1)
    return rows, totals, time.monotonic() - t0


def row(case, pr, fr, pt, pw, fw):
    """One table line for one size (or a mix): both engines' busbw (a mix: mean iteration
    time), the error, the wall ratio, the packet run's mechanism counters."""
    key, what, fmt = (("mix_us", "mix: mean iteration (us)", "%.1f") if "mix_us" in pr else
                      ("busbw", "busbw at %d MiB (GB/s)" % (pr["size"] >> 20), "%.2f"))
    err = 100.0 * (fr[key] - pr[key]) / pr[key]
    label = case.replace(".yaml", "")
    return ("| %s | %s | %s | %s | %+.1f%% | %.0fx (%.0f s / %.1f s) | %s / %s | %s / %s | %s |" % (
        label, what, fmt % pr[key], fmt % fr[key], err, pw / fw, pw, fw,
        pt.get("pfc_frames", "-"), pt.get("drops", "-"), pt.get("qpeak_up", "-"),
        pt.get("qpeak_down", "-"), pr.get("lat_p99_us", "-")))


def job_lines(pr, fr, ref="packet", flow="flow"):
    """A mix's per-job comparison, for stderr: each job's iteration in the mix on both."""
    return ["#   %s: %s %.1f us, %s %.1f us, %+.1f%%" % (n, ref, t, flow, fr["jobs"][n],
                                                      100.0 * (fr["jobs"][n] - t) / t)
            for n, t in pr.get("jobs", {}).items()]


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
                    help="run this case (repeatable; default: the E1, E2 and E6 list at 128 ranks); "
                         "FILE:VARIANT: for a file with jobs:")
    ap.add_argument("--sizes", default="16M", help="the collective's sizes (default 16M; '' keeps the file's)")
    ap.add_argument("--out", help="write the table here too (default: stdout only)")
    ap.add_argument("--run-timeout", type=int, default=1800, help="seconds per run")
    ap.add_argument("--refill", metavar="TIME",
                    help="the flow run refills its rates at most once per TIME "
                         "(rocelab-dp --fabric flow,refill=TIME; default: exact)")
    ap.add_argument("--reference", choices=("packet", "flow"), default="packet",
                    help="the engine the flow run is compared with (default packet; flow: the "
                         "exact flow engine, to measure --refill's own error)")
    a = ap.parse_args(argv)
    dp = os.path.join(a.build, "dataplane", "rocelab-dp")
    topo_tool = os.path.join(a.build, "topology", "rocelab-topo")
    for prog in (dp, topo_tool):
        if not os.access(prog, os.X_OK):
            print("flow-vs-packet.py: %s is not built" % prog, file=sys.stderr)
            return 2
    ref = a.reference
    if ref == "flow" and not a.refill:
        print("flow-vs-packet.py: --reference flow compares with --refill TIME's flow engine: give one",
              file=sys.stderr)
        return 2
    flow = "flow,refill=%s" % a.refill if a.refill else "flow"
    rows = [("| case | what | {r} | {f} | error | wall {r} / {f} "
             "| {r}: PFC frames / drops | {r}: mean peak queue up / down (B) | {r}: msg p99 (us) |").format(
                 r=ref, f=flow),
            "|---|---|---|---|---|---|---|---|---|"]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for case in a.case or CASES:
                topo, what, extra, seed = case_runs(case, a.sizes, topo_tool, tmp)
                pk, pt, pw = run(dp, topo, what, seed, extra, ref, a.run_timeout)
                fl, _, fw = run(dp, topo, what, seed, extra, flow, a.run_timeout)
                for pr, fr in zip(pk, fl):
                    rows.append(row(case, pr, fr, pt, pw, fw))
                    print(rows[-1], flush=True)
                    for line in job_lines(pr, fr, ref, flow):
                        print(line, file=sys.stderr, flush=True)
    except ExpError as e:
        print("flow-vs-packet.py: %s" % e, file=sys.stderr)
        return e.code
    write_table(rows, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
