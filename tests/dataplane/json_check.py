#!/usr/bin/python3
"""Check one rocelab-dp --json document against its schema and against the
text report of the same run: every row of the link, switch, host and NIC tables,
every --rdma line,
every nccl-tests line, nccl-tests' closing lines, the totals line and the run
line must carry the numbers the JSON holds (the text's rounding allowed, no
more). Prints one 'ok'/'mismatch' line per table and exits 1 on the first
table that disagrees or is missing, 2 on bad arguments.

usage: json_check.py SCHEMA JSON TEXT [VERSION_LINE]
"""
import json
import re
import sys

import jsonschema

NUM = r"[0-9]+(?:\.[0-9]+)?"
LINK = re.compile(rf"^(\S+)>(\S+)\s+(up|DOWN)\s+(\d+)\s+(\d+)\s+({NUM})\s+(\d+)\s+(\d+)\s+(\d+)\s+({NUM})$")
RESULT = re.compile(r"^(?:\[c(\d+)\] )?\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(-?\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)"
                    r"\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$")
RAN = re.compile(rf"^rocelab-dp: ran ({NUM}) s \((virtual|live)\) in {NUM} s of wall time, (\d+) events, (\d+) switch forwards")
RDMA = re.compile(rf"^rdma (.+): (\d+) of (\d+) WRITEs of (\d+) B on (\d+) QPs in ({NUM}) us, ({NUM}) Gbit/s, "
                  r"(\d+) errors, data (.+)$")
AVG = re.compile(r"^(?:# \[c(\d+)\])?#? ?Avg bus bandwidth\s+: (\S+)")
OOB = re.compile(r"^(?:# \[c(\d+)\])?#? ?Out of bounds values : (.*)$")


class Mismatch(Exception):
    pass


def same(what, text, want):
    if text != want:
        raise Mismatch(f"{what}: text {text!r}, JSON gives {want!r}")


def time_text(us):
    """The time column as ne_coll_format_result rounds it."""
    return f"{us:.0f}" if us >= 10000 else f"{us:.1f}" if us >= 100 else f"{us:.2f}"


def table(lines, header, what, objs):
    """The rows, split into words, under the line starting with header, up to a blank
    or a comment line; Mismatch when there is no such table or its rows are not one per JSON object."""
    for i, line in enumerate(lines):
        if line.startswith(header):
            rows = []
            for row in lines[i + 1:]:
                if not row.strip() or row.startswith("#"):  # (the NIC table: "# totals:" next)
                    break
                rows.append(row.split())
            same(f"{what} rows", len(rows), len(objs))
            return rows
    raise Mismatch(f"no {what} table in the text")


def check_links(doc, lines):
    rows = [LINK.match(l) for l in lines]
    rows = [m for m in rows if m]
    same("link rows", len(rows), len(doc["links"]))
    for m, j in zip(rows, doc["links"]):
        name = f"link {m[1]}>{m[2]}"
        same(name, (m[1], m[2], m[3]), (j["from"], j["to"], j["state"]))
        same(name, tuple(int(m[k]) for k in (4, 5, 7, 8, 9)),
             (j["packets"], j["bytes"], j["pfc_tx_frames"], j["drops_frames"], j["peak_queue_bytes"]))
        same(name + " util%, paused%", (m[6], m[10]), (f"{j['util_pct']:.1f}", f"{j['paused_pct']:.1f}"))
    return len(rows)


def check_switches(doc, lines):
    rows = table(lines, "switch     role", "switch", doc["switches"])
    for f, j in zip(rows, doc["switches"]):
        why = dict(kv.split("=") for kv in f[8:])
        same(f"switch {f[0]}", (f[0], f[1]) + tuple(int(x) for x in f[2:8]),
             (j["name"], j["role"], j["rx_packets"], j["forwarded_packets"], j["arp_nd_replies"],
              j["pfc_rx_frames"], j["ecn_marked_packets"], j["drops_packets"]))
        same(f"switch {f[0]} drops by reason", {k: int(v) for k, v in why.items()}, j["drops_by_reason_packets"])
    rows_h = table(lines, "host ", "host", doc["hosts"])
    for f, j in zip(rows_h, doc["hosts"]):
        same(f"host {f[0]}", (f[0],) + tuple(int(x) for x in f[1:5]),
             (j["name"], j["sent_packets"], j["sent_bytes"], j["received_packets"], j["received_bytes"]))
    return len(rows) + len(rows_h)


