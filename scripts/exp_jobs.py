# SPDX-License-Identifier: BSD-3-Clause
"""Experiments that run training jobs (issue 41): an experiment file with
`workload:` (one rocelab-dp --workload job) or `jobs:` (a job file, rocelab-dp
--jobs: many jobs at once, each also alone) in place of `collective:`.
experiment.py hands such a file to run() here; the topology, the variants'
switch and topology overrides, seeds, `nccl:`, `nic:` and `dp_args:` mean
what they mean for a collective. Besides:

  - a variant's `coll:` and the `nccl:` keys go to --job-coll (every job's
    collectives);
  - a variant's `policy:` (jobs: only) is the job file's policy for that run
    (packed, spread, random, topology-aware), over the file's own;
  - a relative path in `workload:` or in the job file's workloads is from the
    experiment file's folder.

Each run's numbers come from its --json document's `workload` or `mix`
object. It writes into the results folder jobs.csv (a row per job, variant
and seed: iteration 1 alone and in the mix, slowdown, exposed communication
share, the busiest link), runs.csv (a row per run: the mix's mean, p99 and
max slowdown, the fabric's counters, wall time) and report.md.
"""
import csv
import json
import os
import re
import resource
import statistics
import sys
import tempfile
import time

from expcheck import ExpError, yaml

KINDS_WITH_PATH = ("chakra:", "astra:")  # (llm: names no file)
JOB_COLS = ("variant", "seed", "job", "gpus", "servers", "policy", "hosts", "alone_us", "mix_us",
            "slowdown_pct", "exposed_alone_pct", "exposed_mix_pct", "busiest_link", "busiest_util_pct")
RUN_COLS = ("variant", "seed", "jobs", "slowdown_mean_pct", "slowdown_p99_pct", "slowdown_max_pct",
            "uplink_util_mean_pct", "uplink_util_max_pct", "pfc_frames", "drops_frames", "retrans_packets",
            "ecn_marked_packets", "wall_s", "peak_rss_MiB", "pool_dry")


def absolute_workload(spec, folder):
    """A --workload text with a relative chakra:/astra: path made absolute from folder."""
    for kind in KINDS_WITH_PATH:
        if spec.startswith(kind) and not spec[len(kind):].startswith("/"):
            return kind + os.path.join(folder, spec[len(kind):])
    return spec


