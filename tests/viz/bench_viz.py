#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of issue 17's tools (prints figures; asserts nothing about speed):

1. Drawing: seconds for rocelab-viz to draw a 1,024-host Clos (16 spines, 64
   leaves, 16 hosts each; hosts drawn as 64 racks) from a virtual-clock run's
   CSV, PNG+SVG and HTML, against the same for the 8-host default topology
   measured in the same run (the ratio).
2. Dashboard refresh cost: one live rocelab-dp (net_null hosts, its own
   generator at full speed) measured in phases of PHASE_S seconds without, with
   (1 s refresh, as shipped; then 0.1 s, ten times the work) and again without
   the dashboard polling: switch forwards per second (Mpps) from telemetry, in
   the same run. Inside a private network namespace (root).
3. The exporter: time of one scrape (--once) of that live fabric.
4. The exporter with emulated NICs: one scrape (--once) of an idle live fabric
   of NICS_BIG emulated hosts (more rows than one /rocelab/nics reply holds:
   the rest are asked one host at a time) against the 4 emulated hosts of
   tests/dataplane/data/emulated.yaml, in the same run (the ratio).

usage: bench_viz.py BUILD_DIR [--phase-seconds N]
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3"
VIZ = os.path.join(SRC, "tools", "rocelab-viz")
BIG = (16, 64, 16)        # spines, leaves, hosts per leaf: 1,024 hosts
LIVE = (4, 4, 8)          # the live fabric: 32 net_null hosts (DPDK: 32 ports at most), 48 links
REPEAT = 3                # drawings timed; the best is printed
NICS_BIG = (2, 8, 32)     # part 4: 256 emulated hosts
TEL_THREAD = "telemetry"  # DPDK's telemetry threads (telemetry-v2, ...) in rocelab-dp


def topo_tool(build):
    return os.path.join(build, "topology", "rocelab-topo")


def run_virtual(dp, topo, csv_path, gens, name):
    cmd = [dp, "--topology", topo, "--clock", "virtual", "--quiet", "--name", name,
           "--csv", csv_path, "--csv-interval", "100us"]
    for g in gens:
        cmd += ["--gen", g]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    shutil.rmtree(f"/var/run/dpdk/{name}", ignore_errors=True)


def best_time(cmd):
    best = None
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, timeout=600)
        dt = time.perf_counter() - t0
        best = dt if best is None or dt < best else best
    return best


def bench_draw(build, tmp):
    dp = os.path.join(build, "dataplane", "rocelab-dp")
    big = os.path.join(tmp, "big.yaml")
    subprocess.run([PY, os.path.join(HERE, "gen_clos.py"), *map(str, BIG), big], check=True)
    n = BIG[1] * BIG[2]
    gens = [f"h{i}>h{(i + n // 2) % n}:proto=roce,flows=4,rate=20G,count=2000" for i in range(0, n, 16)]
    run_virtual(dp, big, os.path.join(tmp, "big.csv"), gens, f"rlviz-bench-{os.getpid()}-big")
    small = os.path.join(SRC, "topologies", "default.yaml")
    run_virtual(dp, small, os.path.join(tmp, "small.csv"),
                ["h0>h4:proto=roce,flows=16,rate=50G,count=8000"], f"rlviz-bench-{os.getpid()}-s")
    rows = os.path.getsize(os.path.join(tmp, "big.csv"))
    print(f"== drawing (best of {REPEAT}); 1,024-host CSV: {rows / 1e6:.1f} MB")
    res = {}
    for tag, topo in (("small", small), ("big", big)):
        for what, args in (("png+svg", ["--png", f"{tmp}/{tag}.png", "--svg", f"{tmp}/{tag}.svg"]),
                           ("html", ["--html", f"{tmp}/{tag}.html"])):
            res[tag, what] = best_time([PY, VIZ, os.path.join(tmp, f"{tag}.csv"), "--topology",
                                        topo, *args])
    for what in ("png+svg", "html"):
        print(f"  {what:8s} default (8 hosts) {res['small', what]:6.2f} s   1,024 hosts "
              f"{res['big', what]:6.2f} s   ratio {res['big', what] / res['small', what]:5.2f}")


