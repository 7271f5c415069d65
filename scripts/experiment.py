#!/usr/bin/python3
"""Run a rocelab experiment: a collective swept over sizes on the virtual
clock, for every variant x placement x seed of an experiment file, then write
results.csv, a PNG plot and report.md into the results folder.

usage: scripts/experiment.py EXPERIMENT.yaml [--out DIR] [--quick | --smoke] [--dp PATH]
                            [--topo-tool PATH]

An experiment file (see experiments/README.md):

  name: e1-eecmp-qp-scaling
  title: ...
  topology: clos-2x4x4-emulated.yaml        # relative to the experiment file, or
  # topology: {generate: "zones=2,leaves=4,spines=2,atsw=2,hosts=4,attach=emulated"}
  #   (rocelab-topo --generate writes it into the results folder first)
  collective: op=allreduce,sizes=1M:16M,data=off,chunk=512K,window=4
  seeds: [1, 2, 3]        # each: switch hash seed and rocelab-dp --seed (QPNs); busbw averaged
  placements: {full: h0+h4+h1+h5+h2+h6+h3+h7}
  variants:
    - {label: ECMP 1 QP, switch: {profile: 5tuple}, coll: qps=1}
    - {label: E-ECMP 16 QPs split, switch: {profile: eecmp}, coll: qps=16,mode=split}
    - {label: no PFC, topology: {qos: {lossless: []}},      # merged into the whole file
       dp_args: [--nic, "qpc=64,miss=2us"]}                  # extra rocelab-dp arguments
    - {label: rr, nccl: {NCCL_IB_QPS_PER_CONNECTION: 16, NCCL_IB_SPLIT_DATA_ON_QPS: 0}}
  nccl: {model: nccl, proxy_post_wqe: 200ns}  # ne_coll keys for every run (variants' win)
  nic: "quantum=16K,msgrate=215000000"       # rocelab-dp --nic for every run (variants'
                                              # own --nic in dp_args wins)
  baseline: ECMP 1 QP
  claim: {text: "...", kind: gain, paper_pct: 40}   # or kind: degradation, or kind: note

Every run also writes series/VARIANT-PLACEMENT-sSEED.csv (rocelab-dp --coll-series:
active QPs per NIC over virtual time, every 10 us, each size from its start) and the
report links series/active-qps-SIZE.png, one per size (variants overlaid, first seed).
results.csv has each size's per-message latency (the "# latency" lines).

Runs are deterministic: the same file gives the same numbers. `--quick`
keeps the first seed; `--smoke` the first seed and the two smallest sizes (tests).
Needs /usr/bin/python3 with python3-yaml; python3-matplotlib draws the plots and
pictures (without it the tables and report are still written). Every variant of the
file is checked before the first run (scripts/expcheck.py). Exit status: 0; 2 for bad
input (a mistake in the file: FILE:LINE and what is wrong), 1 for a failed run.

Each run's numbers come from its rocelab-dp --json document. As a library (import
experiment, with scripts/ on sys.path): run_experiment(PATH, ...) returns the rows,
totals and mean busbw of an experiment file; read_dp_json(PATH) those of one
rocelab-dp --json document; both raise expcheck.ExpError (its code: 2 bad input, 1 a
failed run) and never exit (docs/reference/outputs.md).
"""
import argparse
import csv
import importlib.util
import json
import os
import random
import re
import statistics
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# realpath: bin/rocelab-experiment is a link to the installed copy (scripts/rlpaths.py)
HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(HERE)
# its modules, also when it is imported from elsewhere (as a library, or by a test)
sys.path[:0] = [HERE, os.path.join(ROOT, "tools", "rocelab-viz-lib")]
import exp_jobs  # noqa: E402
from exp_plots import plot, plot_series, series_interval, size_label  # noqa: E402,F401
import expcheck  # noqa: E402
import rlcli  # noqa: E402
import rlpaths  # noqa: E402
from expcheck import ExpError, yaml  # noqa: E402


def die(msg, code=2):
    """Raise ExpError: main() prints msg and exits with code (2 bad input, 1 a failed run)."""
    raise ExpError(msg, code)


def load(path):
    """The experiment file at path, every variant checked before any run (expcheck);
    raises ExpError naming FILE:LINE."""
    return expcheck.load(path)


def nccl_keys(exp, v):
    """The ne_coll keys (model, NCCL_*, proxy costs) of the file's `nccl:` mapping with the
    variant's merged over it, as a --coll suffix (model first: it resets NCCL's defaults)."""
    keys = dict(exp.get("nccl") or {})
    keys.update(v.get("nccl") or {})
    order = sorted(keys, key=lambda k: k != "model")
    return ",".join(f"{k}={keys[k]}" for k in order)


def coll_for(exp, coll_base, v, hosts=None):
    """Variant v's whole --coll: the file's collective, its hosts (None: none given), the
    variant's coll, and the nccl keys (model=nccl first: it resets the QP settings to
    NCCL's defaults)."""
    coll = coll_base + (f",hosts={hosts}" if hosts else "") + (f",{v['coll']}" if v.get("coll") else "")
    nk = nccl_keys(exp, v)
    return (f"{nk},{coll}" if nk.startswith("model=") else f"{coll},{nk}") if nk else coll


