#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Live dashboard of a running rocelab-dp: a read-only web page on 127.0.0.1.

  scripts/dashboard.py --name rocelab-lab --topology topologies/default.yaml
  # then open http://127.0.0.1:9470/

It draws the fabric by tier (as rocelab-viz does) and, every --interval
(1 s), reads /rocelab/{info,links,pfc,switches,drops} from the fabric's DPDK
telemetry socket and repaints: each link direction coloured by its
utilisation over the last interval (busy time / elapsed time: wall time on
the live clock, fabric time on the virtual one) on a square-root scale (2% is
told from idle; idle links have a colour of their own; a legend says which), its rate in Gbit/s and queue in the tooltip, a pause mark while
its sender is paused, a drop mark when it dropped in the interval.

The status line says how the fabric keeps up: red, with the lag in words, when
the live clock is behind real time by more than --lag-limit (0.1 s, as
rocelab-dp --lag-policy stop); amber when it caught up but fell behind that far
before, or when the packet pool is more than POOL_WARN full. It shows the
run's own elapsed time (not the clock's absolute time), the packet pool's use
(mbufs in use of all), and the rate the hosts send into the fabric in Gbit/s.

Below, a table of switch counters (forwarded, PFC
received, ECN marks, bytes in the buffer, drops by reason); with emulated
hosts (attach: emulated), a table of their NICs' counters from /rocelab/nics
(frames sent and received, retransmits, timeouts, NAKs, CNPs) for the first
NIC_ROWS_MAX of them, so a large fabric's refresh stays cheap.

