#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prometheus exporter for a running rocelab-dp, on 127.0.0.1.

  scripts/exporter.py --name rocelab-lab --topology topologies/default.yaml
  curl http://127.0.0.1:9471/metrics

Every scrape reads the fabric's DPDK telemetry (/rocelab/info, links, pfc,
queues per link, switches, drops, flows, nics: query commands only) and
answers in the Prometheus text format (OpenMetrics when the scraper asks for
it), written by python3-prometheus-client. Metric names and labels: see
METRICS below and docs/howto/prometheus-grafana.md. Link directions are labelled link="FROM>TO" as
rocelab-dp prints them. Exit 2 on bad arguments or topology.

Emulated NICs (hosts with attach: emulated, /rocelab/nics): every counter of
nic_emul's ne_counters becomes rocelab_nic_<counter>_total{host="h0"}, a
counter under its nic_emul name (rxe's names first: sent_pkts, rcvd_pkts,
duplicate_request, out_of_seq_request, rcvd_seq_err, completer_retry_err, ...;
then sent_bytes, rcvd_bytes, retrans_pkts, naks_sent, timeouts, cnp_rcvd,
qpc_misses, cq_overflow, ecn_ce_rcvd, cnp_sent, ...), e.g.
rocelab_nic_retrans_pkts_total{host="h0"}. No emulated hosts: no samples.

