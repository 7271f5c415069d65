# SPDX-License-Identifier: BSD-3-Clause
"""Reading rocelab-dp's counters from DPDK telemetry (/rocelab/*), read-only.

The socket is /var/run/dpdk/<file-prefix>/dpdk_telemetry.v2 (SOCK_SEQPACKET):
connect, read the greeting, then one command per message and one JSON reply
per command. Tables come as {"columns": [...], ROW: [values]}; row names of
link directions are FROM_to_TO with every character other than letters,
digits and '_' made '_' (dataplane/ctl/dp_ctl.c). A reply holds at most
TEL_MAX_ROWS rows; larger fabrics are asked one sending node at a time.

Only query commands are sent (links, queues, switches, drops, pfc, flows,
nics, info); nothing here changes the fabric.
"""

import json
import os
import re
import socket
import threading
import time

TEL_MAX_ROWS = 255           # RTE_TEL_MAX_DICT_ENTRIES (256) minus the columns entry
TEL_REPLY_MAX = 1 << 20      # bytes read per reply
TEL_TIMEOUT_S = 5.0
READ_ONLY = ("/rocelab/info", "/rocelab/links", "/rocelab/queues", "/rocelab/switches",
             "/rocelab/drops", "/rocelab/pfc", "/rocelab/flows", "/rocelab/nics")


class TelError(Exception):
    """The socket is missing, refused, or answered something unexpected."""


def socket_path(name):
    """The telemetry socket of the rocelab-dp started with --name NAME (its
    DPDK file prefix); fabric.sh's fabric NAME runs with --name rocelab-NAME,
    so that name is tried too."""
    for n in (name, f"rocelab-{name}"):
        for base in ("/var/run/dpdk", "/run/dpdk"):
            p = os.path.join(base, n, "dpdk_telemetry.v2")
            if os.path.exists(p):
                return p
    raise TelError(f"no telemetry socket for {name!r} under /var/run/dpdk "
                   f"(is rocelab-dp running with --name {name}?)")


def clean(name):
    """A node name as telemetry spells it in row names."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


class Telemetry:
    """One connection, reopened after an error; one query at a time (the
    exporter's scrapes may come on several threads)."""

    def __init__(self, path):
        self.path, self.sock, self.lock = path, None, threading.Lock()

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None

    def _connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(TEL_TIMEOUT_S)
        try:
            s.connect(self.path)
            s.recv(TEL_REPLY_MAX)  # the greeting
        except OSError as e:
            s.close()
            raise TelError(f"{self.path}: {e.strerror or e}") from None
        self.sock = s

    def query(self, cmd):
        """The reply to one read-only command, as the value under its name."""
        if cmd.split(",")[0] not in READ_ONLY:
            raise TelError(f"{cmd}: not a read-only rocelab query")
        with self.lock:
            raw = self._ask(cmd)
        try:
            reply = json.loads(raw)
        except ValueError:
            raise TelError(f"{cmd}: reply is not JSON") from None
        return reply.get(cmd.split(",")[0])

    def _ask(self, cmd):
        for attempt in (0, 1):
            if self.sock is None:
                self._connect()
            try:
                self.sock.send(cmd.encode())
                raw = self.sock.recv(TEL_REPLY_MAX)
                if not raw:
                    raise OSError("connection closed")
                break
            except OSError as e:
                self.close()
                if attempt:
                    raise TelError(f"{self.path}: {cmd}: {e}") from None
        return raw

    def table(self, cmd):
        """A table reply as {row: {column: value}} ({} when the command failed)."""
        t = self.query(cmd)
        if not isinstance(t, dict) or "columns" not in t:
            return {}
        cols = t.pop("columns")
        return {row: dict(zip(cols, vals)) for row, vals in t.items()}

    def table_all(self, cmd, prefixes):
        """A table in full: asked whole, and once per prefix when the whole
        answer was cut at TEL_MAX_ROWS rows."""
        t = self.table(cmd)
        if len(t) < TEL_MAX_ROWS:
            return t
        out = {}
        for p in prefixes:
            out.update(self.table(f"{cmd},{p}"))
        return out


def chan_rows(topo):
    """{telemetry row name: "from>to"} for every link direction of a Topo."""
    out = {}
    for _, a, b in topo.links:
        out[f"{clean(a)}_to_{clean(b)}"] = f"{a}>{b}"
        out[f"{clean(b)}_to_{clean(a)}"] = f"{b}>{a}"
    return out


def snapshot(tel, topo):
    """Everything the dashboard and the exporter read, keyed by topology names:
    {"info": {...}, "wall_ns": monotonic ns of the links reading,
     "links": {"a>b": {...}}, "pfc": {...}, "switches": {name: {...}},
     "drops": {name: {...}, "links": {...}}}."""
    info = tel.query("/rocelab/info") or {}
    rows = chan_rows(topo)
    senders = sorted({clean(k.split(">")[0]) + "_to_" for k in rows.values()})
    sw_rows = {clean(s): s for s in topo.switches()}
    # On the live clock info's now_ns is the time of the engine's last event, which
    # can stand still for seconds while frames flow: a live reading is timed here.
    wall_ns = time.monotonic_ns()
    links = {rows[k]: v for k, v in tel.table_all("/rocelab/links", senders).items() if k in rows}
    pfc = {rows[k]: v for k, v in tel.table_all("/rocelab/pfc", senders).items() if k in rows}
    names = list(sw_rows)
    switches = {sw_rows.get(k, k): v for k, v in tel.table_all("/rocelab/switches", names).items()}
    drops = {sw_rows.get(k, k): v for k, v in tel.table_all("/rocelab/drops", names).items()}
    return {"info": info, "wall_ns": wall_ns, "links": links, "pfc": pfc,
            "switches": switches, "drops": drops}


def emulated_hosts(topo):
    """Hosts with attach "emulated" in topology order (every host when the
    topology does not say which attach each host has)."""
    return [h for h in topo.host_leaf if topo.attach.get(h, "emulated") == "emulated"]


def nics(tel, topo, hosts=None):
    """The emulated NICs' counters, {host: {counter: value}}, keyed by the
    topology's host names: of `hosts`, or of every emulated host. A reply
    holds about 16 KB: hosts missing from the whole table are asked one at a
    time (a prefix may match more hosts; only the exact row is taken)."""
    hosts = emulated_hosts(topo) if hosts is None else hosts
    if not hosts:
        return {}
    whole = tel.table("/rocelab/nics")
    out = {}
    for h in hosts:
        row = whole.get(clean(h))
        if row is None:
            row = tel.table(f"/rocelab/nics,{h}").get(clean(h))
        if row is not None:
            out[h] = row
    return out
