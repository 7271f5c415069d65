#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Meta's scale on the flow engine (issue 42, item 3): ring AllReduce jobs of
1,024 GPUs (a collective's most ranks) on one AI zone of 3,072 GPUs (192 RTSW
x 16 GPUs under 16 CTSWs, 1:1, 400G) or on the data centre of 8 such zones
joined by 16 ATSWs at 1:7 (24,576 GPUs), run by rocelab-dp --fabric flow.
Meta's numbers: docs/explanation/FACTS-NCCL-RNIC.md ("Meta's fabric").

Each job is one --coll of one rocelab-dp run (all jobs of a table row in one
run); the jobs run at once on the run's one flow fabric, so their flows share
its links by max-min fairness. Placements (seeded, Python's random.Random):
  rack-aware  job j on whole racks (64 racks each), ranks rack by rack (E1);
  random      the same hosts, ranks in a random order (E1);
  fragmented  every rack's 16 hosts shuffled and dealt over the jobs, so each
              job has 5-6 hosts (1 in the data centre) on every rack, ranks
              in a random order: a scheduler filling partial racks (E2).

Tables (markdown on stdout, and --out):
  scale    per fabric and placement: jobs, the mean and slowest job's
           iteration time and busbw, wall time and peak RSS of the run
           (/usr/bin/time -v);
  routing  the paper's routing evolution on the zone, fragmented placement:
           path pinning (1:1) -> 2x uplinks (800G) -> TE at 1:1.125 ->
           E-ECMP + 16 QPs (round-robin) at 1:1.125, per-job iteration time,
           with the full (rack-aware) placement under pinning as reference;
  mix      a production mix of training jobs (--mix, default
           experiments/mix-24k.jobs.yaml: 192 jobs of 64-256 GPUs, dense and
           MoE) for one iteration, on the fabrics as 8-GPU servers (2 per
           RTSW, NVLink inside), rocelab-dp --jobs --jobs-mix-only, placed by
           each --policy: the jobs, their GPUs, the mean and slowest job's
           iteration, wall time and peak RSS. --mix-jobs N takes the file's
           first N jobs (the zone holds 24 of the 24K mix's).

Example: scripts/flow-scale.py --table scale --fabric zone --out /tmp/zone.md
"""
import argparse
import importlib.util
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "tools", "rocelab-viz-lib")]
import experiment  # noqa: E402
import rlcli  # noqa: E402

_spec = importlib.util.spec_from_file_location("fvp", os.path.join(HERE, "flow-vs-packet.py"))
FVP = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FVP)

ZONE = "zones=1,leaves=192,spines=16,atsw=1,hosts=16,host-rate=400G,host-mtu=9000,attach=emulated"
DC = "zones=8,leaves=192,spines=16,atsw=16,hosts=16,host-rate=400G,spine-oversub=1:7,host-mtu=9000,attach=emulated"
FABRICS = {"zone": ZONE + ",leaf-rate=400G", "dc": DC + ",leaf-rate=400G"}
# the same fabrics as servers of 8 GPUs, 2 per RTSW (Meta's layout: docs/explanation/FACTS-NCCL-RNIC.md)
SERVERS = {"zone": "zones=1,servers=384,gpus=8,layout=meta,spines=16,atsw=1,host-rate=400G,leaf-rate=400G,"
                   "host-mtu=9000",
           "dc": "zones=8,servers=384,gpus=8,layout=meta,spines=16,atsw=16,host-rate=400G,leaf-rate=400G,"
                 "spine-oversub=1:7,host-mtu=9000"}
MIX = os.path.join(ROOT, "experiments", "mix-24k.jobs.yaml")
JOB_COLL = "model=nccl,NCCL_MIN_NCHANNELS=2,NCCL_MAX_NCHANNELS=2,NCCL_IB_QPS_PER_CONNECTION=1"
JOB = 1024  # NE_COLL_MAX_RANKS
COLL = "model=nccl,op=allreduce,data=off,sport=rxe,NCCL_MIN_NCHANNELS=2,NCCL_MAX_NCHANNELS=2"
ONE_QP = "NCCL_IB_QPS_PER_CONNECTION=1"
RR16 = "NCCL_IB_QPS_PER_CONNECTION=16,NCCL_IB_SPLIT_DATA_ON_QPS=0"
# the routing evolution: (stage, fabric SPEC, topology key=value additions, dp args, QP keys)
STAGES = [
    ("path pinning, 1:1", ZONE + ",leaf-rate=400G,lb=pinning", [], ONE_QP),
    ("2x uplinks (800G), pinning", ZONE + ",leaf-rate=800G,lb=pinning", [], ONE_QP),
    ("TE at 1:1.125", ZONE + ",leaf-oversub=1.125,profile=5tuple", ["--te"], ONE_QP),
    ("E-ECMP + 16 QPs rr at 1:1.125", ZONE + ",leaf-oversub=1.125,profile=eecmp", [], RR16),
]
PAPER = {
    "path pinning, 1:1": "more than 30% loss under fragmented placement",
    "2x uplinks (800G), pinning": "short-term fix: RTSW uplinks at 2x the downlinks",
    "TE at 1:1.125": "TE: +5-10% busbw; about 80% link utilisation (E-ECMP 40-90%), 128 nodes",
    "E-ECMP + 16 QPs rr at 1:1.125": "up to +40% AllReduce busbw over ECMP with 1 QP; kept at data-centre scale",
}


def placement(racks, njobs, kind, seed):
    """njobs host lists of JOB hosts each from racks ([(zone, leaf, hosts)])."""
    rng = random.Random(seed)
    if kind in ("rack-aware", "random"):
        per = JOB // len(racks[0][2])
        jobs = [[h for _, _, hs in racks[j * per:(j + 1) * per] for h in hs] for j in range(njobs)]
        if kind == "random":
            for j in jobs:
                rng.shuffle(j)
        return jobs
    jobs = [[] for _ in range(njobs)]
    k = 0
    for _, _, hs in racks:
        hs = list(hs)
        rng.shuffle(hs)
        for h in hs:
            jobs[k % njobs].append(h)
            k += 1
    for j in jobs:
        rng.shuffle(j)
    return [j[:JOB] for j in jobs]


class BadJobs(ValueError):
    """--jobs asks for more jobs than a fabric holds (exit 2)."""


def jobs_of(a, racks, fabric):
    """The jobs of JOB GPUs to place on racks: --jobs, or as many as fit; more than fit is BadJobs."""
    fit = len(racks) * len(racks[0][2]) // JOB if racks else 0
    if a.jobs > fit:
        raise BadJobs("--jobs %d: the %s fabric holds %d job(s) of %d GPUs (%d hosts in %d racks)" % (
            a.jobs, fabric, fit, JOB, sum(len(r[2]) for r in racks), len(racks)))
    return a.jobs or fit


def generate(topo_tool, spec, path):
    subprocess.run([topo_tool, "--generate", spec, "-o", path], check=True, stdout=subprocess.DEVNULL)
    return path


def timed_dp(cmd, timeout):
    """Runs cmd (/usr/bin/time -v rocelab-dp ...) in a session of its own: its wall time (s)
    and peak RSS (MiB). On a timeout or an interrupt the whole session gets SIGTERM, so
    rocelab-dp stops and removes its DPDK runtime directory (a SIGTERM to /usr/bin/time
    alone would leave it running); RuntimeError when it failed."""
    t0 = time.monotonic()
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as p:
        try:
            _, err = p.communicate(timeout=timeout)
        except BaseException as e:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
            if isinstance(e, subprocess.TimeoutExpired):
                raise RuntimeError("rocelab-dp ran longer than %d s (--run-timeout): stopped" % timeout)
            raise
    wall = time.monotonic() - t0
    if p.returncode != 0:
        said = err.split("\tCommand being timed:")[0].strip()  # (less /usr/bin/time's report)
        raise RuntimeError("rocelab-dp exited %d: %s" % (p.returncode, said[-600:]))
    return wall, int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1)) / 1024


def flow_fabric(refill):
    """rocelab-dp's --fabric value: exact max-min rates, or refilled once per refill (TIME)."""
    return "flow,refill=%s" % refill if refill else "flow"


def run(dp, topo, jobs, qp_keys, size, extra, timeout, refill=None):
    """One rocelab-dp --fabric flow run of every job: per job (busbw GB/s, time us), the
    run's wall time (s) and peak RSS (MiB, /usr/bin/time -v)."""
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "run.json")
        cmd = ["/usr/bin/time", "-v", dp, "--topology", topo, "--clock", "virtual", "--flows", "0",
               "--quiet", "--fabric", flow_fabric(refill), "--json", js, "--name", "rl-fsc-%d" % os.getpid(),
               "--seed", "1"] + list(extra)
        for j in jobs:
            cmd += ["--coll", "%s,%s,sizes=%s,hosts=%s" % (COLL, qp_keys, size, "+".join(j))]
        wall, rss = timed_dp(cmd, timeout)
        doc = json.load(open(js))
    res = [(c["sizes"][0]["busbw_GBps"], c["sizes"][0]["time_us"]) for c in doc["collectives"]]
    return res, wall, rss


def scale_rows(a, dp, topo_tool, tmp):
    rows = ["| fabric | placement | jobs x GPUs | iteration, mean / slowest job (us) | busbw, mean / slowest (GB/s) "
            "| wall (s) | peak RSS (MiB) |", "|---|---|---|---|---|---|---|"]
    fabs = []  # (every fabric checked against --jobs before the first run)
    for fab in a.fabric:
        topo = generate(topo_tool, FABRICS[fab], os.path.join(tmp, fab + ".yaml"))
        racks = experiment.racks_of(topo)
        fabs.append((fab, topo, racks, jobs_of(a, racks, fab)))
    for fab, topo, racks, njobs in fabs:
        for kind in a.placement:
            res, wall, rss = run(dp, topo, placement(racks, njobs, kind, a.seed), ONE_QP, a.size, [], a.run_timeout,
                                 a.refill)
            t = [x[1] for x in res]
            b = [x[0] for x in res]
            rows.append("| %s | %s | %d x %d | %.1f / %.1f | %.2f / %.2f | %.1f | %.0f |" % (
                fab + (", refill %s" % a.refill if a.refill else ""), kind, len(res), JOB, sum(t) / len(t), max(t), sum(b) / len(b), min(b), wall, rss))
            print(rows[-1], flush=True)
    return rows


def mix_file(a, policy, tmp):
    """The mix's job file for one row: --mix's first --mix-jobs jobs, placed by policy."""
    import yaml
    with open(a.mix) as f:
        doc = yaml.safe_load(f)
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if not isinstance(jobs, list) or not jobs:
        raise BadJobs("--mix %s: no jobs: list" % a.mix)
    if a.mix_jobs > len(jobs):
        raise BadJobs("--mix-jobs %d: %s has %d jobs" % (a.mix_jobs, a.mix, len(jobs)))
    doc["jobs"] = jobs[:a.mix_jobs] if a.mix_jobs else jobs
    doc["policy"] = policy
    path = os.path.join(tmp, "mix-%s.jobs.yaml" % policy)
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return path, doc["jobs"]


def mix_run(dp, topo, jobs_path, timeout, refill=None):
    """One rocelab-dp --fabric flow --jobs --jobs-mix-only run: each job's iteration 1 in the
    mix (us; None: it did not end), the run's wall time (s) and peak RSS (MiB)."""
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "run.json")
        cmd = ["/usr/bin/time", "-v", dp, "--topology", topo, "--clock", "virtual", "--flows", "0",
               "--quiet", "--fabric", flow_fabric(refill), "--json", js, "--name", "rl-fsm-%d" % os.getpid(), "--seed", "1",
               "--jobs", jobs_path, "--jobs-mix-only", "--job-coll", JOB_COLL]
        wall, rss = timed_dp(cmd, timeout)
        doc = json.load(open(js))
    return [j["mix_us"] for j in doc["mix"]["jobs"]], wall, rss