def job_file_for(exp, v, folder, tmp, tag):
    """The job file this variant runs: the experiment's, its workloads' paths made
    absolute and the variant's policy (if any) as the file's."""
    path = os.path.join(folder, exp["jobs"])
    with open(path) as f:
        jobs = yaml.safe_load(f)
    if not isinstance(jobs, dict):
        raise ExpError(f"{path}: not a job file: expected a mapping with jobs: (rocelab-place's format)")
    for j in jobs.get("jobs") or []:
        if isinstance(j, dict) and isinstance(j.get("workload"), str):
            j["workload"] = absolute_workload(j["workload"], folder)
    if v.get("policy"):
        jobs["policy"] = v["policy"]
    path = os.path.join(tmp, f"{tag}.jobs.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(jobs, f, sort_keys=False)
    return path


def job_coll(ex, exp, v):
    """The variant's --job-coll: the nccl keys (model first), then its coll; "" for none."""
    return ",".join(p for p in (ex.nccl_keys(exp, v), v.get("coll")) if p)


def what_args(exp, v, folder, tmp, tag):
    """rocelab-dp's arguments for what runs: --jobs FILE or --workload SPEC."""
    if "jobs" in exp:
        return ["--jobs", job_file_for(exp, v, folder, tmp, tag)]
    return ["--workload", absolute_workload(exp["workload"], folder)]


def check_runs(ex, a, exp, topos, folder, tmp):
    """rocelab-dp --check of each variant (its merged topology, its jobs or workload, its
    --job-coll) before any run: a mistake fails in seconds. ExpError names the variant."""
    for k, v in enumerate(exp["variants"]):
        cmd = [a.dp, "--check", "--clock", "virtual", "--topology", topos[k]]
        cmd += what_args(exp, v, folder, tmp, f"check{k}")
        jc = job_coll(ex, exp, v)
        cmd += ["--job-coll", jc] if jc else []
        p = ex.subprocess.run(cmd + ex.dp_args_for(exp, v), capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            msg = "; ".join((p.stderr or p.stdout).strip().splitlines()[-3:])
            ex.die(f"{exp['_marked'].where('variants', k)}: variant {v['label']!r}: rocelab-dp --check "
                   f"refuses it: {msg}", 2 if p.returncode == 2 else 1)


def counters(doc):
    """The fabric's counters that explain a difference: leaf-spine link utilisation (both
    directions), PFC frames and drops on links, NIC retransmissions, ECN marks."""
    role = {s["name"]: s["role"] for s in doc["switches"]}
    up = [l["util_pct"] for l in doc["links"] if {role.get(l["from"]), role.get(l["to"])} == {"rtsw", "ctsw"}]
    return {"uplink_util_mean_pct": round(statistics.mean(up), 2) if up else "",
            "uplink_util_max_pct": round(max(up), 2) if up else "",
            "pfc_frames": sum(l["pfc_tx_frames"] for l in doc["links"]),
            "drops_frames": sum(l["drops_frames"] for l in doc["links"]),
            "retrans_packets": sum(n["retrans_packets"] for n in doc["nics"]),
            "ecn_marked_packets": sum(s["ecn_marked_packets"] for s in doc["switches"])}


def job_rows(doc, label, seed):
    """jobs.csv's rows of one run's document (--jobs: its mix; --workload: one row)."""
    rows = []
    if "mix" in doc:
        for j in doc["mix"]["jobs"]:
            top = j["links_most_used"][0] if j["links_most_used"] else None
            rows.append({"variant": label, "seed": seed, "job": j["name"], "gpus": j["gpus"],
                         "servers": j["servers"], "policy": j["policy"], "hosts": j["hosts"],
                         "alone_us": j["alone_us"], "mix_us": j["mix_us"], "slowdown_pct": j["slowdown_pct"],
                         "exposed_alone_pct": j["exposed_communication_alone_pct"],
                         "exposed_mix_pct": j["exposed_communication_mix_pct"],
                         "busiest_link": f"{top['from']}>{top['to']}" if top else "",
                         "busiest_util_pct": round(top["util_pct"], 1) if top else ""})
    else:
        w, it = doc["workload"], doc["workload"]["iterations"]
        t = it[0]["time_us"] if it else None
        rows.append({"variant": label, "seed": seed, "job": "workload", "gpus": w["ranks"], "mix_us": t,
                     "exposed_mix_pct": 100 * it[0]["exposed_communication_us"] / t if t else None})
    return rows


def pool_dry(stderr):
    """Times the packet pool ran dry, summed over the lines rocelab-dp (and its runs
    alone) printed: frames dropped or held back for want of a frame, an emulator limit."""
    return sum(int(m.group(1)) for m in re.finditer(r"packet pool ran dry (\d+) times", stderr or ""))


def run_one(ex, a, exp, v, topo, seed, folder, tmp, tag):
    """One run of variant v: (its job rows, its runs.csv row). ExpError when it fails."""
    doc_path = os.path.join(tmp, f"{tag}.json")
    cmd = [a.dp, "--topology", topo, "--clock", "virtual", "--quiet", "--seed", str(seed),
           "--name", f"rl-exp-{os.getpid()}-{tag}", "--json", doc_path]
    cmd += what_args(exp, v, folder, tmp, tag)
    jc = job_coll(ex, exp, v)
    cmd += (["--job-coll", jc] if jc else []) + ex.dp_args_for(exp, v)
    t0 = time.time()
    p = ex.run_dp(cmd, a.run_timeout if a.run_timeout > 0 else None)
    wall = round(time.time() - t0, 1)
    if p.returncode != 0 or not os.path.exists(doc_path):
        ex.die(f"rocelab-dp failed ({p.returncode}) for variant {v['label']!r}, seed {seed}:\n"
               f"{p.stderr.strip()[-2000:]}", 2 if p.returncode == 2 else 1)
    with open(doc_path) as f:
        doc = json.load(f)
    mix = doc.get("mix") or {}
    run = {"variant": v["label"], "seed": seed, "jobs": mix.get("count", 1),
           "slowdown_mean_pct": mix.get("slowdown_mean_pct"), "slowdown_p99_pct": mix.get("slowdown_p99_pct"),
           "slowdown_max_pct": mix.get("slowdown_max_pct"), **counters(doc), "wall_s": wall,
           "peak_rss_MiB": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
           "pool_dry": pool_dry(p.stderr)}
    return job_rows(doc, v["label"], seed), run


def write_csv(path, cols, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def fmt(x, spec=".1f"):
    return "" if x is None or x == "" else format(x, spec)


def mean_of(rows, key):
    vals = [r[key] for r in rows if r.get(key) not in (None, "")]
    return statistics.mean(vals) if vals else None


def report(exp, labels, jobs, runs, header):
    """report.md's lines: per variant the mix's line and counters, then per job its
    iteration in the mix (mean over seeds) and the change against the baseline."""
    base = exp["baseline"]
    names = list(dict.fromkeys(r["job"] for r in jobs))
    lines = header + ["## The mix per variant (mean over seeds)", "",
                      "| variant | mean iteration in the mix (us) | vs baseline | slowdown mean % | p99 % | max % "
                      "| leaf-spine util mean % | max % | PFC frames | drops | retrans | ECN marks | wall s |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    it = {lab: mean_of([r for r in jobs if r["variant"] == lab], "mix_us") for lab in labels}
    for lab in labels:
        sel = [r for r in runs if r["variant"] == lab]
        vs = f"{100 * (it[lab] / it[base] - 1):+.1f}%" if it.get(lab) and it.get(base) and lab != base else ""
        lines.append(f"| {lab} | {fmt(it[lab])} | {vs} | " + " | ".join(
            fmt(mean_of(sel, k), ".2f" if "pct" in k else ".0f") for k in RUN_COLS[3:13]) + " |")
    dry = [lab for lab in labels if any(r.get("pool_dry") for r in runs if r["variant"] == lab)]
    if dry:
        lines += ["", "**Not the model's:** the packet pool ran dry in " + ", ".join(dry) + " (runs.csv's "
                  "pool_dry): switches dropped and senders waited for want of a frame, an emulator "
                  "limit; give the runs more --mbufs."]
    lines += ["", "## Each job: iteration 1 in the mix, us (slowdown against alone, %)", "",
              "| job | GPUs | " + " | ".join(labels) + " |", "|---|---|" + "---|" * len(labels)]
    for n in names:
        cells = []
        for lab in labels:
            sel = [r for r in jobs if r["job"] == n and r["variant"] == lab]
            t, s = mean_of(sel, "mix_us"), mean_of(sel, "slowdown_pct")
            cells.append(f"{fmt(t)}" + (f" ({s:+.1f})" if s is not None else ""))
        gpus = next(r["gpus"] for r in jobs if r["job"] == n)
        lines.append(f"| {n} | {gpus} | " + " | ".join(cells) + " |")
    claim = exp.get("claim")
    if claim:
        lines += ["", "## Against the paper", "", claim.get("text", ""), ""]
        best = max(((100 * (it[base] / it[lab] - 1), lab) for lab in labels
                    if lab != base and it.get(lab) and it.get(base)), default=None)
        if best and claim.get("kind", "gain") == "gain":
            lines.append(f"Largest gain over {base} (the jobs' mean iteration time in the mix, "
                         f"as a speed-up): **{best[0]:+.1f}%** ({best[1]}); the paper: "
                         f"up to +{claim['paper_pct']}%.")
    return lines + ["", "Per job and seed: `jobs.csv`; per run (the counters, wall time, "
                    "peak memory of the runs so far): `runs.csv`.", ""]


def run(ex, a, exp, can_draw=True):
    """Run the experiment (its file has workload: or jobs:); ex is experiment.py's module
    (its helpers). Returns {"out", "jobs": jobs.csv's rows, "runs": runs.csv's rows}."""
    ex.check_options(a)
    seeds = exp["seeds"][:1] if a.quick or a.smoke else exp["seeds"]
    out = a.out or ex.rlpaths.results_dir(exp["name"])
    os.makedirs(out, exist_ok=True)
    folder = os.path.dirname(os.path.abspath(a.experiment))
    base, topo_label = ex.base_topology(exp, a.experiment, out, a.topo_tool)
    labels = [v["label"] for v in exp["variants"]]
    jobs, runs = [], []
    ex.signal.signal(ex.signal.SIGTERM, ex.on_signal)
    ex.signal.signal(ex.signal.SIGINT, ex.on_signal)
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="rocelab-exp-") as tmp:
        topos = [ex.topology_for(base, v.get("switch"), v.get("topology"), seeds[0], tmp, f"check{k}")
                 for k, v in enumerate(exp["variants"])]
        ex.check_topologies(a.dp, exp, list(enumerate(topos)))
        check_runs(ex, a, exp, topos, folder, tmp)
        todo = [(v, s) for v in exp["variants"] for s in seeds]
        for i, (v, seed) in enumerate(todo):
            print(f"\r[{i + 1}/{len(todo)}] {v['label']} / seed {seed} ({time.time() - t0:.0f} s)   ",
                  end="", file=sys.stderr, flush=True)
            topo = ex.topology_for(base, v.get("switch"), v.get("topology"), seed, tmp, f"r{i}")
            rows, r = run_one(ex, a, exp, v, topo, seed, folder, tmp, f"r{i}")
            jobs += rows
            runs.append(r)
            write_csv(os.path.join(out, "jobs.csv"), JOB_COLS, jobs)
            write_csv(os.path.join(out, "runs.csv"), RUN_COLS, runs)
    print(f"\r{len(todo)} runs in {time.time() - t0:.0f} s" + " " * 40, file=sys.stderr)
    what = f"job file `{exp['jobs']}`" if "jobs" in exp else f"workload `{exp['workload']}`"
    header = [f"# {exp['title']}", "", f"Made by {ex.dp_version(a.dp)}.", "",
              f"Topology {topo_label}, {what}, seeds {seeds}, {len(todo)} runs on the virtual clock "
              f"(deterministic); each --jobs run also ran each job alone.", ""]
    lines = report(exp, labels, jobs, runs, header)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    print(f"results in {out}/ (jobs.csv, runs.csv, report.md)")
    return {"out": out, "jobs": jobs, "runs": runs}