def check_nics(doc, lines):
    """The --rdma lines and the NIC table (printed only when there are NICs)."""
    rd = [m for m in map(RDMA.match, lines) if m]
    same("rdma lines", len(rd), len(doc["rdma"]))
    for m, j in zip(rd, doc["rdma"]):
        same(f"rdma {m[1]}", (m[1], int(m[2]), int(m[3]), int(m[4]), int(m[5]), m[6], m[7], int(m[8]), m[9]),
             (j["spec"], j["completed_writes"], j["writes"], j["write_bytes"], j["qps"], f"{j['time_us']:.1f}",
              f"{j['rate_Gbps']:.2f}", j["errors"], j["data"]))
    if not doc["nics"]:
        same("a NIC table without NICs", [l for l in lines if l.startswith("nic ")], [])
        return len(rd)
    rows = table(lines, "nic ", "nic", doc["nics"])
    for f, j in zip(rows, doc["nics"]):
        same(f"nic {f[0]}", (f[0],) + tuple(int(x) for x in f[1:9]),
             (j["name"], j["sent_packets"], j["received_packets"], j["retrans_packets"], j["timeouts"],
              j["naks_tx_packets"], j["naks_rx_packets"], j["duplicate_requests_packets"], j["rejected_frames"]))
        same(f"nic {f[0]} rejected by reason", {k: int(v) for k, v in (kv.split("=") for kv in f[9:])},
             j["rejected_by_reason_frames"])
    return len(rd) + len(rows)


def check_results(doc, lines):
    n = 0
    by_id = {c["id"]: c for c in doc["collectives"]}
    seen = {k: 0 for k in by_id}
    for line in lines:
        m = RESULT.match(line)
        if not m:
            continue
        cid = int(m[1] or 1)
        j = by_id[cid]["sizes"][seen[cid]]
        seen[cid] += 1
        what = f"[c{cid}] size {m[2]}"
        same(what, (int(m[2]), int(m[3]), m[4], m[5], int(m[6])),
             (j["size_bytes"], j["count_elements"], j["type"], j["redop"], j["root"]))
        same(what + " time algbw busbw", (m[7], m[8], m[9]),
             (time_text(j["time_us"]), f"{j['algbw_GBps']:.2f}", f"{j['busbw_GBps']:.2f}"))
        same(what + " #wrong", m[10], "N/A" if j["wrong_elements"] is None else str(j["wrong_elements"]))
        ip = j["in_place"]
        same(what + " in-place", (m[11], m[12], m[13], m[14]), ("N/A",) * 4 if ip is None else
             (time_text(ip["time_us"]), f"{ip['algbw_GBps']:.2f}", f"{ip['busbw_GBps']:.2f}",
              "N/A" if ip["wrong_elements"] is None else str(ip["wrong_elements"])))
        n += 1
    for cid, c in by_id.items():
        same(f"[c{cid}] result lines", seen[cid], len(c["sizes"]))
    for line in lines:
        m = AVG.match(line)
        if m:
            c = by_id[int(m[1] or 1)]
            if abs(float(m[2]) - c["avg_busbw_GBps"]) > 1e-5 * max(1.0, c["avg_busbw_GBps"]):
                raise Mismatch(f"Avg bus bandwidth: text {m[2]}, JSON {c['avg_busbw_GBps']}")
        m = OOB.match(line)
        if m:
            c = by_id[int(m[1] or 1)]
            oob = c["out_of_bounds_elements"]
            same("Out of bounds values", m[2].split()[0], "N/A" if oob is None else str(oob))
    return n


def check_kv(what, text, obj):
    pairs = dict(kv.split("=", 1) for kv in text.split())
    same(what + " keys", sorted(pairs), sorted(obj))
    for k, v in pairs.items():
        if float(v) != float(obj[k]):
            raise Mismatch(f"{what} {k}: text {v}, JSON {obj[k]}")


def check_totals(doc, lines):
    tot = [l[len("# totals: "):] for l in lines if l.startswith("# totals: ")]
    if not doc["collectives"]:
        same("a totals line without --coll", tot, [])
        return 0
    same("totals lines", len(tot), 1)
    check_kv("totals", tot[0], doc["totals"])
    n = 0
    for line in lines:
        m = re.match(r"^# \[c(\d+)\] totals:(.*)$", line)
        if m:
            check_kv(f"[c{m[1]}] totals", m[2], doc["collectives"][int(m[1]) - 1]["totals"])
        n += 1 if m else 0
    return 1 + n