How the fabric keeps up (/rocelab/info): rocelab_lag_seconds and
rocelab_lag_max_seconds (the live clock behind real time, now and at worst; 0
on the virtual clock), rocelab_packet_pool_in_use, rocelab_packet_pool_size
and rocelab_packet_pool_use_ratio (mbufs), rocelab_run_elapsed_seconds (the
run's own time: real time since its start on the live clock).

Link rates: rocelab_link_tx_rate_bytes_per_second{link} is the rate over the
time since the previous reading (wall time on the live clock, fabric time on
the virtual one); the exporter reads the fabric once at start, and a scrape
waits until RATE_MIN_S has passed since the previous reading. In PromQL,
rate(rocelab_link_tx_bytes_total[1m]) gives the same over a window of your own.
"""

import os
import re
import sys
import threading
import time

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools", "rocelab-viz-lib"))

import rlserve  # noqa: E402
import rltel  # noqa: E402

DEFAULT_PORT = 9471
NS_PER_S = 1e9
RATE_MIN_S = 0.1   # the shortest interval a link rate is taken over
NUM_PRIO = 8
METRIC_PART = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")

# (metric, type, help, telemetry table, column, scale); counters lose "_total"
# here: prometheus_client adds it.
LINK_METRICS = [
    ("rocelab_link_up", "gauge", "1 when the link direction is up", "links", "up", 1),
    ("rocelab_link_tx_packets", "counter", "Packets sent on the link direction", "links", "tx_pkts", 1),
    ("rocelab_link_tx_bytes", "counter", "Bytes sent on the link direction", "links", "tx_bytes", 1),
    ("rocelab_link_busy_seconds", "counter", "Time the direction spent sending (utilisation = rate of this)", "links", "busy_ns", 1 / NS_PER_S),
    ("rocelab_link_queue_bytes", "gauge", "Bytes queued at the sender of the direction", "links", "queue_bytes", 1),
    ("rocelab_link_drops", "counter", "Packets dropped on the direction (loss, link down, host NIC queue)", "links", "drops", 1),
    ("rocelab_link_paused_priorities", "gauge", "Bit mask of the priorities the sender is paused on now", "links", "paused_mask", 1),
    ("rocelab_link_pfc_frames_sent", "counter", "PFC frames sent by the sender of the direction", "pfc", "pfc_frames_sent", 1),
    ("rocelab_link_pfc_xoff_received", "counter", "PFC XOFF frames the sender of the direction received", "pfc", "xoff_received", 1),
    ("rocelab_link_pfc_xon_received", "counter", "PFC XON frames the sender of the direction received", "pfc", "xon_received", 1),
    ("rocelab_link_paused_seconds", "counter", "Time the sender was paused, summed over priorities", "pfc", "paused_ns", 1 / NS_PER_S),
]
QUEUE_METRICS = [
    ("rocelab_queue_bytes", "gauge", "Bytes in the priority queue", "bytes"),
    ("rocelab_queue_peak_bytes", "gauge", "Largest size the priority queue reached", "peak_bytes"),
    ("rocelab_queue_tx_packets", "counter", "Packets sent from the priority queue", "tx_pkts"),
    ("rocelab_queue_tx_bytes", "counter", "Bytes sent from the priority queue", "tx_bytes"),
    ("rocelab_queue_pfc_xoff_received", "counter", "XOFF frames received for the priority", "xoff_rx"),
    ("rocelab_queue_paused", "gauge", "1 while the priority is paused", "paused"),
]
SWITCH_METRICS = [
    ("rocelab_switch_up", "gauge", "1 when the switch is up", "up", 1),
    ("rocelab_switch_rx_packets", "counter", "Packets received", "rx_pkts", 1),
    ("rocelab_switch_forwarded_packets", "counter", "Packets forwarded", "fwd_pkts", 1),
    ("rocelab_switch_drops", "counter", "Packets dropped by the switch, all reasons", "drops", 1),
    ("rocelab_switch_arp_replies", "counter", "ARP requests answered (proxy ARP)", "arp_replies", 1),
    ("rocelab_switch_nd_replies", "counter", "IPv6 neighbour solicitations answered", "nd_replies", 1),
    ("rocelab_switch_echo_replies", "counter", "Pings to the switch answered", "echo_replies", 1),
    ("rocelab_switch_pfc_received", "counter", "PFC frames received", "pfc_rx", 1),
    ("rocelab_switch_ecn_marked", "counter", "Packets marked ECN CE", "ecn_marked", 1),
    ("rocelab_switch_buffer_bytes", "gauge", "Bytes in the switch buffer", "buffer_bytes", 1),
    ("rocelab_switch_buffer_peak_bytes", "gauge", "Largest buffer occupancy", "buffer_peak_bytes", 1),
]
HOST_METRICS = [  # from the host's link: what its NIC (veth, emulated, net_null...) sent and got
    ("rocelab_host_tx_packets", "Packets the host sent into the fabric", "up", "tx_pkts"),
    ("rocelab_host_tx_bytes", "Bytes the host sent into the fabric", "up", "tx_bytes"),
    ("rocelab_host_rx_packets", "Packets the fabric delivered to the host", "down", "tx_pkts"),
    ("rocelab_host_rx_bytes", "Bytes the fabric delivered to the host", "down", "tx_bytes"),
    ("rocelab_host_pfc_xoff_received", "PFC XOFF frames the host's NIC received", "up", "xoff_received"),
]
# From /rocelab/info: (metric, help, key, scale), all gauges
INFO_GAUGES = [
    ("rocelab_lag_seconds", "How far the live clock is behind real time (0 on the virtual clock)", "lag_ns", 1 / NS_PER_S),
    ("rocelab_lag_max_seconds", "The largest lag behind real time so far", "lag_max_ns", 1 / NS_PER_S),
    ("rocelab_packet_pool_in_use", "Mbufs of the packet pool in use (queues, wires, ports)", "mbufs_in_use", 1),
    ("rocelab_packet_pool_size", "Mbufs in the packet pool", "mbufs_total", 1),
    ("rocelab_run_elapsed_seconds", "The run's elapsed time (live: real time since its start)", "elapsed_ns", 1 / NS_PER_S),
]
# Emulated NICs: help of the counters of nic_emul/ne_nic.h's struct ne_counters
# (the telemetry's columns name the metrics; a counter missing here still gets one)
NIC_HELP = {
    "sent_pkts": "Frames the NIC sent", "rcvd_pkts": "RoCE frames that passed ICRC and header checks",
    "duplicate_request": "Responder: request PSNs before the expected one",
    "out_of_seq_request": "Responder: PSN gaps (NAK sent)",
    "rcvd_rnr_err": "Requester: RNR NAKs received", "send_rnr_err": "Responder: RNR NAKs sent",
    "rcvd_seq_err": "Requester: PSN sequence NAKs that acked new PSNs",
    "ack_deferred": "rxe's name, never counted",
    "retry_exceeded_err": "Transport retries exhausted", "retry_rnr_exceeded_err": "RNR retries exhausted",
    "completer_retry_err": "Go-back-N retries started", "send_err": "Frames not sent (buffer too small)",
    "link_downed": "Link up to down transitions", "rdma_sends": "SEND WQEs completed by the requester",
    "rdma_recvs": "Receive WQEs completed by the responder",
    "sent_bytes": "Bytes the NIC sent", "rcvd_bytes": "Bytes of the RoCE frames the NIC accepted",
    "retrans_pkts": "Request packets sent again", "naks_sent": "NAKs sent (all kinds)",
    "naks_rcvd": "NAKs received", "acks_sent": "ACKs sent", "acks_rcvd": "ACKs received",
    "ack_coalesced": "Unsent ACKs replaced by a newer one",
    "timeouts": "Retransmit timer expiries with work outstanding",
    "icrc_err": "Frames dropped: bad ICRC", "rcv_malformed": "Frames dropped: truncated or bad lengths",
    "rcv_not_roce": "Frames dropped: not UDP 4791", "rcv_wrong_dst": "Frames dropped: not addressed to the NIC",
    "rcv_unknown_qpn": "Frames dropped: no such QP", "rcv_bad_state": "Frames dropped: QP state refuses them",
    "rcv_bad_opcode": "Frames dropped: opcode not implemented",
    "rcv_opcode_seq_err": "Responder: opcodes out of sequence", "rcv_len_err": "Responder: invalid payload lengths",
    "rcv_access_err": "Responder: rkey, bounds or permission errors",
    "rcv_stale_resp": "Requester: responses matching nothing outstanding", "cnp_rcvd": "CNPs received",
    "qpc_hits": "QP context cache hits", "qpc_misses": "QP context cache misses",
    "cq_overflow": "Completions lost to a full CQ", "ecn_ce_rcvd": "DCQCN NP: CE-marked request packets received",
    "cnp_sent": "DCQCN NP: CNPs sent", "cnp_rate_cuts": "DCQCN RP: CNPs that cut a QP's rate",
}


class Collector:
    """A prometheus_client collector: one telemetry read per scrape."""

    def __init__(self, tel, topo):
        self.tel, self.topo = tel, topo
        self.prev = None  # the previous reading (link rates)
        self.lock = threading.Lock()  # scrapes on several threads: one reading at a time
        try:
            self.prev = rltel.snapshot(tel, topo)
        except rltel.TelError:
            pass  # (the first scrape says so: rocelab_up 0)

    def _fam(self, name, kind, doc, labels):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
        cls = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
        return cls(name, doc, labels=labels)

    def _links(self, snap):
        for name, kind, doc, table, col, scale in LINK_METRICS:
            f = self._fam(name, kind, doc, ["link"])
            for link, row in sorted(snap[table].items()):
                if col in row:
                    f.add_metric([link], row[col] * scale)
            yield f

    def _rates(self, snap):
        """Bytes per second per link direction since the previous reading (none at first)."""
        f = self._fam("rocelab_link_tx_rate_bytes_per_second", "gauge",
                      "Bytes per second sent on the link direction since the previous reading", ["link"])
        prev = self.prev
        if prev is not None:
            if snap["info"].get("clock") == "live":
                span = snap["wall_ns"] - prev["wall_ns"]
            else:
                span = snap["info"].get("now_ns", 0) - prev["info"].get("now_ns", 0)
            for link, row in sorted(snap["links"].items()):
                p = prev["links"].get(link)
                if p is not None and span > 0:
                    f.add_metric([link], (row.get("tx_bytes", 0) - p.get("tx_bytes", 0)) * NS_PER_S / span)
        yield f

    def _info(self, info):
        for name, doc, key, scale in INFO_GAUGES:
            if key in info:
                f = self._fam(name, "gauge", doc, [])
                f.add_metric([], info[key] * scale)
                yield f
        if info.get("mbufs_total"):
            f = self._fam("rocelab_packet_pool_use_ratio", "gauge", "Share of the packet pool in use", [])
            f.add_metric([], info.get("mbufs_in_use", 0) / info["mbufs_total"])
            yield f

    def _read(self):
        """A reading at least RATE_MIN_S after the previous one (rates need an interval)."""
        if self.prev is not None:
            wait = RATE_MIN_S - (time.monotonic_ns() - self.prev["wall_ns"]) / NS_PER_S
            if wait > 0:
                time.sleep(wait)
        return rltel.snapshot(self.tel, self.topo)

    def _queues(self):
        fams = [self._fam(n, k, d, ["link", "priority"]) for n, k, d, _ in QUEUE_METRICS]
        rows = rltel.chan_rows(self.topo)
        for lname, _, _ in self.topo.links:
            for row, v in self.tel.table(f"/rocelab/queues,{lname}").items():
                chan, _, prio = row.rpartition("_prio")
                if chan not in rows:
                    continue
                for f, (_, _, _, col) in zip(fams, QUEUE_METRICS):
                    f.add_metric([rows[chan], prio], v.get(col, 0))
        yield from fams

    def _switches(self, snap):
        for name, kind, doc, col, scale in SWITCH_METRICS:
            f = self._fam(name, kind, doc, ["switch"])
            for sw, row in sorted(snap["switches"].items()):
                f.add_metric([sw], row.get(col, 0) * scale)
            yield f
        f = self._fam("rocelab_switch_dropped_packets", "counter",
                      "Packets dropped by a switch, by reason", ["switch", "reason"])
        g = self._fam("rocelab_links_dropped_packets", "counter",
                      "Packets dropped on links, by reason, summed over all links", ["reason"])
        for sw, row in sorted(snap["drops"].items()):
            for reason, n in row.items():
                if sw == "links":
                    g.add_metric([reason], n)
                else:
                    f.add_metric([sw, reason], n)
        yield f
        yield g

    def _hosts(self, snap):
        for name, doc, way, col in HOST_METRICS:
            f = self._fam(name, "counter", doc, ["host", "attach"])
            for h, leaf in sorted(self.topo.host_leaf.items()):
                key = f"{h}>{leaf}" if way == "up" else f"{leaf}>{h}"
                row = snap["pfc" if col == "xoff_received" else "links"].get(key)
                if row is not None:
                    f.add_metric([h, self.topo.attach.get(h, "")], row.get(col, 0))
            yield f

    def _flows(self):
        t = self.tel.query("/rocelab/flows") or {}
        t.pop("columns", None)
        fams = [self._fam("rocelab_flow_packets", "counter", "Packets of the flow (the 200 largest)", ["flow"]),
                self._fam("rocelab_flow_bytes", "counter", "Bytes of the flow (the 200 largest)", ["flow"]),
                self._fam("rocelab_flow_path_changes", "counter", "Times the flow's path changed", ["flow"]),
                self._fam("rocelab_flow_info", "gauge", "The flow's current path (switch:egress port per hop)", ["flow", "path"])]
        for v in t.values():
            if not (isinstance(v, list) and len(v) == 5):
                continue
            for f, x in zip(fams, v[1:4]):
                f.add_metric([v[0]], int(x))
            fams[3].add_metric([v[0], v[4]], 1)
        yield from fams

    def _nics(self):
        rows = rltel.nics(self.tel, self.topo)
        cols = []  # the telemetry's column order (every row has the same columns)
        for row in rows.values():
            cols = list(row)
            break
        for col in cols:
            if not METRIC_PART.fullmatch(col):
                continue  # not a name Prometheus takes (telemetry keys are [A-Za-z0-9_])
            doc = NIC_HELP.get(col, f"Emulated NIC counter {col} (nic_emul)")
            f = self._fam(f"rocelab_nic_{col}", "counter", doc, ["host"])
            for h, row in sorted(rows.items()):
                f.add_metric([h], row.get(col, 0))
            yield f

    def collect(self):
        t0 = time.monotonic()
        up = self._fam("rocelab_up", "gauge", "1 when the last telemetry read worked", [])
        try:
            with self.lock:
                out = self._scrape()
            up.add_metric([], 1)
        except rltel.TelError as e:
            print(f"exporter: {e}", file=sys.stderr)
            out = []
            up.add_metric([], 0)
        d = self._fam("rocelab_scrape_duration_seconds", "gauge", "Time the telemetry read took", [])
        d.add_metric([], time.monotonic() - t0)
        yield from out
        yield up
        yield d

    def _scrape(self):
        """Every family of one reading (TelError when the fabric does not answer)."""
        snap = self._read()
        out = list(self._links(snap)) + list(self._rates(snap)) + list(self._info(snap["info"]))
        self.prev = snap
        out += list(self._queues()) + list(self._switches(snap))
        out += list(self._hosts(snap)) + list(self._flows()) + list(self._nics())
        info = snap["info"]
        i = self._fam("rocelab_info", "gauge", "The fabric (value 1)", ["topology", "clock"])
        i.add_metric([info.get("topology", ""), info.get("clock", "")], 1)
        out.append(i)
        for name, kind, doc, v in (
                ("rocelab_fabric_time_seconds", "gauge", "The fabric's clock", info.get("now_ns", 0) / NS_PER_S),
                ("rocelab_events", "counter", "Engine events fired", info.get("events", 0)),
                ("rocelab_route_changes", "counter", "Route recomputations (failures)", info.get("route_changes", 0))):
            f = self._fam(name, kind, doc, [])
            f.add_metric([], v)
            out.append(f)
        return out


def parse_args(argv):
    ap = rlserve.arg_parser(__doc__, DEFAULT_PORT, rlserve.default_topo_tool(HERE))
    ap.add_argument("--once", action="store_true", help="print one scrape on stdout and exit")
    a = ap.parse_args(argv)
    rlserve.check_port(ap, a)
    return a


def main(argv):
    a = parse_args(argv)
    try:
        from prometheus_client import CollectorRegistry, generate_latest
        from prometheus_client.exposition import choose_encoder
    except ImportError:
        print("exporter: needs python3-prometheus-client (scripts/install-deps.sh)", file=sys.stderr)
        return 2
    fabric = rlserve.open_fabric("exporter", a)
    if fabric is None:
        return 2
    topo, tel = fabric
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Collector(tel, topo))
    if a.once:
        sys.stdout.write(generate_latest(registry).decode())
        return 0

    def metrics(headers):
        encoder, ctype = choose_encoder(headers.get("Accept"))
        return encoder(registry), ctype
    return rlserve.serve("exporter", a.port, {"/metrics": metrics}, f"{topo.name}, {tel.path}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
