#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write small Chakra execution traces for test_workload.sh, one file per rank
(PREFIX.0.et ...), encoded by hand in protobuf's wire format with the field
numbers of workload/wl_chakra.proto (Chakra's et_def.proto): each message after
its length as a varint, a GlobalMetadata first, then the nodes.

usage: chakra_write.py PREFIX CASE [BYTES]
  ar2        2 ranks: compute 10 us -> AllReduce of BYTES -> compute 5 us
  ar8        8 ranks: an AllReduce of BYTES, nothing else
  groups     4 ranks: compute 10 us -> AllReduce of BYTES over process group g0
             (ranks 0, 1) or g1 (ranks 2, 3), named by pg_name
  bcast      2 ranks: a Broadcast (ne_coll has none yet)
  missing    2 ranks: rank 1's node 3 depends on node 9, which is not there
  p2p        2 ranks: compute 10 us (rank 1: 3 us) -> rank 0 sends BYTES to rank 1
  unmatched  2 ranks: rank 0 sends to rank 1, which receives nothing
"""
import sys

COMP, SEND, RECV, COLL = 4, 5, 6, 7
ALL_REDUCE, BROADCAST = 0, 5


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_bytes(num, b):
    return varint(num << 3 | 2) + varint(len(b)) + b


def attr(name, value):
    """WlAttr: name (1), uint64_val (13) or string_val (29)."""
    if isinstance(value, str):
        return field_bytes(1, name.encode()) + field_bytes(29, value.encode())
    return field_bytes(1, name.encode()) + field_varint(13, value)


def node(nid, kind, deps=(), micros=0, attrs=()):
    """WlNode: id 1, name 2, type 3, data_deps 5, duration_micros 7, attr 10."""
    m = field_varint(1, nid) + field_bytes(2, b"n%d" % nid) + field_varint(3, kind)
    for d in deps:
        m += field_varint(5, d)
    if micros:
        m += field_varint(7, micros)
    for a in attrs:
        m += field_bytes(10, a)
    return m


def coll(nid, op, size, deps=(), pg=None):
    attrs = (attr("comm_type", op), attr("comm_size", size))
    return node(nid, COLL, deps, attrs=attrs + ((attr("pg_name", pg),) if pg else ()))


def ranks(case, size):
    if case == "ar2":
        one = [node(1, COMP, micros=10), coll(2, ALL_REDUCE, size, [1]), node(3, COMP, [2], micros=5)]
        return [one, one]
    if case == "ar8":
        return [[coll(1, ALL_REDUCE, size)] for _ in range(8)]
    if case == "groups":
        return [[node(1, COMP, micros=10), coll(2, ALL_REDUCE, size, [1], pg="g%d" % (r // 2))]
                for r in range(4)]
    if case == "bcast":
        one = [node(1, COMP, micros=1), coll(2, BROADCAST, size, [1])]
        return [one, one]
    if case == "missing":
        return [[node(1, COMP, micros=1)], [node(1, COMP, micros=1), node(3, COMP, [9], micros=1)]]
    if case == "p2p":
        send = node(2, SEND, [1], attrs=(attr("comm_dst", 1), attr("comm_size", size)))
        recv = node(2, RECV, [1], attrs=(attr("comm_src", 0), attr("comm_size", size)))
        return [[node(1, COMP, micros=10), send], [node(1, COMP, micros=3), recv]]
    if case == "unmatched":
        send = node(1, SEND, attrs=(attr("comm_dst", 1), attr("comm_size", size)))
        return [[send], [node(1, COMP, micros=1)]]
    sys.exit("unknown case " + case)


def main():
    prefix, case = sys.argv[1], sys.argv[2]
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 20
    for r, nodes in enumerate(ranks(case, size)):
        with open("%s.%d.et" % (prefix, r), "wb") as f:
            for msg in [field_bytes(1, b"0.0.4")] + nodes:
                f.write(varint(len(msg)) + msg)


if __name__ == "__main__":
    main()