--name is the fabric's DPDK file prefix: `rocelab-dp --name N` (N), or a
`scripts/fabric.sh up N` fabric (N or rocelab-N). The server listens on
127.0.0.1 only, answers GET / and GET /api/state, and sends the fabric only
query commands. The page is one HTML file with its own small inline script:
nothing is fetched from anywhere else. Exit 2 on bad arguments or topology.
"""

import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools", "rocelab-viz-lib"))

import rllayout  # noqa: E402
import rlserve  # noqa: E402
import rltel  # noqa: E402
from rlsvg import color_js, scene_svg  # noqa: E402

DEFAULT_PORT = 9470
INTERVAL_MIN, INTERVAL_MAX = 0.05, 3600.0  # seconds between readings
LAG_LIMIT_S = 0.1   # behind real time by more than this: status red (rocelab-dp's stop default)
POOL_WARN = 0.9     # packet pool fuller than this share: status amber (near running dry)
NS_PER_S = 1e9
NIC_ROWS_MAX = 64  # emulated hosts in the NIC table (each refresh reads them)
# the NIC table's columns after the host: (/rocelab/nics column, heading)
NIC_COLS = [("sent_pkts", "sent"), ("rcvd_pkts", "received"), ("retrans_pkts", "retransmits"),
            ("timeouts", "timeouts"), ("naks_sent", "NAKs sent"), ("naks_rcvd", "NAKs rcvd"),
            ("cnp_rcvd", "CNPs rcvd")]


class Poller:
    """Reads the fabric every interval on its own thread and keeps the latest
    state as JSON for the page: per drawn line [util, queue, paused, drops in
    the interval, up], switch rows, totals."""

    def __init__(self, tel, topo, scene, interval, lag_limit_s=LAG_LIMIT_S):
        self.tel, self.topo, self.scene, self.interval = tel, topo, scene, interval
        self.lag_limit_ns = int(lag_limit_s * NS_PER_S)
        self.prev, self.state, self.polls = None, {"ok": False, "error": "no reading yet"}, 0
        self.lock, self.stop = threading.Lock(), threading.Event()
        self.nic_hosts = rltel.emulated_hosts(topo)[:NIC_ROWS_MAX]

    def _span_ns(self, snap):
        """Time between this reading and the previous one: wall time on the live
        clock (where fabric ns are wall ns), fabric time on the virtual clock."""
        prev = self.prev
        if prev is None:
            return 0
        if snap["info"].get("clock") == "live":
            return snap["wall_ns"] - prev["wall_ns"]
        return snap["info"].get("now_ns", 0) - prev["info"].get("now_ns", 0)

    def _gbps(self, snap, link, span):
        """Link direction `link`'s rate over the interval, Gbit/s (bits per ns)."""
        c = snap["links"].get(link, {})
        p = self.prev["links"].get(link, c) if self.prev else c
        return 8 * (c.get("tx_bytes", 0) - p.get("tx_bytes", 0)) / span if span > 0 else 0.0

    def _lines(self, snap):
        prev, span = self.prev, self._span_ns(snap)
        out = []
        for ln in self.scene.lines:
            vals = []
            for m in ln.members:
                c = snap["links"].get(m, {})
                p = prev["links"].get(m, c) if prev else c
                busy = c.get("busy_ns", 0) - p.get("busy_ns", 0)
                vals.append((min(1.0, busy / span) if span > 0 else 0.0, c.get("queue_bytes", 0),
                             c.get("paused_mask", 0), c.get("drops", 0) - p.get("drops", 0),
                             c.get("up", 1), self._gbps(snap, m, span)))
            # an aggregated line (racks, groups) shows its busiest member, as rocelab-viz does
            out.append([round(max(v[0] for v in vals), 4), max(v[1] for v in vals),
                        int(any(v[2] for v in vals)), sum(v[3] for v in vals),
                        int(all(v[4] for v in vals)), round(max(v[5] for v in vals), 4)])
        return out

    def _status(self, info):
        """[level, words]: "behind" (red) while the live clock lags real time by
        more than the limit; "warn" (amber) when it did before, or the pool is
        nearly full; else "ok"."""
        lag, worst = info.get("lag_ns", 0), info.get("lag_max_ns", 0)
        limit = self.lag_limit_ns
        used, size = info.get("mbufs_in_use", 0), info.get("mbufs_total", 0)
        if info.get("clock") == "live" and lag > limit:
            return ["behind", f"BEHIND real time by {words_ns(lag)} (limit {words_ns(limit)}; "
                              "link rates and utilisation are of the fabric's late time)"]
        if info.get("clock") == "live" and worst > limit:
            return ["warn", f"ok now (lag {words_ns(lag)}), but fell behind real time by up to "
                            f"{words_ns(worst)} (limit {words_ns(limit)})"]
        if size and used > POOL_WARN * size:
            return ["warn", f"packet pool {100 * used / size:.0f}% full: near running dry"]
        if info.get("clock") == "live":
            return ["ok", f"ok: keeps up with real time (lag {words_ns(lag)})"]
        return ["ok", "ok (virtual clock: no real-time lag)"]

    def _switches(self, snap):
        rows = []
        for name in self.topo.switches():
            s, d = snap["switches"].get(name, {}), snap["drops"].get(name, {})
            why = " ".join(f"{k}={v}" for k, v in d.items() if v)
            rows.append([name, s.get("fwd_pkts", 0), s.get("pfc_rx", 0), s.get("ecn_marked", 0),
                         s.get("buffer_bytes", 0), s.get("drops", 0), why, s.get("up", 1)])
        return rows

    def _nics(self):
        rows = rltel.nics(self.tel, self.topo, self.nic_hosts)
        return [[h] + [rows[h].get(c, 0) for c, _ in NIC_COLS] for h in self.nic_hosts if h in rows]

    def poll_once(self):
        try:
            snap = rltel.snapshot(self.tel, self.topo)
            info, span = snap["info"], self._span_ns(snap)
            hosts_in = sum(self._gbps(snap, f"{h}>{leaf}", span)
                           for h, leaf in self.topo.host_leaf.items())
            state = {"ok": True, "info": info, "lines": self._lines(snap),
                     "switches": self._switches(snap), "nics": self._nics(),
                     "tx_pkts": sum(c.get("tx_pkts", 0) for c in snap["links"].values()),
                     "pfc_tx": sum(c.get("pfc_tx", 0) for c in snap["links"].values()),
                     "status": self._status(info), "elapsed": (words_ns(info["elapsed_ns"]) if "elapsed_ns" in info
                                 else "unknown (rocelab-dp without elapsed_ns)"),
                     "lag_ns": info.get("lag_ns", 0), "gbps_in": round(hosts_in, 4),
                     "pool": pool_words(info)}
            self.prev = snap
        except rltel.TelError as e:
            state = {"ok": False, "error": str(e)}
        with self.lock:
            self.polls += 1
            state["polls"] = self.polls
            self.state = state

    def run(self):
        while not self.stop.is_set():
            t0 = time.monotonic()
            self.poll_once()
            self.stop.wait(max(0.0, self.interval - (time.monotonic() - t0)))

    def json(self):
        with self.lock:
            return json.dumps(self.state, separators=(",", ":")).encode()


def words_ns(ns):
    """A time in words: '2.6 s', '350 ms', '12 us', '0 s'."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}" if ns < 100 * scale else f"{ns / scale:.0f} {unit}"
    return f"{ns:.0f} ns" if ns else "0 s"


def pool_words(info):
    """The packet pool's use: 'N of M mbufs (P%)', or 'unknown' from an older rocelab-dp."""
    used, size = info.get("mbufs_in_use"), info.get("mbufs_total")
    if used is None or not size:
        return "unknown"
    return f"{used} of {size} mbufs ({100 * used / size:.1f}%)"


