# SPDX-License-Identifier: BSD-3-Clause
"""Reading a run's link time series: the CSV rocelab-dp writes with --csv FILE.

One row per link direction per sample (dataplane/ctl/dp_stats.c):
  time_ns,link,from,to,up,util,queue_bytes,paused_mask,tx_pkts,tx_bytes,pfc_tx,drops
util is the share of the interval since the previous sample the direction was
sending; paused_mask the priorities its sender was paused on at the sample;
tx_*, pfc_tx and drops are running totals. Every sample lists the same
directions in the same order.

load_run(path) returns a Run or raises CsvError("FILE:LINE: what is wrong").
"""

import csv
import os

COLUMNS = ["time_ns", "link", "from", "to", "up", "util", "queue_bytes", "paused_mask",
           "tx_pkts", "tx_bytes", "pfc_tx", "drops"]


class CsvError(Exception):
    """A malformed or truncated CSV; str() is 'FILE:LINE: message'."""


class Chan:
    """One link direction (from>to) and its samples, one entry per sample time."""

    def __init__(self, link, src, dst):
        self.link, self.src, self.dst = link, src, dst
        self.key = f"{src}>{dst}"
        self.up, self.util, self.queue, self.paused = [], [], [], []
        self.tx_pkts, self.tx_bytes, self.pfc_tx, self.drops = [], [], [], []


class Summary:
    """A direction over the whole run: time-weighted mean utilisation, peak of
    the sampled utilisation and queue, share of the run paused, end totals."""

    def __init__(self, util, util_peak, queue_peak, paused_frac, tx_pkts, tx_bytes, pfc_tx,
                 drops, up):
        self.util, self.util_peak, self.queue_peak = util, util_peak, queue_peak
        self.paused_frac, self.tx_pkts, self.tx_bytes = paused_frac, tx_pkts, tx_bytes
        self.pfc_tx, self.drops, self.up = pfc_tx, drops, up


class Run:
    """A run: its name, sample times (ns) and directions in file order."""

    def __init__(self, name, times, chans):
        self.name, self.times, self.chans = name, times, chans

    def spans(self):
        """Length of each sample's interval (ns). The first sample's interval
        starts where the run started: time 0 on the virtual clock; on the live
        clock (large absolute times) the next interval's length is assumed."""
        t = self.times
        if len(t) > 1:
            first = t[0] if t[0] <= 2 * (t[1] - t[0]) else t[1] - t[0]
        else:
            first = t[0] or 1
        return [first] + [b - a for a, b in zip(t, t[1:])]

    def origin(self):
        """Where the first interval starts (ns): 0 on the virtual clock."""
        return self.times[0] - self.spans()[0]

    def rel_ms(self, i):
        """Sample i's time since the run's start, in ms (live clocks are absolute)."""
        return (self.times[i] - self.origin()) / 1e6

    def length_ns(self):
        """The run's length: from its origin to its last sample (ns)."""
        return self.times[-1] - self.origin()

    def summary(self, chan, window_ns=None):
        """The whole-run Summary of one Chan. Utilisation and the paused share
        are of window_ns (default: the run's length): runs compared over one
        window, the longest run's, show the same colour for the same busy time."""
        spans = self.spans()
        total = window_ns or sum(spans) or 1
        util = sum(u * s for u, s in zip(chan.util, spans)) / total
        paused = sum(s for p, s in zip(chan.paused, spans) if p) / total
        return Summary(util, max(chan.util), max(chan.queue), paused, chan.tx_pkts[-1],
                       chan.tx_bytes[-1], chan.pfc_tx[-1], chan.drops[-1], chan.up[-1])

    def at(self, chan, i):
        """A Summary of sample i alone (utilisation of its interval, state at it)."""
        return Summary(chan.util[i], chan.util[i], chan.queue[i], 1.0 if chan.paused[i] else 0.0,
                       chan.tx_pkts[i], chan.tx_bytes[i], chan.pfc_tx[i], chan.drops[i],
                       chan.up[i])

    def index_at(self, time_ns):
        """Index of the last sample at or before time_ns (the first if none)."""
        best = 0
        for i, t in enumerate(self.times):
            if t <= time_ns:
                best = i
        return best


