#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Honest live views (issue 39, item 8), against a fake fabric: a telemetry
socket served by this test (DPDK's protocol: a greeting, then one JSON reply
per command) with the numbers the test chooses, so each behaviour is checked
without DPDK or root:
  - dashboard: behind real time by 2.6 s, the status is "behind" (red) and says
    the lag in words; caught up after a lag over the limit: amber; else ok;
    the run's elapsed time is shown, not the live clock's absolute time; the
    packet pool's use; a link's rate in Gbit/s;
  - the same in headless Chromium: the status element's class and words, and
    the stroke of a link at 2% load is not the idle colour, far from it;
  - the colour scale: 2% is far from idle and from the least load, 20% from 50%,
    in rlpicture and on the page;
  - exporter --once: rocelab_lag_seconds, the packet pool, the elapsed time and
    rocelab_link_tx_rate_bytes_per_second with the fake's numbers; promtool passes;
  - rocelab-viz, two runs of different lengths with the same busy time: the
    same data-util and colour over the common time base; different ones with
    --time-base own, and then the title says so; on the time slider, past the
    shorter run's end, its panel says the run ended.

usage: test_views.py ROCELAB_TOPO ROCELAB_VIZ SOURCE_ROOT
"""

import html.parser
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

TOPO_TOOL, VIZ, SRC = sys.argv[1:4]
PY = "/usr/bin/python3"
TOPO = os.path.join(SRC, "tests", "viz", "live-null.yaml")
LINK_GBPS = 10            # live-null.yaml's host links
LAG_NS = 2_600_000_000    # the 2.6 s
ELAPSED_NS = 42_500_000_000
CLOCK_NS = 531_469_000_000_000  # an absolute live clock (the TSC since boot)
POOL = (1234, 8191)
LOADS = {"h0>leaf0": 0.02, "leaf0>spine0": 0.5}  # the rest idle
TIMEOUT = 60
SVG_NS = "{http://www.w3.org/2000/svg}"
results = {"pass": 0, "fail": 0}
sys.path.insert(0, os.path.join(SRC, "tools", "rocelab-viz-lib"))


def check(name, ok):
    results["pass" if ok else "fail"] += 1
    print(("ok - " if ok else "not ok - ") + name, flush=True)
    return ok


class FakeFabric:
    """A telemetry socket answering /rocelab/* like rocelab-dp: link counters
    grow with real time at LOADS (busy share, bytes at LINK_GBPS), info says
    what self.info holds."""

    LINK_COLS = ["up", "tx_pkts", "tx_bytes", "busy_ns", "queue_bytes", "pfc_tx", "paused_mask", "drops"]

    def __init__(self, path, links):
        self.path, self.links, self.t0 = path, links, time.monotonic_ns()
        self.info = {"topology": "fake", "clock": "live", "now_ns": CLOCK_NS, "events": 7,
                     "start_ns": CLOCK_NS - ELAPSED_NS, "elapsed_ns": ELAPSED_NS,
                     "lag_ns": LAG_NS, "lag_max_ns": LAG_NS, "mbufs_in_use": POOL[0],
                     "mbufs_total": POOL[1], "route_changes": 0, "commands_applied": 0}
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.srv.bind(path)
        self.srv.listen(8)
        self.stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _row(self, key):
        busy = int(LOADS.get(key, 0) * (time.monotonic_ns() - self.t0))
        nbytes = busy * LINK_GBPS // 8
        return [1, nbytes // 1000, nbytes, busy, 0, 0, 0, 0]

    def reply(self, cmd):
        name = cmd.split(",")[0]
        if name == "/rocelab/info":
            return self.info
        if name == "/rocelab/links":
            t = {"columns": self.LINK_COLS}
            for a, b in self.links:
                t[f"{a}_to_{b}"] = self._row(f"{a}>{b}")
            return t
        return {"columns": ["x"]}  # every other table: no rows

    def _serve(self, conn):
        with conn:
            conn.send(json.dumps({"version": "fake", "pid": os.getpid(), "max_output_len": 16384}).encode())
            while not self.stop:
                try:
                    cmd = conn.recv(1024).decode()
                except OSError:
                    return
                if not cmd:
                    return
                conn.send(json.dumps({cmd.split(",")[0]: self.reply(cmd)}).encode())

    def _accept(self):
        while not self.stop:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def close(self):
        self.stop = True
        self.srv.close()


def topo_links():
    d = json.loads(subprocess.run([TOPO_TOOL, "--json", TOPO], capture_output=True, text=True,
                                  timeout=TIMEOUT, check=True).stdout)
    out = []
    for lk in d["links"]:
        a, b = lk["ends"]
        out += [(a, b), (b, a)]
    return out


def load_dashboard():
    spec = importlib.util.spec_from_file_location("dashboard", os.path.join(SRC, "scripts", "dashboard.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rgb(text):
    """'#rrggbb' or 'rgb(r,g,b)' as a tuple."""
    if text.startswith("#"):
        return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5))
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def dist(a, b):
    return sum((x - y) ** 2 for x, y in zip(rgb(a), rgb(b))) ** 0.5


def poller_cases(fake):
    """The dashboard's state, read by its own Poller from the fake fabric."""
    dash = load_dashboard()
    import rllayout
    import rltel
    topo = rllayout.topo_load(TOPO, TOPO_TOOL)
    scene = rllayout.scene_build(topo)
    poller = dash.Poller(rltel.Telemetry(fake.path), topo, scene, 0.2)
    poller.poll_once()
    time.sleep(0.3)
    poller.poll_once()
    s = json.loads(poller.json())
    st = s.get("status", ["", ""])
    check(f"dashboard: 2.6 s behind real time: status 'behind' with the lag in words ({st})",
          st[0] == "behind" and "2.6 s" in st[1])
    check(f"dashboard: the run's elapsed time ({s.get('elapsed')}), not the clock's absolute time",
          s.get("elapsed") == "42.5 s" and "531469" not in json.dumps({k: v for k, v in s.items() if k != "info"}))
    check(f"dashboard: the packet pool's use ({s.get('pool')})", s.get("pool") == "1234 of 8191 mbufs (15.1%)")
    keys = [ln.key for ln in scene.lines]
    line = s["lines"][keys.index("h0>leaf0")] if "h0>leaf0" in keys else [0] * 6
    want = LOADS["h0>leaf0"] * LINK_GBPS
    check(f"dashboard: h0>leaf0 at {want} Gbit/s ({line[5]}) and util {line[0]}",
          abs(line[5] - want) < 0.15 * want and abs(line[0] - 0.02) < 0.003)
    fake.info["lag_ns"] = 0
    poller.poll_once()
    st = json.loads(poller.json())["status"]
    check(f"dashboard: caught up after a lag over the limit: 'warn' and the worst lag ({st})",
          st[0] == "warn" and "2.6 s" in st[1])
    fake.info["lag_max_ns"] = 0
    poller.poll_once()
    st = json.loads(poller.json())["status"]
    check(f"dashboard: no lag: status ok ({st})", st[0] == "ok")
    fake.info["lag_ns"] = fake.info["lag_max_ns"] = LAG_NS  # as it was, for the page


class Dom(html.parser.HTMLParser):
    """The dumped page: the status element, texts by id, line strokes by link."""

    def __init__(self):
        super().__init__()
        self.attrs, self.text, self.stroke, self.util, self._id = {}, {}, {}, {}, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._id = a.get("id")
        if self._id:
            self.attrs[self._id] = a
        if tag == "line" and a.get("class") == "ln":
            self.stroke[a["data-link"]] = a.get("stroke", "")
            self.util[a["data-link"]] = float(a.get("data-util", "nan"))

    def handle_data(self, d):
        if self._id:
            self.text[self._id] = self.text.get(self._id, "") + d

    def handle_endtag(self, tag):
        self._id = None


def chromium_dom(tmp, url):
    ud = tempfile.mkdtemp(prefix="chromium-", dir=tmp)
    p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", f"--user-data-dir={ud}", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=3000", "--dump-dom", url],
                       capture_output=True, text=True, timeout=90)
    shutil.rmtree(ud, ignore_errors=True)
    return p.stdout, [ln for ln in p.stderr.splitlines() if "CONSOLE(" in ln or "Uncaught" in ln]


def page_cases(tmp, fake):
    """The dashboard server and its page in headless Chromium."""
    import rlpicture
    out = os.path.join(tmp, "dash.out")
    with open(out, "w") as f:
        dash = subprocess.Popen([PY, os.path.join(SRC, "scripts", "dashboard.py"), "--socket", fake.path,
                                 "--topology", TOPO, "--topo-tool", TOPO_TOOL, "--port", "0",
                                 "--interval", "0.2"], stdout=f, stderr=subprocess.STDOUT)
    try:
        url = None
        for _ in range(100):
            m = re.search(r"(http://127\.0\.0\.1:\d+/)", open(out).read())
            if m:
                url = m.group(1)
                break
            time.sleep(0.1)
        time.sleep(1.0)  # two readings at least: utilisation needs an interval
        dom, errors = chromium_dom(tmp, url) if url else ("", ["no URL"])
    finally:
        dash.terminate()
        dash.wait(timeout=TIMEOUT)
    p = Dom()
    p.feed(dom)
    st = p.attrs.get("rl-status", {})
    words = p.text.get("rl-status", "")
    check(f"page: no console error ({errors[:2]})", dom and not errors)
    check(f"page: status red (class {st.get('class')}) with the lag in words ({words})",
          st.get("class") == "behind" and "BEHIND real time by 2.6 s" in words)
    check(f"page: the run's elapsed time ({p.text.get('rl-elapsed')}) and the pool "
          f"({p.text.get('rl-pool')})", p.text.get("rl-elapsed") == "42.5 s"
          and p.text.get("rl-pool", "").startswith("1234 of 8191") and "531469" not in dom)
    busy, idle = p.stroke.get("h0>leaf0", ""), p.stroke.get("h1>leaf0", "")
    check(f"page: h1>leaf0 sent nothing: the idle colour ({idle})",
          idle.lower() == rlpicture.IDLE_COLOR)
    check(f"page: h0>leaf0 at {p.util.get('h0>leaf0')}: its colour {busy} is far from idle {idle}",
          busy and idle and abs(p.util.get("h0>leaf0", 0) - 0.02) < 0.003 and dist(busy, idle) > 80)
    check("page: the legend shows the idle colour and the scale's 2% tick",
          rlpicture.IDLE_COLOR in dom and ">2%<" in dom)


def scale_cases():
    import rlpicture
    idle, least, two, fifth, half = (rlpicture.util_color(u) for u in (0.0, 0.0001, 0.02, 0.2, 0.5))
    check(f"scale: 2% ({two}) is far from idle ({idle})", dist(two, idle) > 80)
    check(f"scale: 2% ({two}) is told from the least load ({least}) and from 50% ({half})",
          dist(two, least) > 35 and dist(two, half) > 60)
    check(f"scale: busy links keep their contrast: 20% ({fifth}) against 50% ({half})",
          dist(fifth, half) > 90)


def exporter_cases(tmp, fake):
    p = subprocess.run([PY, os.path.join(SRC, "scripts", "exporter.py"), "--socket", fake.path,
                        "--topology", TOPO, "--topo-tool", TOPO_TOOL, "--once"],
                       capture_output=True, text=True, timeout=TIMEOUT)
    text = p.stdout
    vals = {}
    for ln in text.splitlines():
        if ln and not ln.startswith("#"):
            k, v = ln.rsplit(" ", 1)
            vals[k] = float(v)
    check(f"exporter --once: exit 0 ({p.stderr.strip()[:200]})", p.returncode == 0)
    check(f"exporter: rocelab_lag_seconds {vals.get('rocelab_lag_seconds')} = 2.6",
          abs(vals.get("rocelab_lag_seconds", -1) - LAG_NS / 1e9) < 1e-9)
    check("exporter: the packet pool: in use, size, ratio",
          vals.get("rocelab_packet_pool_in_use") == POOL[0] and vals.get("rocelab_packet_pool_size") == POOL[1]
          and abs(vals.get("rocelab_packet_pool_use_ratio", -1) - POOL[0] / POOL[1]) < 1e-9)
    check(f"exporter: rocelab_run_elapsed_seconds {vals.get('rocelab_run_elapsed_seconds')} = 42.5",
          vals.get("rocelab_run_elapsed_seconds") == ELAPSED_NS / 1e9)
    rate = vals.get('rocelab_link_tx_rate_bytes_per_second{link="h0>leaf0"}', -1)
    want = LOADS["h0>leaf0"] * LINK_GBPS * 1e9 / 8
    check(f"exporter: h0>leaf0 at {rate:.0f} B/s = {want:.0f} within 15%, h1>leaf0 at 0",
          abs(rate - want) < 0.15 * want
          and vals.get('rocelab_link_tx_rate_bytes_per_second{link="h1>leaf0"}') == 0)
    path = os.path.join(tmp, "metrics.txt")
    with open(path, "w") as f:
        f.write(text)
    with open(path) as f:
        pc = subprocess.run(["promtool", "check", "metrics"], stdin=f, capture_output=True, text=True,
                            timeout=TIMEOUT)
    check(f"exporter: promtool check metrics passes ({pc.stdout.strip()[:200]})", pc.returncode == 0)


CSV_HEAD = "time_ns,link,from,to,up,util,queue_bytes,paused_mask,tx_pkts,tx_bytes,pfc_tx,drops\n"
PIC_LINKS = [("l0", "h0", "leaf0"), ("l0", "leaf0", "h0"), ("l1", "h1", "leaf0"), ("l1", "leaf0", "h1"),
             ("l2", "leaf0", "spine0"), ("l2", "spine0", "leaf0")]


def write_run(path, samples, busy_samples):
    """A CSV of `samples` 100 us samples; h0>leaf0 100% busy in the first busy_samples."""
    with open(path, "w") as f:
        f.write(CSV_HEAD)
        for i in range(samples):
            t = (i + 1) * 100_000
            for link, a, b in PIC_LINKS:
                u = 1.0 if (a, b) == ("h0", "leaf0") and i < busy_samples else 0.0
                nbytes = min(i + 1, busy_samples) * 12500 if (a, b) == ("h0", "leaf0") else 0
                f.write(f"{t},{link},{a},{b},1,{u:.4f},0,0x00,{nbytes // 1000},{nbytes},0,0\n")


def svg_h0(path):
    """{panel's run name: (data-util, stroke colour)} of h0>leaf0 in an SVG."""
    out = {}
    for g in ET.parse(path).iter(SVG_NS + "g"):
        if g.get("class") == "rlviz-link" and g.get("data-link") == "h0>leaf0":
            m = re.search(r"stroke:\s*(#[0-9a-f]{6})", ET.tostring(g).decode())
            out[g.get("data-run").split(":")[0]] = (float(g.get("data-util")), m.group(1) if m else "")
    return out


def picture_cases(tmp):
    """Two runs, 1 ms and 2 ms long, the same 0.5 ms of sending on h0>leaf0."""
    short, long_ = os.path.join(tmp, "short.csv"), os.path.join(tmp, "long.csv")
    write_run(short, 10, 5)
    write_run(long_, 20, 5)
    svg = os.path.join(tmp, "cmp.svg")
    p = subprocess.run([VIZ, short, long_, "--svg", svg], capture_output=True, text=True, timeout=TIMEOUT)
    got = svg_h0(svg) if p.returncode == 0 else {}
    s, lg = got.get("short", (-1, "")), got.get("long", (-2, ""))
    check(f"picture, common time base: the same busy time, the same util and colour ({got})",
          s[0] == lg[0] == 0.25 and s[1] and s[1] == lg[1])
    text = open(svg).read() if p.returncode == 0 else ""
    check("picture, common time base: each panel says its window and its own length",
          "busy share of 2.000 ms (this run: 1.000 ms)" in text and "busy time over 2.000 ms, the longest run" in text)
    page = os.path.join(tmp, "cmp.html")
    p = subprocess.run([VIZ, short, long_, "--html", page], capture_output=True, text=True, timeout=TIMEOUT)
    dom, errors = chromium_dom(tmp, f"file://{page}#sample=14") if p.returncode == 0 else ("", ["exit"])
    d = Dom()
    d.feed(dom)
    t0, t1 = d.text.get("rl-time0", ""), d.text.get("rl-time1", "")
    check(f"slider past the short run's end: it says so ({t0}), the long run goes on ({t1})",
          not errors and t0 == "run ended at 1.000 ms" and t1 == "t = 1.500 ms")
    p = subprocess.run([VIZ, short, long_, "--svg", svg, "--time-base", "own"], capture_output=True,
                       text=True, timeout=TIMEOUT)
    got = svg_h0(svg) if p.returncode == 0 else {}
    s, lg = got.get("short", (-1, "")), got.get("long", (-2, ""))
    text = open(svg).read() if p.returncode == 0 else ""
    check(f"picture, --time-base own: each its own mean, and the title says so ({got})",
          s[0] == 0.5 and lg[0] == 0.25 and s[1] != lg[1] and "mean over its own run length" in text)


def main():
    tmp = tempfile.mkdtemp(prefix="rlviews-")
    fake = None
    try:
        scale_cases()
        picture_cases(tmp)
        fake = FakeFabric(os.path.join(tmp, "tel.sock"), topo_links())
        poller_cases(fake)
        exporter_cases(tmp, fake)
        page_cases(tmp, fake)
    finally:
        if fake:
            fake.close()
        shutil.rmtree(tmp, ignore_errors=True)
    check("nothing left in /tmp", not os.path.exists(tmp))
    print(f"{results['pass']} passed, {results['fail']} failed")
    return 1 if results["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