def mix_rows(a, dp, topo_tool, tmp):
    rows = ["| fabric | policy | jobs | GPUs | iteration 1, mean / slowest job (us) | jobs ended | wall (s) "
            "| peak RSS (MiB) |", "|---|---|---|---|---|---|---|---|"]
    files = [(p, mix_file(a, p, tmp)) for p in a.policy]  # (checked before the first run)
    for fab in a.fabric:
        topo = generate(topo_tool, SERVERS[fab], os.path.join(tmp, fab + "-servers.yaml"))
        for policy, (path, jobs) in files:
            t, wall, rss = mix_run(dp, topo, path, a.run_timeout, a.refill)
            ended = [x for x in t if x is not None]
            rows.append("| %s | %s | %d | %d | %s | %d of %d | %.1f | %.0f |" % (
                fab + (", refill %s" % a.refill if a.refill else ""), policy, len(jobs), sum(int(j["gpus"]) for j in jobs),
                "%.1f / %.1f" % (sum(ended) / len(ended), max(ended)) if ended else "none ended",
                len(ended), len(t), wall, rss))
            print(rows[-1], flush=True)
    return rows


def routing_rows(a, dp, topo_tool, tmp):
    rows = ["| stage | placement | iteration per job (us) | busbw per job (GB/s) | wall (s) | the paper |",
            "|---|---|---|---|---|---|"]
    cases = [(STAGES[0], "rack-aware")] + [(s, "fragmented") for s in STAGES]
    cases = [c for i, c in enumerate(cases) if not a.row or i in a.row]
    topos = {}  # (every stage's fabric checked against --jobs before the first run)
    for i, (label, spec, _, _) in enumerate(STAGES):
        topo = generate(topo_tool, spec, os.path.join(tmp, "stage%d.yaml" % i))
        racks = experiment.racks_of(topo)
        topos[label] = (topo, racks, jobs_of(a, racks, "'%s'" % label))
    for (label, spec, extra, qp), kind in cases:
        topo, racks, njobs = topos[label]
        res, wall, _ = run(dp, topo, placement(racks, njobs, kind, a.seed), qp, a.size, extra, a.run_timeout,
                           a.refill)
        rows.append("| %s | %s | %s | %s | %.1f | %s |" % (
            label + (" (refill %s)" % a.refill if a.refill else ""), kind, " / ".join("%.1f" % x[1] for x in res), " / ".join("%.2f" % x[0] for x in res),
            wall, PAPER[label] if kind == "fragmented" else "reference: whole racks"))
        print(rows[-1], flush=True)
    return rows