def stop_dp(dpp, name):
    """Stop a rocelab-dp (SIGINT, then SIGKILL after 30 s) and remove its runtime folder."""
    dpp.send_signal(2)
    try:
        dpp.wait(timeout=30)
    except subprocess.TimeoutExpired:
        dpp.kill()
        dpp.wait()
    shutil.rmtree(f"/var/run/dpdk/{name}", ignore_errors=True)


def tel_fwd(sock_path):
    """Sum of switch forwards from telemetry, and the wall time of the reading."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(sock_path)
    s.recv(65536)
    s.send(b"/rocelab/switches")
    t = json.loads(s.recv(1 << 20))["/rocelab/switches"]
    s.close()
    col = t.pop("columns").index("fwd_pkts")
    return sum(v[col] for v in t.values()), time.monotonic()


def cpu_s(pid, thread=None):
    """CPU seconds (user + system) of a process, or of its threads whose name
    starts with `thread`, from /proc (counts work: not disturbed by the noise of
    a shared machine the way rates are)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    tasks = os.listdir(f"/proc/{pid}/task") if thread else [None]
    for t in tasks:
        base = f"/proc/{pid}/task/{t}" if t else f"/proc/{pid}"
        try:
            with open(f"{base}/comm") as f:
                comm = f.read().strip()
            with open(f"{base}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if thread is None or comm.startswith(thread):
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def phase(sock_path, seconds, dp_pid, dash_pid):
    """(M switch forwards/s, CPU ms/s of rocelab-dp's telemetry thread, of the dashboard)."""
    c0, d0 = cpu_s(dp_pid, TEL_THREAD), cpu_s(dash_pid) if dash_pid else 0.0
    f0, t0 = tel_fwd(sock_path)
    time.sleep(seconds)
    f1, t1 = tel_fwd(sock_path)
    c1, d1 = cpu_s(dp_pid, TEL_THREAD), cpu_s(dash_pid) if dash_pid else 0.0
    return (f1 - f0) / (t1 - t0) / 1e6, 1e3 * (c1 - c0) / (t1 - t0), 1e3 * (d1 - d0) / (t1 - t0)


def bench_dashboard(build, tmp, phase_s):
    dp = os.path.join(build, "dataplane", "rocelab-dp")
    topo = os.path.join(tmp, "live.yaml")
    subprocess.run([PY, os.path.join(HERE, "gen_clos.py"), *map(str, LIVE), topo], check=True)
    name = f"rlviz-bench-{os.getpid()}-live"
    n = LIVE[1] * LIVE[2]
    gens = [f"h{i}>h{(i + n // 2) % n}:rate=100G,size=1000,count=4000000000" for i in range(0, n, 8)]
    cmd = [dp, "--topology", topo, "--clock", "live", "--duration", f"{phase_s * 6 + 30}s",
           "--name", name]
    for g in gens:
        cmd += ["--gen", g]
    dpp = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = f"/var/run/dpdk/{name}/dpdk_telemetry.v2"
    dash = None
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.2)
        time.sleep(2)  # the fabric is built, the generators are running
        print(f"== dashboard refresh cost: live fabric {LIVE[0]} spines x {LIVE[1]} leaves x "
              f"{LIVE[2]} net_null hosts, {len(gens)} generators; {phase_s} s per phase, one run")
        res = []
        for label, interval in (("without", None), ("dashboard, 1 s", 1.0),
                                ("dashboard, 0.1 s", 0.1), ("without", None)):
            if interval:
                dash = subprocess.Popen([PY, os.path.join(SRC, "scripts", "dashboard.py"),
                                         "--socket", sock, "--topology", topo, "--port", "0",
                                         "--topo-tool", topo_tool(build),
                                         "--interval", str(interval)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1)
            res.append((label, *phase(sock, phase_s, dpp.pid, dash.pid if dash else None)))
            if dash:
                dash.terminate()
                dash.wait()
                dash = None
        scrape = best_time([PY, os.path.join(SRC, "scripts", "exporter.py"), "--socket", sock,
                            "--topology", topo, "--once",
                            "--topo-tool", topo_tool(build)])
        ref = (res[0][1] + res[-1][1]) / 2  # without, before and after
        for label, mpps, tel_ms, dash_ms in res:
            print(f"  {label:17s} {mpps:6.3f} M switch forwards/s   ratio to without (mean of both) "
                  f"{mpps / ref:5.3f}   CPU ms/s: telemetry thread {tel_ms:5.1f}, dashboard "
                  f"{dash_ms:5.1f}")
        print(f"== exporter: one scrape of that fabric (exporter.py --once, process start "
              f"included; one queues query per link), best of {REPEAT}: {scrape:.2f} s")
    finally:
        if dash:
            dash.terminate()
            dash.wait()
        stop_dp(dpp, name)


def nics_scrape(build, topo, name):
    """Best time of exporter.py --once on an idle live fabric of emulated hosts,
    and the rows of one whole /rocelab/nics reply."""
    dp = os.path.join(build, "dataplane", "rocelab-dp")
    dpp = subprocess.Popen([dp, "--topology", topo, "--clock", "live", "--duration", "120s",
                            "--name", name, "--quiet"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = f"/var/run/dpdk/{name}/dpdk_telemetry.v2"
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.2)
        time.sleep(2)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(5)
        s.connect(sock)
        s.recv(65536)
        s.send(b"/rocelab/nics")
        rows = len(json.loads(s.recv(1 << 20))["/rocelab/nics"]) - 1
        s.close()
        return best_time([PY, os.path.join(SRC, "scripts", "exporter.py"), "--socket", sock,
                          "--topology", topo, "--once", "--topo-tool", topo_tool(build)]), rows
    finally:
        stop_dp(dpp, name)


def bench_nics(build, tmp):
    big = os.path.join(tmp, "nics.yaml")
    subprocess.run([PY, os.path.join(HERE, "gen_clos.py"), *map(str, NICS_BIG), big], check=True)
    with open(big) as f:
        text = f.read().replace("attach: net_null", "attach: emulated")
    with open(big, "w") as f:
        f.write(text)
    small = os.path.join(SRC, "tests", "dataplane", "data", "emulated.yaml")
    t_small, r_small = nics_scrape(build, small, f"rlviz-bench-{os.getpid()}-nics4")
    t_big, r_big = nics_scrape(build, big, f"rlviz-bench-{os.getpid()}-nics")
    n = NICS_BIG[1] * NICS_BIG[2]
    print(f"== exporter with emulated NICs: one scrape (--once, process start included), best of {REPEAT}")
    print(f"  4 emulated hosts   {t_small:5.2f} s   (whole /rocelab/nics reply: {r_small} rows)")
    print(f"  {n} emulated hosts {t_big:5.2f} s   (whole reply: {r_big} rows; {n - r_big} asked one by one)"
          f"   ratio {t_big / t_small:5.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", help="the meson build folder")
    ap.add_argument("--phase-seconds", type=int, default=10)
    ap.add_argument("--skip-draw", action="store_true", help="no drawing part")
    ap.add_argument("--only-nics", action="store_true", help="only part 4 (emulated NICs)")
    a = ap.parse_args()
    if os.environ.get("ROCELAB_IN_NETNS") != "1":
        if os.geteuid() != 0:
            print("bench_viz.py: needs root (a private network namespace)", file=sys.stderr)
            return 2
        os.environ["ROCELAB_IN_NETNS"] = "1"
        return subprocess.run(["unshare", "--net", "--", PY, *sys.argv]).returncode
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    build = os.path.abspath(a.build)
    tmp = tempfile.mkdtemp(prefix="rlviz-bench-")
    try:
        if not (a.skip_draw or a.only_nics):
            bench_draw(build, tmp)
        if not a.only_nics:
            bench_dashboard(build, tmp, a.phase_seconds)
        bench_nics(build, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