SCRIPT = """
const RL_REFRESH_MS=%d;let rlRefreshes=0;
function rlText(id,t){document.getElementById(id).textContent=t;}
function rlShow(s){rlRefreshes++;document.body.dataset.refreshes=rlRefreshes;
const st=document.getElementById('rl-status');
if(!s.ok){st.className='behind';rlText('rl-status','no reading: '+s.error);return;}
st.className=s.status[0];st.dataset.lagNs=s.lag_ns;rlText('rl-status',s.status[1]);
rlText('rl-clock',s.info.clock);rlText('rl-elapsed',s.elapsed);rlText('rl-pool',s.pool);
rlText('rl-gbps',s.gbps_in.toFixed(3));rlText('rl-tx',s.tx_pkts);rlText('rl-pfc',s.pfc_tx);
s.lines.forEach((v,i)=>rlPaint('live',i,{util:v[0],queue:v[1],paused:v[2],drops:v[3],up:v[4],gbps:v[5]}));
s.switches.forEach(r=>{const tr=document.querySelector('tr[data-switch="'+r[0]+'"]');if(!tr)return;
const c=tr.children;for(let k=1;k<7;k++)c[k].textContent=r[k];tr.className=r[7]?'':'down';});
s.nics.forEach(r=>{const tr=document.querySelector('tr[data-nic="'+r[0]+'"]');if(!tr)return;
const c=tr.children;for(let k=1;k<r.length;k++)c[k].textContent=r[k];});}
async function rlTick(){try{const r=await fetch('/api/state',{cache:'no-store'});rlShow(await r.json());}
catch(e){rlText('rl-status','dashboard server unreachable');}setTimeout(rlTick,RL_REFRESH_MS);}
rlTick();
"""


def nic_table(topo):
    """The emulated NICs' table (empty without emulated hosts)."""
    from html import escape
    hosts = rltel.emulated_hosts(topo)
    if not hosts:
        return ""
    shown = hosts[:NIC_ROWS_MAX]
    zeros = "<td>0</td>" * len(NIC_COLS)
    rows = "".join(f'<tr data-nic="{escape(h)}"><td>{escape(h)}</td>{zeros}</tr>' for h in shown)
    heads = "".join(f"<th>{escape(t)}</th>" for _, t in NIC_COLS)
    more = f" (the first {len(shown)} of {len(hosts)})" if len(shown) < len(hosts) else ""
    return (f'<h3 style="font-size:14px">emulated NICs{more}</h3>'
            f'<table id="rl-nics"><tr><th>host</th>{heads}</tr>{rows}</table>')


def page(topo, scene, interval):
    from html import escape
    js, legend = color_js()
    rows = "".join(f'<tr data-switch="{escape(s)}"><td>{escape(s)}</td><td>0</td><td>0</td>'
                   f'<td>0</td><td>0</td><td>0</td><td></td></tr>' for s in topo.switches())
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>rocelab live: {escape(topo.name)}</title>
<link rel="icon" href="data:,">
<style>body{{font-family:sans-serif;margin:12px}} table{{border-collapse:collapse;font-size:12px}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}} td:first-child{{text-align:left}}
tr.down{{color:#999}} .legend{{font-size:12px;margin:6px 0}}
#rl-status{{padding:1px 5px}} #rl-status.ok{{color:#1a7f37}} #rl-status.warn{{background:#ffd966}}
#rl-status.behind{{background:#d62728;color:#fff}}</style></head><body>
<h2 style="font-size:16px">rocelab live: {escape(topo.name)}</h2>
<div>status <b id="rl-status">loading</b></div>
<div>clock <span id="rl-clock">?</span> &middot; run time <span id="rl-elapsed">?</span> &middot;
packet pool <span id="rl-pool">?</span> &middot; hosts send <b id="rl-gbps">0</b> Gbit/s &middot;
packets sent on all links <b id="rl-tx">0</b> &middot; PFC frames <span id="rl-pfc">0</span>
&middot; refresh every {interval:g} s (read-only)</div>
{legend}
{scene_svg(scene, "live")}
<table><tr><th>switch</th><th>forwarded</th><th>PFC rx</th><th>ECN marked</th><th>buffer B</th><th>drops</th>
<th>drops by reason</th></tr>{rows}</table>
{nic_table(topo)}
<script>{js}{SCRIPT % int(interval * 1000)}</script></body></html>
""".encode()


def parse_args(argv):
    ap = rlserve.arg_parser(__doc__, DEFAULT_PORT, rlserve.default_topo_tool(HERE))
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between readings (1)")
    ap.add_argument("--lag-limit", type=float, default=LAG_LIMIT_S,
                    help=f"seconds behind real time that turn the status red ({LAG_LIMIT_S:g})")
    a = ap.parse_args(argv)
    rlserve.check_port(ap, a)
    if not INTERVAL_MIN <= a.interval <= INTERVAL_MAX:
        ap.error(f"--interval={a.interval}: must be {INTERVAL_MIN}..{INTERVAL_MAX} seconds")
    if not 0 < a.lag_limit <= INTERVAL_MAX:
        ap.error(f"--lag-limit={a.lag_limit}: must be more than 0 and at most {INTERVAL_MAX:g} seconds")
    return a


def main(argv):
    a = parse_args(argv)
    fabric = rlserve.open_fabric("dashboard", a)
    if fabric is None:
        return 2
    topo, tel = fabric
    scene = rllayout.scene_build(topo)
    poller = Poller(tel, topo, scene, a.interval, a.lag_limit)
    html = page(topo, scene, a.interval)
    threading.Thread(target=poller.run, daemon=True).start()
    routes = {"/": lambda h: (html, "text/html; charset=utf-8"),
              "/api/state": lambda h: (poller.json(), "application/json")}
    rc = rlserve.serve("dashboard", a.port, routes, f"{topo.name}, {tel.path}")
    poller.stop.set()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