def _num(where, key, text, conv, lo=None, hi=None):
    try:
        v = conv(text)
    except ValueError:
        raise CsvError(f"{where}: {key}={text!r} is not a number") from None
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise CsvError(f"{where}: {key}={text!r} out of range {lo}..{hi}")
    return v


def _row(where, rec, chan):
    """Append one validated row to its Chan."""
    chan.up.append(_num(where, "up", rec[4], int, 0, 1))
    chan.util.append(_num(where, "util", rec[5], float, 0.0, 1.0))
    chan.queue.append(_num(where, "queue_bytes", rec[6], int, 0))
    chan.paused.append(_num(where, "paused_mask", rec[7], lambda s: int(s, 16), 0, 255))
    for name, i, lst in (("tx_pkts", 8, chan.tx_pkts), ("tx_bytes", 9, chan.tx_bytes),
                         ("pfc_tx", 10, chan.pfc_tx), ("drops", 11, chan.drops)):
        v = _num(where, name, rec[i], int, 0)
        if lst and v < lst[-1]:
            raise CsvError(f"{where}: {name}={v} is less than at the previous sample "
                           f"({lst[-1]}): a running total never goes back")
        lst.append(v)


def load_run(path, name=None):
    """Parse and check a --csv file. name: the run's name (default: the file
    name without .csv). Raises CsvError (FILE:LINE: ...) or OSError."""
    name = name or os.path.splitext(os.path.basename(path))[0]
    with open(path, newline="") as f:
        text = f.read()
    if text and not text.endswith("\n"):
        nl = text.count("\n") + 1
        raise CsvError(f"{path}:{nl}: truncated: the last line has no end of line")
    rows = list(csv.reader(text.splitlines()))
    if not rows or rows[0] != COLUMNS:
        raise CsvError(f"{path}:1: header must be {','.join(COLUMNS)}")
    chans, order, times = {}, [], []
    first = True  # still in the first sample, which fixes the directions and their order
    pos = 0  # index of the direction expected next within the current sample
    for ln, rec in enumerate(rows[1:], start=2):
        where = f"{path}:{ln}"
        if len(rec) != len(COLUMNS):
            raise CsvError(f"{where}: {len(rec)} fields, expected {len(COLUMNS)}")
        t = _num(where, "time_ns", rec[0], int, 0)
        key = f"{rec[2]}>{rec[3]}"
        if not times:
            times.append(t)
        if first and t != times[0]:
            if t < times[0]:
                raise CsvError(f"{where}: time_ns={t} is before the previous sample ({times[0]})")
            first = False
        if first:
            if key in chans:
                raise CsvError(f"{where}: link direction {key} twice in the sample at {t}")
            chans[key] = Chan(rec[1], rec[2], rec[3])
            order.append(key)
        else:
            if pos == len(order):
                if t <= times[-1]:
                    raise CsvError(f"{where}: time_ns={t}: the sample at {times[-1]} is "
                                   f"complete, the next must be later")
                times.append(t)
                pos = 0
            elif t != times[-1]:
                raise CsvError(f"{where}: time_ns={t}: the sample at {times[-1]} has only "
                               f"{pos} of {len(order)} link directions")
            if order[pos] != key:
                raise CsvError(f"{where}: expected {order[pos]}, got {key} (time_ns={t})")
        _row(where, rec, chans[key])
        pos += 1
    if not times:
        raise CsvError(f"{path}:2: no samples (run shorter than --csv-interval?)")
    if pos != len(order):
        raise CsvError(f"{path}:{len(rows)}: truncated: the sample at time_ns={times[-1]} "
                       f"has {pos} of {len(order)} link directions")
    return Run(name, times, [chans[k] for k in order])
