#!/usr/bin/python3
"""Check the "mix" object of one rocelab-dp --jobs --json document against
its schema and against the text report of the same run: each job's
"# jobs: NAME: ..." line (GPUs, servers, policy, hosts, arrival, alone, in
the mix, slowdown), the mix's summary line (mean, p99, max), each job's
"links most used" line, and each job's own report after
"# jobs: NAME in the mix" (iteration 1's time and exposed communication
share, every communication row's op, ranks, bytes, time and busbw). The
text's rounding is allowed, no more. Prints one 'ok' line per job and exits
1 on the first disagreement, 2 on bad arguments.

usage: jobs_json_check.py SCHEMA JSON TEXT
"""
import json
import re
import sys

import jsonschema

N = r"-?[0-9]+(?:\.[0-9]+)?"
JOB = re.compile(rf"^# jobs: (\S+): (\d+) GPUs on (\d+) servers by (\S+) \(([^)]*)\), arrival ({N}) us: "
                 rf"iteration 1 alone ({N}) us, in the mix ({N}) us, slowdown ({N}) %$")
MIX = re.compile(rf"^# jobs: the mix: (\d+) jobs, slowdown mean ({N}) %, p99 ({N}) %, max ({N}) %$")
LINKS = re.compile(r"^# jobs: (\S+): links most used in the mix:(.*)$")
LINK = re.compile(rf"^ (\S+)>(\S+) util ({N}) % paused ({N}) %$")
ITER = re.compile(rf"^# job: iteration 1: time ({N}) us, compute critical path {N} us, "
                  rf"exposed communication {N} us \(({N}) %\)$")


class Mismatch(Exception):
    pass


def same(what, text, want):
    if text != want:
        raise Mismatch(f"{what}: text {text!r}, JSON gives {want!r}")


def own_report(lines, name):
    """The lines of job NAME's own report: after '# jobs: NAME in the mix' up to a blank line."""
    try:
        at = lines.index(f"# jobs: {name} in the mix")
    except ValueError:
        raise Mismatch(f"no '# jobs: {name} in the mix' section in the text") from None
    out = []
    for line in lines[at + 1:]:
        if not line.strip() or line.startswith("# jobs:"):
            break
        out.append(line)
    return out


def check_report(name, job, lines):
    w = job["workload"]
    rep = own_report(lines, name)
    it = next((ITER.match(l) for l in rep if ITER.match(l)), None)
    if it is None:
        raise Mismatch(f"{name}: no iteration 1 line in its report")
    same(f"{name} iteration 1 time", it.group(1), f"{w['iterations'][0]['time_us']:.3f}")
    same(f"{name} exposed share", it.group(2), f"{job['exposed_communication_mix_pct']:.1f}")
    rows = [l.split() for l in rep if re.match(r"^\s+1\s+\d+\s", l)]
    comm = [c for c in w["communication"] if c["iteration"] == 1]
    same(f"{name} communication rows", len(rows), len(comm))
    for r, c in zip(rows, comm):
        same(f"{name} row node {c['node']}", r[1:5] + r[6:8],
             [str(c["node"]), c["op"], str(c["ranks"]), str(c["size_bytes"]),
              f"{c['time_us']:.3f}", f"{c['busbw_GBps']:.2f}"])


def check_job(job, lines):
    name = job["name"]
    m = next((JOB.match(l) for l in lines if l.startswith(f"# jobs: {name}: ") and JOB.match(l)), None)
    if m is None:
        raise Mismatch(f"no finished '# jobs: {name}: ...' line in the text")
    same(f"{name} line", list(m.groups()[1:]),
         [str(job["gpus"]), str(job["servers"]), job["policy"], job["hosts"], f"{job['arrival_us']:.3f}",
          f"{job['alone_us']:.3f}", f"{job['mix_us']:.3f}", f"{job['slowdown_pct']:.2f}"])
    same(f"{name} mix_us = its workload's iteration 1", job["mix_us"], job["workload"]["iterations"][0]["time_us"])
    ln = next((LINKS.match(l) for l in lines if LINKS.match(l) and LINKS.match(l).group(1) == name), None)
    if ln is None:
        raise Mismatch(f"no '# jobs: {name}: links most used' line")
    text = [LINK.match(p).groups() for p in ln.group(2).split(",") if LINK.match(p)]
    same(f"{name} links", text, [(l["from"], l["to"], f"{l['util_pct']:.1f}", f"{l['paused_pct']:.1f}")
                                 for l in job["links_most_used"]])
    check_report(name, job, lines)


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    schema, doc = (json.load(open(p)) for p in argv[1:3])
    lines = open(argv[3]).read().splitlines()
    try:
        jsonschema.validate(doc, schema)
        mix = doc.get("mix")
        if mix is None:
            raise Mismatch("no 'mix' object in the JSON")
        s = next((MIX.match(l) for l in lines if MIX.match(l)), None)
        if s is None:
            raise Mismatch("no '# jobs: the mix:' line in the text")
        same("the mix's line", list(s.groups()), [str(mix["count"]), f"{mix['slowdown_mean_pct']:.2f}",
                                                  f"{mix['slowdown_p99_pct']:.2f}", f"{mix['slowdown_max_pct']:.2f}"])
        same("jobs", len(mix["jobs"]), mix["count"])
        for job in mix["jobs"]:
            check_job(job, lines)
            print(f"ok {job['name']}: {job['alone_us']} us alone, {job['mix_us']} us in the mix, "
                  f"{len(job['workload']['communication'])} communication rows")
    except (Mismatch, jsonschema.ValidationError, KeyError, TypeError, IndexError) as e:
        print(f"mismatch: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
