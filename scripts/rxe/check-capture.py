#!/usr/bin/env python3
"""Check rocelab-dp captures of a leaf's uplinks against rocelab-lb.

  check-capture.py --lb ROCELAB_LB --uplink 0=leaf0-spine0.pcap --uplink 1=leaf0-spine1.pcap \
      --leaf 10.0.0.0/24=eecmp,crc32,0x1234 --leaf 10.0.1.0/24=5tuple,crc32c,0xbeef

Each --uplink names the capture of the link from the checked leaf to its N-th uplink (the
spine in spine order); both directions are in it. Every RoCEv2 packet was sent by a host
of one --leaf subnet, so that leaf's ECMP (profile, algorithm, seed) chose the spine it
crossed, and the uplink index is the same on every leaf of a 2-tier Clos written in
spine order. For every packet: the ICRC must be valid (rocelab-lb checks it) while the
TTL shows it was routed (below 64); for every QP (source, destination, destination QP)
the uplinks it was seen on must be exactly the one rocelab-lb predicts for its sending
leaf. Prints one line per QP and `ok`/`not ok` lines; exit 0 when all hold.
"""
import argparse
import collections
import ipaddress
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "rocelab-viz-lib"))
import rlcli  # noqa: E402


def read_pcap(path):
    """Yield (frame number from 1, bytes) of an Ethernet pcap."""
    with open(path, 'rb') as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            return
        magic = struct.unpack('<I', hdr[:4])[0]
        endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
        n = 0
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                return
            _, _, incl, _ = struct.unpack(endian + 'IIII', rh)
            data = f.read(incl)
            n += 1
            yield n, data


def ip_info(frame):
    """(src, dst, ttl) of an IPv4 frame (with or without one 802.1Q tag), else None."""
    off, et = 12, struct.unpack('>H', frame[12:14])[0]
    if et == 0x8100:
        off, et = 16, struct.unpack('>H', frame[16:18])[0]
    if et != 0x0800:
        return None
    ip = frame[off + 2:]
    return (str(ipaddress.IPv4Address(ip[12:16])), str(ipaddress.IPv4Address(ip[16:20])), ip[8])


def lb_fields(lb, pcap, profile, algo, seed, uplinks):
    out = subprocess.run([lb, '--pcap', pcap, '--profile', profile, '--algo', algo, '--seed', seed,
                          '--uplinks', str(uplinks), '--fields'],
                         check=True, capture_output=True, text=True, timeout=60).stdout
    rows = {}
    for line in out.splitlines():
        p = line.split(',')
        if len(p) != 10 or not p[0].isdigit():
            continue
        rows[int(p[0])] = dict(src=p[1], dst=p[2], sport=int(p[3]), opcode=int(p[5]),
                               dqpn=int(p[6]), icrc_ok=p[8] == '1', uplink=int(p[9]))
    return rows


def main():
    ap = rlcli.ArgParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--lb', required=True)
    ap.add_argument('--uplink', action='append', required=True, help='INDEX=PCAP')
    ap.add_argument('--leaf', action='append', required=True, help='SUBNET=PROFILE,ALGO,SEED')
    ap.add_argument('--min-packets', type=int, default=1)
    a = ap.parse_args()

    ups = sorted((int(u.split('=', 1)[0]), u.split('=', 1)[1]) for u in a.uplink)
    leaves = []
    for spec in a.leaf:
        net, params = spec.split('=', 1)
        profile, algo, seed = params.split(',')
        leaves.append((ipaddress.IPv4Network(net), profile, algo, seed))
    n_up = len(ups)

    fails = 0
    npk = bad_icrc = not_routed = unknown_src = 0
    seen = collections.defaultdict(lambda: collections.Counter())   # qp -> uplink -> packets
    predicted = {}                                                   # qp -> set of predictions
    ttls = collections.Counter()
    for idx, pcap in ups:
        frames = dict(read_pcap(pcap))
        for net, profile, algo, seed in leaves:
            rows = lb_fields(a.lb, pcap, profile, algo, seed, n_up)
            for fno, r in rows.items():
                if ipaddress.IPv4Address(r['src']) not in net:
                    continue
                info = ip_info(frames[fno])
                npk += 1
                ttls[info[2]] += 1
                if not r['icrc_ok']:
                    bad_icrc += 1
                if info[2] >= 64:
                    not_routed += 1
                qp = (r['src'], r['dst'], r['dqpn'], r['sport'])
                seen[qp][idx] += 1
                predicted.setdefault(qp, set()).add(r['uplink'])
        # every RoCE packet must come from one of the subnets
        for net_rows in [lb_fields(a.lb, pcap, 'eecmp', 'crc32', '0', n_up)]:
            for fno, r in net_rows.items():
                if not any(ipaddress.IPv4Address(r['src']) in l[0] for l in leaves):
                    unknown_src += 1

    print('%-10s %-10s %6s %6s  %-22s %s' % ('src', 'dst', 'dqpn', 'sport', 'seen on uplink:pkts', 'predicted'))
    qp_ok = 0
    for qp in sorted(seen):
        used = seen[qp]
        pred = predicted[qp]
        ok = len(pred) == 1 and set(used) == pred
        qp_ok += ok
        print('%-10s %-10s %6d %6d  %-22s %s %s' % (qp[0], qp[1], qp[2], qp[3],
              ' '.join('%d:%d' % (u, c) for u, c in sorted(used.items())),
              ','.join(map(str, sorted(pred))), '' if ok else '  MISMATCH'))
    print('packets: %d RoCEv2, TTLs %s' % (npk, dict(sorted(ttls.items()))))

    def check(cond, what):
        nonlocal fails
        print(('ok - ' if cond else 'not ok - ') + what)
        fails += not cond
    check(npk >= a.min_packets, 'captures hold RoCEv2 packets (%d, want >= %d)' % (npk, a.min_packets))
    check(bad_icrc == 0, 'every ICRC valid after routing (%d bad of %d)' % (bad_icrc, npk))
    check(not_routed == 0, 'every packet routed: TTL below 64 (%d not)' % not_routed)
    check(unknown_src == 0, 'every packet from a known leaf subnet (%d not)' % unknown_src)
    check(len(seen) > 0 and qp_ok == len(seen),
          'each QP used exactly the uplink rocelab-lb predicts (%d of %d QP directions)' % (qp_ok, len(seen)))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