def check_latency(doc, lines):
    """Each collective's "# latency:" lines, in order, against its sizes' latency."""
    seen = {}
    for line in lines:
        m = re.match(r"^# (?:\[c(\d+)\] )?latency: (.*)$", line)
        if m:
            cid = int(m[1] or 1)
            k = seen.get(cid, 0)
            check_kv(f"[c{cid}] latency line {k + 1}", m[2], doc["collectives"][cid - 1]["sizes"][k]["latency"])
            seen[cid] = k + 1
    for c in doc["collectives"]:
        same(f"[c{c['id']}] latency lines", seen.get(c["id"], 0), len(c["sizes"]))
    return sum(seen.values())


def check_run(doc, lines, version):
    runs = [RAN.match(l) for l in lines]
    runs = [m for m in runs if m]
    same("run lines", len(runs), 1)
    m, j = runs[0], doc["run"]
    same("run", (m[1], m[2], int(m[3]), int(m[4])),
         (f"{j['time_s']:.6f}", j["clock"], j["events"], j["switch_forwards"]))
    if version:
        same("--version", version, f"rocelab-dp {doc['version']} (commit {doc['commit']})")
    return 1


def check_flows(doc, lines):
    """The flow table's rows: name, packets, bytes, changes and path, in order."""
    top = doc["flows"]["top"]
    if not top:
        same("flow table", any(l.startswith("flow (top by bytes)") for l in lines), False)
        return 0
    rows = table(lines, "flow (top by bytes)", "flow", top)
    texts = [l for l in lines[lines.index(next(l for l in lines if l.startswith("flow (top"))) + 1:]][:len(rows)]
    for t, j in zip(texts, top):
        same("flow name", t[:len(j["flow"])], j["flow"])
        pk, by, ch, path = t[len(j["flow"]):].split(None, 3)
        same(f"flow {j['flow']}", (int(pk), int(by), int(ch), path),
             (j["packets"], j["bytes"], j["path_changes"], j["path"]))
    return len(rows)


GEN = re.compile(r"^generator (.*): sent (\d+) of (\d+), asked ([\d.]+) Gbit/s, achieved ([\d.]+) Gbit/s "
                 r"\(.*\), waited (\d+) times for its NIC queue, (\d+) for an mbuf$")


def check_generators(doc, lines):
    """The 'generator SPEC:' lines, one per --gen, in order."""
    got = [m for m in (GEN.match(l) for l in lines) if m]
    same("generator lines", len(got), len(doc["generators"]))
    for m, j in zip(got, doc["generators"]):
        same(f"generator {m[1]}", (m[1], int(m[2]), int(m[3]), m[4], m[5], int(m[6]), int(m[7])),
             (j["spec"], j["sent_frames"], j["frames"], f"{j['asked_Gbps']:.3f}",
              f"{j['achieved_Gbps']:.3f}", j["waited_queue"], j["waited_mbuf"]))
    return len(got)


def check_ports(doc, lines):
    """The DPDK port table's rows (live hosts)."""
    if not doc["ports"]:
        return 0
    rows = table(lines, "port ", "port", doc["ports"])
    for f, j in zip(rows, doc["ports"]):
        same(f"port {f[0]}", (f[0], f[1]) + tuple(int(x) for x in f[2:9]),
             (j["port"], j["host"], j["rx_packets"], j["tx_packets"], j["refused_packets"],
              j["imissed_packets"], j["rx_nombuf"], j["ierrors"], j["oerrors"]))
    return len(rows)


def main(argv):
    if len(argv) in (1, 2) and argv[-1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    with open(argv[2]) as f:
        doc = json.load(f)
    with open(argv[3]) as f:
        lines = f.read().splitlines()
    try:
        jsonschema.Draft202012Validator(schema).validate(doc)
        print(f"ok - valid against {argv[1]}")
        print(f"ok - run line: {check_run(doc, lines, argv[4] if len(argv) > 4 else None)}")
        print(f"ok - link rows: {check_links(doc, lines)}")
        print(f"ok - switch and host rows: {check_switches(doc, lines)}")
        print(f"ok - flow rows: {check_flows(doc, lines)}")
        print(f"ok - generator lines: {check_generators(doc, lines)}")
        print(f"ok - port rows: {check_ports(doc, lines)}")
        print(f"ok - rdma lines and NIC rows: {check_nics(doc, lines)}")
        print(f"ok - result lines: {check_results(doc, lines)}")
        print(f"ok - totals lines: {check_totals(doc, lines)}")
        print(f"ok - latency lines: {check_latency(doc, lines)}")
    except jsonschema.ValidationError as e:
        print(f"mismatch - not valid: {e.message} at {list(e.absolute_path)}")
        return 1
    except (Mismatch, KeyError, IndexError, ValueError) as e:
        print(f"mismatch - {type(e).__name__}: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