def main(argv):
    ap = rlcli.ArgParser(prog="flow-scale.py", description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build folder")
    ap.add_argument("--table", choices=("scale", "routing", "mix"), default="scale",
                    help="which table (default scale)")
    ap.add_argument("--fabric", action="append", choices=sorted(FABRICS),
                    help="scale: the fabrics (repeatable; default zone)")
    ap.add_argument("--placement", action="append", choices=("rack-aware", "random", "fragmented"),
                    help="scale: the placements (repeatable; default all three)")
    ap.add_argument("--jobs", type=int, default=0,
                    help="jobs of 1,024 GPUs (default: as many as fit; more than fit: exit 2)")
    ap.add_argument("--size", default="1G", help="AllReduce size per rank (default 1G: 512 KiB NCCL messages "
                    "at 1,024 ranks and 2 channels, where the wire decides; smaller sizes make as many flows)")
    ap.add_argument("--seed", type=int, default=1, help="placement seed (default 1)")
    ap.add_argument("--out", help="write the table here too")
    ap.add_argument("--run-timeout", type=int, default=3600, help="seconds per rocelab-dp run")
    ap.add_argument("--mix", default=MIX, help="mix: the job file (default experiments/mix-24k.jobs.yaml)")
    ap.add_argument("--mix-jobs", type=int, default=0, help="mix: the file's first N jobs (default all)")
    ap.add_argument("--policy", action="append", choices=("topology-aware", "random"),
                    help="mix: the scheduler's policies (repeatable; default topology-aware)")
    ap.add_argument("--refill", metavar="TIME",
                    help="rates refilled at most once per TIME (rocelab-dp --fabric flow,refill=TIME; "
                         "default exact max-min at every flow event)")
    ap.add_argument("--row", type=int, action="append", choices=range(5),
                    help="routing: only this row of the table, 0-4 (repeatable; default all)")
    a = ap.parse_args(argv)
    a.policy = a.policy or ["topology-aware"]
    if a.table == "mix" and not a.fabric:
        a.fabric = ["dc"]
    a.fabric = a.fabric or ["zone"]
    a.placement = a.placement or ["rack-aware", "random", "fragmented"]
    dp = os.path.join(a.build, "dataplane", "rocelab-dp")
    topo_tool = os.path.join(a.build, "topology", "rocelab-topo")
    for prog in (dp, topo_tool, "/usr/bin/time"):
        if not os.access(prog, os.X_OK):
            print("flow-scale.py: %s is not there (build it; /usr/bin/time: apt install time)" % prog,
                  file=sys.stderr)
            return 2
    if a.jobs < 0 or a.mix_jobs < 0:
        print("flow-scale.py: --jobs and --mix-jobs: expected 0 or more", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        try:
            rows = {"scale": scale_rows, "routing": routing_rows, "mix": mix_rows}[a.table](a, dp, topo_tool, tmp)
        except (BadJobs, OSError) as e:
            print("flow-scale.py: %s" % e, file=sys.stderr)
            return 2
        except (RuntimeError, subprocess.SubprocessError) as e:
            print("flow-scale.py: %s" % e, file=sys.stderr)
            return 1
    FVP.write_table(rows, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