def dp_version(dp):
    """rocelab-dp's --version line ("rocelab-dp 0.1.0 (commit ...)"), for the report."""
    try:
        p = subprocess.run([dp, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "an unknown rocelab-dp"
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else "an unknown rocelab-dp"


def check_colls(dp, exp, coll_base):
    """rocelab-dp --check --coll on every variant's whole spec before any run, the keys
    read by their one owner (rocelab-dp --coll help). Raises ExpError naming the FILE:LINE
    of the piece that holds the refused key (the variant's coll or nccl, the file's
    nccl or collective), with rocelab-dp's words."""
    m = exp["_marked"]
    for k, v in enumerate(exp["variants"]):
        try:
            p = subprocess.run([dp, "--check", "--coll", coll_for(exp, coll_base, v)],
                               capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            die(f"cannot check the collectives with {dp}: {e}", 1)
        if p.returncode == 0:
            continue
        msg = (p.stderr or p.stdout).strip().splitlines()[-1] if (p.stderr or p.stdout).strip() else ""
        msg = re.sub(r"^rocelab-dp: (--coll: )?", "", msg)
        key = re.match(r"([A-Za-z_0-9]+)=", msg)
        key = key.group(1) if key else None
        if key and re.search(rf"(^|,){key}=", v.get("coll") or ""):
            where, what = m.where("variants", k, "coll"), "coll"
        elif key and key in (v.get("nccl") or {}):
            where, what = m.where("variants", k, "nccl", key), "nccl"
        elif key and key in (exp.get("nccl") or {}):
            where, what = m.where("nccl", key), "nccl"
        else:
            where, what = m.where("collective"), "collective"
        die(f"{where}: {what}: {msg or f'rocelab-dp --check exit {p.returncode}'}"
            + (f" (variant {v['label']!r})" if what == "collective" else ""), 2)


def host_costs(exp):
    """The proxy costs (proxy_post_wqe, proxy_poll_cqe) the file or a variant sets, as text
    for the report ("" when none)."""
    keys = ("proxy_post_wqe", "proxy_poll_cqe")
    seen = []
    for m in [exp.get("nccl") or {}] + [v.get("nccl") or {} for v in exp["variants"]]:
        for k in keys:
            if k in m and f"{k}={m[k]}" not in seen:
                seen.append(f"{k}={m[k]}")
    for v in exp["variants"]:  # also given in a variant's coll string
        for k in keys:
            for m in re.finditer(rf"{k}=([^,]+)", v.get("coll") or ""):
                if f"{k}={m.group(1)}" not in seen:
                    seen.append(f"{k}={m.group(1)}")
    return ", ".join(f"`{x}`" for x in seen)


def dp_args_for(exp, v):
    """rocelab-dp arguments of a variant: the file's `nic:` as --nic unless the variant
    gives its own --nic, then the file's dp_args (e.g. a bigger packet pool for a large
    fabric), then the variant's."""
    extra = list(exp.get("dp_args") or []) + list(v.get("dp_args") or [])
    if exp.get("nic") and "--nic" not in extra:
        extra = ["--nic", str(exp["nic"])] + extra
    return extra


def merge(dst, src):
    """Deep-merge mapping src into dst (src wins)."""
    for k, v in (src or {}).items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            merge(dst[k], v)
        else:
            dst[k] = v
    return dst


def base_topology(exp, exp_path, out, topo_tool):
    """The experiment's topology file and how the report names it: a file next to the
    experiment, or {generate: SPEC} written by rocelab-topo --generate into out/topology.yaml."""
    t = exp["topology"]
    if isinstance(t, str):
        path = os.path.join(os.path.dirname(os.path.abspath(exp_path)), t)
        return path, f"`{t}`"  # (expcheck: it exists)
    if not os.access(topo_tool, os.X_OK):
        die(f"rocelab-topo not found at {topo_tool} (build it, or give --topo-tool)")
    path = os.path.join(out, "topology.yaml")
    p = subprocess.run([topo_tool, "--generate", t["generate"], "-o", path],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        die(f"{exp['_marked'].where('topology')}: topology: {p.stderr.strip()}")
    return path, f"generated by `rocelab-topo --generate {t['generate']}` (`topology.yaml`)"




def racks_of(base_path):
    """The fabric's racks: [(zone, leaf, [host, ...])] in file order, hosts under each leaf in
    file order. A leaf's zone is its name's `zZ-` prefix (generated AI zones), else ''."""
    with open(base_path) as f:
        topo = yaml.safe_load(f)
    racks = {}
    for h in topo.get("hosts") or []:
        if isinstance(h, dict) and h.get("leaf"):
            racks.setdefault(h["leaf"], []).append(h["name"])
    out = []
    for leaf, hosts in racks.items():
        m = re.match(r"^(z\d+)-", leaf)
        out.append((m.group(1) if m else "", leaf, hosts))
    return out


def server_of_hosts(base_path):
    """Host name -> its server (the topology's `server:` key), for the hosts that have one."""
    with open(base_path) as f:
        topo = yaml.safe_load(f)
    return {h["name"]: h["server"] for h in topo.get("hosts") or []
            if isinstance(h, dict) and h.get("server") is not None}


def rack_units(hosts, server_of, by_server, where):
    """A rack's units of placement, each a list of hosts: one per host, or with by_server
    (servers_per_rack) one per server, its GPUs in file order. Raises ExpError (code 2)
    when by_server and a host of the rack is no GPU of a server."""
    if not by_server:
        return [[h] for h in hosts]
    units = {}
    for h in hosts:
        if h not in server_of:
            die(f"{where}: servers_per_rack: host {h} is no GPU of a server (the topology "
                f"needs servers: rocelab-topo --generate servers=N)")
        units.setdefault(server_of[h], []).append(h)
    return list(units.values())


def placement_hosts(spec, racks, where, server_of=None):
    """A placement given as a mapping: which hosts (the first `racks` leaves, `hosts_per_rack`
    of each, or `servers_per_rack` whole servers of each, the first ones or a seeded random
    pick) and in which rank order of those hosts or servers:
      rack-aware  rack by rack, racks zone by zone: the ring leaves each rack and zone once;
      interleave  unit r on the (r mod racks)-th rack: every hop crosses racks;
      random      a seeded shuffle (Python's random.Random(seed)), as a scheduler that
                  knows nothing of the topology.
    A server's GPUs stay together, in file order. Deterministic: the same spec gives the
    same order. Returns "h+h+..."; raises ExpError (code 2) for counts the fabric does not
    have (keys and names: expcheck)."""
    by_server = "servers_per_rack" in spec
    nr, per = spec.get("racks", len(racks)), spec.get("servers_per_rack", spec.get("hosts_per_rack"))
    order, pick, seed = spec.get("order", "rack-aware"), spec.get("pick", "first"), spec.get("seed", 1)
    if not isinstance(nr, int) or isinstance(nr, bool) or not 1 <= nr <= len(racks):
        die(f"{where}: racks: expected 1..{len(racks)} (the fabric's leaves), got {nr!r}")
    units = [(zone, rack_units(hosts, server_of or {}, by_server, where))
             for zone, _, hosts in racks[:nr]]
    fewest, key = min(len(u) for _, u in units), ("servers_per_rack" if by_server else "hosts_per_rack")
    if per is None:
        per = fewest
    if not isinstance(per, int) or isinstance(per, bool) or not 1 <= per <= fewest:
        die(f"{where}: {key}: expected 1..{fewest}, got {per!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        die(f"{where}: seed: expected an integer, got {seed!r}")
    if sum(len(u) for _, us in units for u in us[:per]) < 2:
        die(f"{where}: fewer than 2 hosts: a collective needs at least 2")
    rng = random.Random(seed)
    chosen = []  # per rack, in zone order (file order within a zone)
    for zone, us in sorted(units, key=lambda r: r[0]):
        if pick == "random":
            us = [us[i] for i in sorted(rng.sample(range(len(us)), per))]
        chosen.append(us[:per])
    if order == "rack-aware":
        ranks = [u for us in chosen for u in us]
    elif order == "interleave":
        ranks = [chosen[r % nr][r // nr] for r in range(nr * per)]
    else:
        ranks = [u for us in chosen for u in us]
        rng.shuffle(ranks)
    return "+".join(h for u in ranks for h in u)


def resolve_placements(exp, base_path):
    """Placement name -> "h+h+..." (strings as given; mappings, whose form expcheck
    checked, through placement_hosts)."""
    racks = server_of = None
    out = {}
    for name, spec in exp["placements"].items():
        if isinstance(spec, str):
            out[name] = spec
            continue
        where = f"{exp['_marked'].where('placements', name)}: placement {name!r}"
        if racks is None:
            racks = racks_of(base_path)
            if not racks:
                die(f"{where}: the topology has no hosts under a leaf")
        if server_of is None:
            server_of = server_of_hosts(base_path)
        out[name] = placement_hosts(spec, racks, where, server_of)
    return out


def crossings(hosts, base_path):
    """Hops of the ring (rank r -> r+1, the last to the first) that leave a rack, and that
    leave a zone."""
    leaf_of, zone_of = {}, {}
    for zone, leaf, hs in racks_of(base_path):
        for h in hs:
            leaf_of[h], zone_of[h] = leaf, zone
    ring = hosts.split("+")
    pairs = list(zip(ring, ring[1:] + ring[:1]))
    return (sum(leaf_of.get(a) != leaf_of.get(b) for a, b in pairs),
            sum(zone_of.get(a) != zone_of.get(b) for a, b in pairs), len(ring))


def topology_for(base_path, switch_overrides, topo_overrides, seed, tmpdir, tag):
    """The base topology with the variant's switch settings and the seed merged into defaults.
    (A CRC hash seed alone moves no flow off a shared uplink: CRCs are affine,
    so every flow's hash changes by the same XOR. Run-to-run variety comes from
    rocelab-dp --seed, which numbers the emulated NICs' QPs differently.)"""
    with open(base_path) as f:
        topo = merge(yaml.safe_load(f), topo_overrides)
    defaults = topo.setdefault("defaults", {})
    sw = dict(defaults.get("switch", {}))
    sw.update(switch_overrides or {})
    sw["seed"] = seed
    defaults["switch"] = sw
    out = os.path.join(tmpdir, f"{tag}.yaml")
    with open(out, "w") as f:
        yaml.safe_dump(topo, f, sort_keys=False)
    return out


# the "# latency" keys kept per size in results.csv (after the nccl-tests columns)
LAT_COLS = ("lat_mean_us", "lat_p99_us", "wait_mean_us")
# the rocelab-dp --json format this reader knows (docs/reference/rocelab-dp.schema.json)
DP_JSON_FORMAT = "rocelab-dp/1"


def time_as_printed(us):
    """A time in us rounded as the nccl-tests line prints it (ne_coll_format_result):
    results.csv keeps the numbers the text gives."""
    return round(us) if us >= 10000 else round(us, 1) if us >= 100 else round(us, 2)


def read_dp_json(path):
    """The results of one rocelab-dp run from its --json FILE: a dict with
      rows: one per size of the (first) collective: size, time_us, algbw, busbw (GB/s,
            rounded as the nccl-tests line prints them), wrong ("N/A" when not checked)
            and the LAT_COLS of its "# latency" line;
      totals: the "# totals" line's counters, and qpeak_up / qpeak_down (queue_peaks);
      line_rate_GBps: the slowest host link's rate in GB/s (None without hosts);
      doc: the whole document.
    Raises ExpError (code 1: a run that did not write what it should) when the file is
    missing, not JSON or not of DP_JSON_FORMAT."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        die(f"rocelab-dp's --json {path}: {e}", 1)
    if not isinstance(doc, dict) or doc.get("format") != DP_JSON_FORMAT:
        die(f"rocelab-dp's --json {path}: not a {DP_JSON_FORMAT} document", 1)
    rows = []
    for z in (doc["collectives"][0]["sizes"] if doc.get("collectives") else []):
        w = z["wrong_elements"]
        rows.append({"size": z["size_bytes"], "time_us": time_as_printed(z["time_us"]),
                     "algbw": round(z["algbw_GBps"], 2), "busbw": round(z["busbw_GBps"], 2),
                     "wrong": "N/A" if w is None else str(w),
                     **{col: z["latency"].get(col, "") for col in LAT_COLS}})
    totals = dict(doc.get("totals") or {})
    totals.update(queue_peaks(doc))
    hosts = {h["name"] for h in doc["hosts"]}
    rates = [ln["rate_bps"] for ln in doc["links"] if ln["from"] in hosts]
    return {"rows": rows, "totals": totals, "doc": doc,
            "line_rate_GBps": min(rates) / 8e9 if rates else None}


def mpi_launcher(ranks):
    """mpirun with `ranks` ranks on this machine (more ranks than cores allowed), or nothing."""
    if ranks <= 1:
        return []
    return (["mpirun", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
            + ["--mca", "btl", "self,vader", "-np", str(ranks)])


def queue_peaks(doc):
    """Mean peak egress queue (bytes) over the links that carried packets, by class, from
    rocelab-dp's link and host tables (its --json document doc): qpeak_up (leaf to
    switch: a leaf is a switch with hosts under it), qpeak_down (switch to host). Why: a
    path's queueing delay is what a round-robin message meets that a single-path flow
    does not (FINDINGS, E2 at 128 ranks). Returns {} when there is no link table."""
    hosts = {h["name"] for h in doc.get("hosts", [])}
    links = [(ln["from"], ln["to"], ln["peak_queue_bytes"]) for ln in doc.get("links", [])
             if ln["packets"] > 0]
    leaves = {b for a, b, _ in links if a in hosts}
    up = [q for a, b, q in links if a in leaves and b not in hosts]
    down = [q for a, b, q in links if b in hosts]
    out = {}
    if up:
        out["qpeak_up"] = round(statistics.mean(up))
    if down:
        out["qpeak_down"] = round(statistics.mean(down))
    return out


class Stopped(BaseException):
    """SIGINT or SIGTERM reached experiment.py (a BaseException, like
    KeyboardInterrupt, so no 'except Exception' swallows it)."""

    def __init__(self, sig):
        super().__init__(sig)
        self.sig = sig


def on_signal(sig, _frame):
    """Raise Stopped and ignore further signals: the rocelab-dp under way is stopped
    by run_dp's handler, outside this one. Stopping it here deadlocked: a signal that
    lands while the main thread holds Popen's internal wait lock (inside p.wait or
    communicate), or a second signal that lands inside this handler's own p.wait,
    made Popen.wait() block on that lock forever (seen in CI: a Ctrl-C or SIGTERM
    sent both to experiment.py and to the 'timeout' that started it)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise Stopped(sig)


def run_dp(cmd, timeout):
    """subprocess.run(cmd, capture_output, text); on a timeout or a signal the run
    is stopped cleanly (stop) before experiment.py exits."""
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop(p)  # (a runtime failure, not bad input: exit 1)
            die(f"rocelab-dp ran longer than {timeout:g} s (--run-timeout): "
                f"{' '.join(cmd[:4])} ...", 1)
        except BaseException:
            stop(p)
            raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def stop(p):
    """SIGTERM, not SIGKILL: rocelab-dp then removes its DPDK runtime directory. Its
    tables are not wanted: the pipes are closed first, so its writes fail (EPIPE)
    instead of blocking on a full pipe."""
    for f in (p.stdout, p.stderr):
        try:
            f.close()
        except OSError:
            pass
    if p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def check_topologies(dp, exp, paths):
    """rocelab-dp --check on each variant's topology before any run: a bad
    override (an unknown link in an event, say) fails in seconds, not after
    the runs before it. paths: [(variant index, merged topology)]. Raises ExpError
    naming the variant's FILE:LINE, with rocelab-dp's message about the merged file
    (a temporary one: named "the merged topology" instead of its path)."""
    for k, path in paths:
        p = subprocess.run([dp, "--check", "--topology", path], capture_output=True, text=True,
                           timeout=300)
        if p.returncode != 0:
            # its FILE:LINE is the temporary merged file's: the user's line is the variant's
            msg = re.sub(rf"{re.escape(path)}(:\d+)?: ", "", (p.stderr or p.stdout).strip())
            die(f"{exp['_marked'].where('variants', k)}: variant {exp['variants'][k]['label']!r}: "
                f"its topology (the file's with the variant's switch and topology merged in) "
                f"does not load: {'; '.join(msg.splitlines())}")


def run_one(dp, topo, coll, name, seed, extra, picture=None, launch=(), series=None, timeout=None):
    """picture: a path prefix; the run then also writes PREFIX.csv (the link time
    series) and PREFIX.txt (its end-of-run tables) for rocelab-viz. launch: a
    launcher before rocelab-dp (mpirun ...). series: the --coll-series file."""
    with tempfile.TemporaryDirectory(prefix="rocelab-run-") as tmp:
        doc_path = os.path.join(tmp, "run.json")
        cmd = list(launch) + [dp, "--topology", topo, "--clock", "virtual", "--flows", "0",
               "--name", name, "--coll", coll, "--seed", str(seed), "--json", doc_path] + list(extra or [])
        # (no --quiet: pictures keep the text tables for rocelab-viz)
        cmd += ["--csv", picture + ".csv", "--csv-interval", PICTURE_INTERVAL] if picture else []
        cmd += ["--coll-series", series] if series else []
        p = run_dp(cmd, timeout)
        if picture:
            with open(picture + ".txt", "w") as f:
                f.write(p.stdout)
        # (a run that failed before its report wrote no document: the checks below say why)
        written = os.path.exists(doc_path) and os.path.getsize(doc_path) > 0
        got = read_dp_json(doc_path) if written else None
    rows, totals = (got["rows"], got["totals"]) if got else ([], {})
    stalled = next((l[2:] for l in p.stdout.splitlines()
                    if l.startswith("# stalled") or ": a work completion failed" in l), None)
    # an emulator limit, not the fabric: frames a NIC could not get were lost (PSN gaps,
    # NAKs, retransmissions); the run is not the model's and is reported as such
    dry = next((l.strip() for l in p.stderr.splitlines() if "packet pool ran dry" in l), None)
    if dry:
        stalled = (stalled + "; " if stalled else "") + dry.replace("rocelab-dp: ", "")
    if p.returncode != 0 and not stalled:
        # rocelab-dp's 2 is bad input (a --coll or --nic value out of range): so is ours
        die(f"rocelab-dp failed ({p.returncode}) for {coll}:\n{p.stderr.strip()[-2000:]}",
            2 if p.returncode == 2 else 1)
    if got is None and not stalled:
        die(f"rocelab-dp wrote no --json document for {coll}", 1)
    # a stalled run (the transport never recovered) keeps the sizes it finished
    return rows, totals, stalled, got["line_rate_GBps"] if got else None


# totals of the collective and the run, shown per message in the mechanism table
COLL_COLS = {"messages", "data_wqes", "zero_len_wqes", "cts", "wqes_posted", "cqes_polled",
             "proxy_busy_ns", "proxy_busy_max_ns", "rr_mismatch", "wall_s", "link_cv",
             "link_max_mean", "active_qps_mean", "active_qps_busy_mean", "active_qps_max",
             "qpeak_up", "qpeak_down", "msg_lat_mean_us", "msg_lat_p50_us", "msg_lat_p99_us",
             "msg_lat_max_us", "msg_wait_mean_us", "msg_wait_p99_us"}

# what depends on the machine, not on the experiment: kept out of totals.csv
WALL_COLS = {"wall_s"}

PICTURE_INTERVAL = "50us"  # sample period of the pictures' link time series
PICTURE_COLUMNS = 3        # variants per row in pictures/fabric.png


def slug(label):
    return re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-").lower()


def pictures(exp, base_topo, out, drawn):
    """pictures/fabric.{png,svg,html}: the fabric of every variant's first-seed
    run on the first placement, side by side (one time slider in the HTML).
    drawn: [(label, prefix)]. Returns the files' names for the report, or []."""
    if not drawn:
        return []
    pl = next(iter(exp["placements"]))
    cmd = ["/usr/bin/python3", os.path.join(ROOT, "tools", "rocelab-viz"),
           "--topology", base_topo, "--out", os.path.join(out, "pictures", "fabric"),
           "--columns", str(PICTURE_COLUMNS), "--title", f"{exp['title']} (placement {pl})"]
    for label, prefix in drawn:
        cmd += [prefix + ".csv", "--label", label, "--report", prefix + ".txt"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        print(f"experiment: no pictures: {p.stderr.strip()}", file=sys.stderr)
        return []
    return ["pictures/fabric.png", "pictures/fabric.svg", "pictures/fabric.html"]


def quick_sizes(coll):
    m = re.search(r"sizes=([^,]+)", coll)
    if not m or ":" not in m.group(1):
        return coll
    lo = m.group(1).split(":")[0]
    num = int(re.match(r"\d+", lo).group(0))
    unit = lo[len(str(num)):]
    return coll.replace(m.group(0), f"sizes={lo}:{num * 2}{unit}")


def fmt_total(x):
    """A totals cell: whole numbers as such, ratios (link spread) with 3 decimals."""
    return f"{x:.0f}" if abs(x) >= 100 or x == int(x) else f"{x:.3f}"


def mechanism_table(exp, labels, raw, tot):
    """Per variant and placement (mean over seeds): the collective's work per network
    message (data WQEs incl. zero-length, CQEs polled, ACKs), the busiest rank's proxy
    thread busy time as a share of the collective's time, the spread of bytes over the
    switch-to-switch links, QP context misses, and the wall time of a run."""
    if not any(t.get("messages") for t in tot):
        return []
    out = ["## Mechanism counters (mean over seeds, whole sweep)", "",
           "Per network message: data WQEs (split: one per QP, zero-length ones included), CQEs "
           "polled by both ends, ACKs. proxy busy: the busiest rank's proxy thread, share of the "
           "collective's time. active QPs/NIC: data QPs with a send WQE on the NIC, time-weighted "
           "mean over the collective's time and all NICs / the same while a NIC sends / the most "
           "on one NIC. link cv / max/mean: spread of bytes over the switch-to-switch links "
           "(0 = even). peak queue up / down: the egress queue's peak in KB, mean over the "
           "leaf-to-spine links / the links to hosts that carried traffic. msg latency: per "
           "data message, from the post of its first WQE to the sender's handling of its last "
           "completion, mean / p99 over the sweep (p99 from a log histogram, within 3.2 %); "
           "wait: from the message being ready (its data there) to that post, the wait for "
           "CTS / FIFO and a send slot, mean. Wall: seconds per run on this machine.", "",
           "| variant | placement | messages | WQEs/msg | CQEs/msg | ACKs/msg | proxy busy | "
           "active QPs/NIC | msg latency mean / p99 (us) | wait (us) | link cv | link max/mean | "
           "peak queue up / down | QPC misses | wall (s) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for lab in labels:
        for pl in exp["placements"]:
            sel = [t for t in tot if t["variant"] == lab and t["placement"] == pl and t.get("messages")]
            if not sel:
                continue
            f = []
            for t in sel:
                m = t["messages"]
                coll_ns = 1000 * sum(r["time_us"] for r in raw if r["variant"] == lab
                                     and r["placement"] == pl and r["seed"] == t["seed"])
                f.append((m, t.get("data_wqes", 0) / m, t.get("cqes_polled", 0) / m,
                          t.get("acks", 0) / m,
                          100 * t.get("proxy_busy_max_ns", 0) / coll_ns if coll_ns else 0,
                          t.get("link_cv", 0), t.get("link_max_mean", 0), t.get("qpc_misses", 0),
                          t.get("wall_s", 0), t.get("active_qps_mean", 0),
                          t.get("active_qps_busy_mean", 0), t.get("active_qps_max", 0),
                          t.get("qpeak_up", 0) / 1000, t.get("qpeak_down", 0) / 1000,
                          t.get("msg_lat_mean_us", 0), t.get("msg_lat_p99_us", 0),
                          t.get("msg_wait_mean_us", 0)))
            mu = [statistics.mean(x[i] for x in f) for i in range(len(f[0]))]
            out.append(f"| {lab} | {pl} | {mu[0]:.0f} | {mu[1]:.1f} | {mu[2]:.1f} | {mu[3]:.1f} | "
                       f"{mu[4]:.0f}% | {mu[9]:.1f} / {mu[10]:.1f} / {mu[11]:.0f} | "
                       f"{mu[14]:.2f} / {mu[15]:.2f} | {mu[16]:.2f} | "
                       f"{mu[5]:.3f} | {mu[6]:.2f} | {mu[12]:.0f} / {mu[13]:.0f} | {mu[7]:.0f} | "
                       f"{mu[8]:.1f} |")
    return out + [""]


def write_csv_file(path, write):
    """write(f) into path through a temporary file: a reader never sees half a table."""
    with open(path + ".tmp", "w", newline="") as f:
        write(f)
    os.replace(path + ".tmp", path)


def write_tables(out, raw, tot):
    """results.csv, totals.csv and timing.csv of the runs so far."""
    def results(f):
        w = csv.DictWriter(f, fieldnames=["variant", "placement", "seed", "size", "time_us", "algbw",
                                          "busbw", "wrong"] + list(LAT_COLS))
        w.writeheader()
        w.writerows(raw)

    tcols = sorted({k for t in tot for k in t} - {"variant", "placement", "seed"})
    # totals.csv is deterministic like results.csv (same file, same numbers); the wall
    # time of each run depends on the machine, so it goes to timing.csv
    det_cols = [c for c in tcols if c not in WALL_COLS]

    def totals(f, cols):
        w = csv.DictWriter(f, fieldnames=["variant", "placement", "seed"] + cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(tot)
    write_csv_file(os.path.join(out, "results.csv"), results)
    write_csv_file(os.path.join(out, "totals.csv"), lambda f: totals(f, det_cols))
    write_csv_file(os.path.join(out, "timing.csv"), lambda f: totals(f, sorted(WALL_COLS)))


def run_all(a, exp, base, seeds, coll_base, runs, out, first_pl, raw, tot, stalls, drawn,
            series_files, line_rates):
    """Run every (variant, placement, hosts, seed) of runs, appending to raw (a row per
    size), tot (a row per run), stalls, drawn and line_rates (each run's slowest host
    link, GB/s); the tables are rewritten after each run."""
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="rocelab-exp-") as tmp:
        check_topologies(a.dp, exp, [(k, topology_for(base, v.get("switch"), v.get("topology"),
                                                       seeds[0], tmp, f"check{k}"))
                                     for k, v in enumerate(exp["variants"])])
        for i, (v, pl, hosts, seed) in enumerate(runs):
            topo = topology_for(base, v.get("switch"), v.get("topology"), seed, tmp, f"r{i}")
            coll = coll_for(exp, coll_base, v, hosts)
            print(f"\r[{i + 1}/{len(runs)}] {v['label']} / {pl} / seed {seed} "
                  f"({time.time() - t0:.0f} s)   ", end="", file=sys.stderr, flush=True)
            pic = None
            if not a.no_pictures and pl == first_pl and seed == seeds[0]:
                pic = os.path.join(out, "pictures", slug(v["label"]))
                drawn.append((v["label"], pic))
            ser = os.path.join(out, "series", f"{slug(v['label'])}-{slug(pl)}-s{seed}.csv")
            if seed == seeds[0]:
                series_files[(v["label"], pl)] = ser
            t_run = time.time()
            workers_args = ["--workers", str(a.workers)] if a.workers > 1 else []
            rows, totals, stalled, rate = run_one(a.dp, topo, coll, f"rl-exp-{os.getpid()}-{i}", seed,
                                            dp_args_for(exp, v) + workers_args, pic,
                                            mpi_launcher(a.mpi), ser,
                                            a.run_timeout if a.run_timeout > 0 else None)
            totals["wall_s"] = round(time.time() - t_run, 1)
            if rate:
                line_rates.append(rate)
            if stalled:
                stalls.append(f"{v['label']} / {pl} / seed {seed}: {stalled} "
                              f"(finished {len(rows)} size(s))")
            for r in rows:
                raw.append({"variant": v["label"], "placement": pl, "seed": seed, **r})
            tot.append({"variant": v["label"], "placement": pl, "seed": seed, **totals})
            write_tables(out, raw, tot)


def check_modules():
    """The interpreter's modules, before anything else: yaml is needed (ExpError);
    matplotlib only for the pictures. Returns whether the pictures can be drawn."""
    if yaml is None:
        die(f"{sys.executable} has no yaml module: install Debian's python3-yaml "
            "(apt install python3-yaml)")
    if importlib.util.find_spec("matplotlib") is None:
        print(f"experiment: {sys.executable} has no matplotlib: no plots or pictures (only they "
              "need it: apt install python3-matplotlib); the tables and report.md are written",
              file=sys.stderr)
        return False
    return True


def parse_args(argv):
    ap = rlcli.ArgParser(prog="experiment.py", description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment")
    ap.add_argument("--out", help="results folder (default results/NAME)")
    ap.add_argument("--quick", action="store_true", help="first seed only")
    ap.add_argument("--smoke", action="store_true", help="first seed, two smallest sizes")
    ap.add_argument("--no-pictures", action="store_true",
                    help="skip pictures/ (the fabric of each variant, rocelab-viz)")
    ap.add_argument("--workers", type=int, default=1,
                    help="rocelab-dp --workers: partitions on threads (same results as 1)")
    ap.add_argument("--mpi", type=int, default=1, metavar="K",
                    help="run rocelab-dp as K MPI ranks (mpirun -np K; same results as 1)")
    ap.add_argument("--run-timeout", type=float, default=1800, metavar="SECONDS",
                    help="stop a run of rocelab-dp that takes longer (wall time; exit 1); "
                         "0: no limit (1,024-rank runs on a shared machine take more than "
                         "the default 1800)")
    ap.add_argument("--dp", default=rlpaths.program("rocelab-dp", "ROCELAB_DP", "dataplane"))
    ap.add_argument("--topo-tool", default=rlpaths.program("rocelab-topo", "ROCELAB_TOPO", "topology"),
        help="rocelab-topo, for topology: {generate: ...}")
    a = ap.parse_args(argv)
    a.experiment = rlpaths.experiment_file(a.experiment)
    return a


def placement_tables(exp, placed, base, mean, labels, sizes):
    """The report's busbw table of each placement (mean over seeds, change against the
    baseline), headed by how often its ring leaves a rack and a zone."""
    lines = []
    for pl in exp["placements"]:
        spec = exp["placements"][pl]
        hops, zhops, n = crossings(placed[pl], base)
        where = (f"`{spec}`" if isinstance(spec, str) else
                 f"`{yaml.safe_dump(spec, default_flow_style=True).strip()}`, {n} ranks "
                 f"(`placements.txt`)")
        lines += [f"## placement: {pl} ({where}; the ring leaves a rack at {hops} of its {n} "
                  f"hops" + (f", a zone at {zhops}" if zhops else "") + ")", "",
                  "| variant | " + " | ".join(f"{s / 2**20:g} MiB" for s in sizes) + " |",
                  "|---|" + "---|" * len(sizes)]
        for lab in labels:
            cells = []
            for s in sizes:
                b, base_b = mean.get((lab, pl, s)), mean.get((exp["baseline"], pl, s))
                if b is None:
                    cells.append("")
                    continue
                pct = f" ({100 * (b / base_b - 1):+.0f}%)" if base_b and lab != exp["baseline"] else ""
                cells.append(f"{b:.2f}{pct}")
            lines.append(f"| {lab} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def totals_table(exp, labels, tot, fabric_cols):
    """The report's fabric and NIC totals (mean over seeds), or []."""
    lines = []
    if fabric_cols:
        lines += ["## Fabric and NIC totals over the whole sweep (mean over seeds)", "",
                  "| variant | placement | " + " | ".join(fabric_cols) + " |",
                  "|---|---|" + "---|" * len(fabric_cols)]
        for lab in labels:
            for pl in exp["placements"]:
                sel = [t for t in tot if t["variant"] == lab and t["placement"] == pl]
                if sel:
                    lines.append(f"| {lab} | {pl} | " + " | ".join(
                        fmt_total(statistics.mean(t.get(c, 0) for t in sel)) for c in fabric_cols) + " |")
        lines.append("")
    return lines


def claim_section(exp, mean, labels, sizes):
    """The report's comparison with the paper's claim (the file's `claim:`), or []."""
    lines, claim_lines = [], []
    claim = exp.get("claim")
    if claim:
        kind = claim.get("kind", "gain")
        if kind == "gain":
            best = max(((100 * (mean[(lab, pl, s)] / mean[(exp["baseline"], pl, s)] - 1), lab, pl, s)
                        for lab in labels for pl in exp["placements"] for s in sizes
                        if (lab, pl, s) in mean and (exp["baseline"], pl, s) in mean and lab != exp["baseline"]),
                       default=None)
            if best:
                claim_lines.append(f"Largest gain over {exp['baseline']}: **{best[0]:+.0f}%** "
                                   f"({best[1]}, placement {best[2]}, {best[3] / 2**20:g} MiB); "
                                   f"the paper: up to +{claim['paper_pct']}%.")
        elif kind == "note":
            best = max(((statistics.mean(mean[(lab, pl, s)] for s in sizes if (lab, pl, s) in mean), lab, pl)
                        for lab in labels for pl in exp["placements"]
                        if any((lab, pl, s) in mean for s in sizes)), default=None)
            if best:
                claim_lines.append(f"Highest mean busbw over the sweep: **{best[1]}** "
                                   f"({best[0]:.2f} GB/s, placement {best[2]}).")
        else:  # degradation of one variant between two placements
            lab, good, bad = claim["variant"], claim["from"], claim["to"]
            worst = max(((100 * (1 - mean[(lab, bad, s)] / mean[(lab, good, s)]), s) for s in sizes
                         if (lab, good, s) in mean and (lab, bad, s) in mean), default=None)
            if worst:
                claim_lines.append(f"{lab}: busbw falls by up to **{worst[0]:.0f}%** from placement "
                                   f"{good} to {bad} ({worst[1] / 2**20:g} MiB); the paper: more than "
                                   f"{claim['paper_pct']}%.")
        lines += ["## Against the paper", "", claim.get("text", ""), ""] + claim_lines + [""]
    return lines

def write_placements(path, placed):
    """placements.txt: each placement's hosts in rank order."""
    with open(path, "w") as f:
        f.writelines(f"{pl}: {hosts}\n" for pl, hosts in placed.items())


def check_options(a):
    """The options that the parser cannot check alone, and rocelab-dp's presence."""
    if a.run_timeout < 0:
        die(f"--run-timeout: expected seconds >= 0 (0: no limit), got {a.run_timeout:g}")
    if a.mpi > 1 and a.workers > 1:
        die("--mpi and --workers: one or the other (under mpirun the partitions are the ranks)")
    if a.mpi > 1 and shutil.which("mpirun") is None:
        die("--mpi: mpirun not found (apt install openmpi-bin)")
    if not os.access(a.dp, os.X_OK):
        die(f"rocelab-dp not found at {a.dp} (build it: meson setup build && ninja -C build)")


def run(a, can_draw=True):
    """Run the experiment of the parsed command line a: its tables, plots and report in
    the results folder. can_draw: matplotlib is there (plots and pictures). Returns
    {"out": the folder, "rows": results.csv's rows, "totals": totals.csv's rows (with
    wall_s), "busbw": {(variant, placement, size): mean busbw over seeds, GB/s},
    "stalls": the runs that failed}. Raises ExpError: code 2 for bad input, 1 for a
    failed run."""
    exp = load(a.experiment)
    if "collective" not in exp:  # workload: or jobs: (scripts/exp_jobs.py)
        return exp_jobs.run(sys.modules[__name__], a, exp, can_draw)
    a.no_pictures = a.no_pictures or not can_draw
    check_options(a)
    seeds = exp["seeds"][:1] if a.quick or a.smoke else exp["seeds"]
    coll_base = quick_sizes(exp["collective"]) if a.smoke else exp["collective"]
    check_colls(a.dp, exp, coll_base)
    out = a.out or rlpaths.results_dir(exp["name"])
    os.makedirs(out, exist_ok=True)
    base, topo_label = base_topology(exp, a.experiment, out, a.topo_tool)

    placed = resolve_placements(exp, base)
    write_placements(os.path.join(out, "placements.txt"), placed)
    runs = [(v, pl, hosts, seed) for v in exp["variants"] for pl, hosts in placed.items()
            for seed in seeds]
    raw, tot, stalls, drawn, line_rates = [], [], [], [], []
    if not a.no_pictures:
        os.makedirs(os.path.join(out, "pictures"), exist_ok=True)
    os.makedirs(os.path.join(out, "series"), exist_ok=True)
    series_files = {}  # (variant, placement) -> the first seed's series
    first_pl = next(iter(exp["placements"]))
    t0 = time.time()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        run_all(a, exp, base, seeds, coll_base, runs, out, first_pl, raw, tot, stalls, drawn,
                series_files, line_rates)
    except (Stopped, ExpError):  # a signal, a failed or over-long run: what finished stays
        if tot:  # (again: the signal may have come before or inside the last write)
            write_tables(out, raw, tot)
            print(f"\nexperiment.py: {len(tot)} of {len(runs)} runs finished; their numbers are "
                  f"in {out}/results.csv, totals.csv and timing.csv (no report)", file=sys.stderr)
        raise
    print(f"\r{len(runs)} runs in {time.time() - t0:.0f} s" + " " * 40, file=sys.stderr)
    write_tables(out, raw, tot)
    # the report's totals table: the fabric's and transport's events; the collective's
    # work counters are in the mechanism table (all of them are in totals.csv)
    fabric_cols = [c for c in sorted({k for t in tot for k in t} - {"variant", "placement", "seed"})
                   if c not in COLL_COLS]

    mean = {}
    for key in {(r["variant"], r["placement"], r["size"]) for r in raw}:
        mean[key] = statistics.mean(r["busbw"] for r in raw if (r["variant"], r["placement"], r["size"]) == key)
    if can_draw:
        plot(exp, mean, os.path.join(out, "busbw.png"), min(line_rates) if line_rates else None)
    pics = pictures(exp, base, out, drawn)
    series_pngs = plot_series(exp, out, series_files) if can_draw else []

    sizes = sorted({k[2] for k in mean})
    labels = [v["label"] for v in exp["variants"]]
    lines = [f"# {exp['title']}", "", f"Made by {dp_version(a.dp)}.", "",
             f"Topology {topo_label}, collective `{coll_base}`, seeds {seeds}, "
             f"{len(runs)} runs on the virtual clock (deterministic). Bus bandwidth in GB/s, "
             f"mean over seeds; in brackets the change against **{exp['baseline']}**.", ""]
    costs = host_costs(exp)
    if costs:
        lines += [f"Host costs {costs} are **assumptions** (no public figure for the time a "
                  "proxy thread takes to post a WQE or poll a CQE; `e1-rr-split-sweep.yaml` sweeps "
                  "them): figures that depend on them (split at small messages, proxy busy) move "
                  "with them.", ""]
    lines += placement_tables(exp, placed, base, mean, labels, sizes)
    lines += totals_table(exp, labels, tot, fabric_cols)
    lines += mechanism_table(exp, labels, raw, tot)
    if stalls:
        lines += ["## Runs that failed", "",
                  "A QP went to the error state (e.g. its retry counter ran out after NAKs for "
                  "out-of-order packets) or the transport stopped with nothing scheduled (the "
                  "sizes these runs did not finish are left out of the means), or the packet "
                  "pool ran dry: an emulator limit, NICs lost frames they could not get, and "
                  "the run's figures are not the model's (give the file `dp_args: [--mbufs, N, "
                  "--mem, MB]`):", ""]
        lines += [f"- {s_}" for s_ in stalls] + [""]
    lines += claim_section(exp, mean, labels, sizes)
    shown = len(lines)  # what stdout shows: the tables, up to the plots
    lines += (["![busbw](busbw.png)", ""] if can_draw else
              ["No plots or pictures: python3 has no matplotlib (Debian: python3-matplotlib).", ""])
    if series_pngs:
        lines += ["## Active QPs per NIC over time", "",
                  f"Seed {seeds[0]}, every variant overlaid: the mean over the collective's NICs "
                  "of their data QPs with a send WQE on the NIC (thick) and the most on one NIC "
                  f"(thin), per {series_interval(coll_base)} of virtual time from the size's start (exact "
                  "time-weighted values, not samples). The rows: `series/*.csv`.", ""]
        lines += [f"![active QPs, {size_label(s)}]({p})" for s, p in series_pngs] + [""]
    if pics:
        lines += ["## The fabric", "",
                  f"Every variant's run (seed {seeds[0]}, placement {first_pl}): links coloured by "
                  "mean utilisation per direction, orange marks where a sender was paused by PFC, "
                  "red where packets were dropped. `pictures/fabric.html` plays the run over time "
                  "(one slider for all variants); `pictures/*.csv` are the link time series.", "",
                  "![fabric](pictures/fabric.png)", ""]
    lines += ["Raw numbers per seed: `results.csv`, `totals.csv` (both deterministic), "
              "`timing.csv` (wall time per run on this machine).", ""]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines[:shown]))
    print(f"results in {out}/ (results.csv, totals.csv, " + ("busbw.png, " if can_draw else "") + "report.md"
          + (", pictures/fabric.png, .svg, .html" if pics else "") + ")")
    return {"out": out, "rows": raw, "totals": tot, "busbw": mean, "stalls": stalls}


def run_experiment(path, out=None, quick=False, smoke=False, pictures=True, dp=None,
                   topo_tool=None, workers=1, mpi=1, run_timeout=1800):
    """The library's entry: run the experiment file at path, as the command line would
    with the same options (dp, topo_tool: None for the command line's defaults), and
    return run()'s results. Raises ExpError (e.code: 2 bad input, 1 a failed run)
    instead of exiting; a signal raises Stopped."""
    argv = [path, "--workers", str(workers), "--mpi", str(mpi), "--run-timeout", str(run_timeout)]
    argv += (["--out", out] if out else []) + (["--quick"] if quick else [])
    argv += (["--smoke"] if smoke else []) + ([] if pictures else ["--no-pictures"])
    argv += (["--dp", dp] if dp else []) + (["--topo-tool", topo_tool] if topo_tool else [])
    return run(parse_args(argv), check_modules())


def main(argv=None):
    """The command line: 0, 2 for bad input, 1 for a failed run, 128 + N on signal N."""
    a = parse_args(argv)
    try:
        run(a, check_modules())
    except ExpError as e:
        print(f"experiment: {e}", file=sys.stderr)
        return e.code
    except Stopped as e:  # the run under way was stopped; the temporary folder is gone
        print(f"\nexperiment.py: stopped by signal {e.sig}", file=sys.stderr)
        return 128 + e.sig
    return 0


if __name__ == "__main__":
    sys.exit(main())
