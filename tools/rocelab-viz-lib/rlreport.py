# SPDX-License-Identifier: BSD-3-Clause
"""The end-of-run per-switch table rocelab-dp prints on stdout (dataplane/ctl/dp_stats.c):

  switch     role            rx    forwarded   arp/nd   pfc_rx      ecn    drops  drops by reason
  leaf0      rtsw         40000        36368        0        0        0     3632  buffer=3632

The CSV has per-link drops only (loss, link down, host NIC queues); drops in a
switch's buffer or pipeline are in this table. load_switches(path) returns
{switch: {"rx", "forwarded", "pfc_rx", "ecn", "drops", "reasons": {reason: n}}}
or raises ReportError("FILE:LINE: ...").
"""

HEADER = ["switch", "role", "rx", "forwarded", "arp/nd", "pfc_rx", "ecn", "drops"]
ROLES = ("rtsw", "ctsw", "atsw")


class ReportError(Exception):
    """The report has no switch table or a malformed row; str() is FILE:LINE: ..."""


def _row(where, f):
    try:
        vals = [int(x) for x in f[2:8]]
    except ValueError:
        raise ReportError(f"{where}: switch row {f[0]}: counters must be integers") from None
    reasons = {}
    for kv in f[8:]:
        k, _, v = kv.partition("=")
        if not v.isdigit():
            raise ReportError(f"{where}: switch row {f[0]}: bad drop reason {kv!r}")
        reasons[k] = int(v)
    return {"rx": vals[0], "forwarded": vals[1], "pfc_rx": vals[3], "ecn": vals[4],
            "drops": vals[5], "reasons": reasons}


def load_switches(path):
    out, in_table = {}, False
    with open(path) as fh:
        for ln, line in enumerate(fh, start=1):
            f = line.split()
            if f[:8] == HEADER:
                in_table = True
                continue
            if not in_table:
                continue
            if not f:
                break
            if len(f) < 8 or f[1] not in ROLES:
                raise ReportError(f"{path}:{ln}: switch table row expected: {line.strip()!r}")
            out[f[0]] = _row(f"{path}:{ln}", f)
    if not out:
        raise ReportError(f"{path}:1: no per-switch table (rocelab-dp's stdout expected)")
    return out
