#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rocelab-topo --generate: generated 2- and 3-tier files pass --check with the
# switch, host and link counts asked for; a bad SPEC exits 2 with the bad pair.
# usage: test_generate.sh ROCELAB_TOPO
set -euo pipefail
topo=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0

# expect_summary SPEC "SUMMARY AFTER THE NAME"
expect_summary() {
	local f="$dir/gen.yaml" got
	"$topo" --generate "$1" -o "$f"
	got=$("$topo" --check "$f")
	if [[ "${got#*: }" != "$2: OK" ]]; then
		echo "FAIL --generate $1: got '$got', expected '$2: OK'"
		fails=$((fails + 1))
	else
		echo "ok   --generate $1: $got"
	fi
}

# expect_bad SPEC MESSAGE-PART
expect_bad() {
	local rc=0 err
	err=$("$topo" --generate "$1" 2>&1 >/dev/null) || rc=$?
	if [[ $rc -ne 2 || "$err" != *"$2"* ]]; then
		echo "FAIL --generate $1: exit $rc, '$err' (expected exit 2 and '$2')"
		fails=$((fails + 1))
	else
		echo "ok   --generate $1: exit 2: $err"
	fi
}

# 2-tier: 4 + 3 switches, 4 x 5 hosts, 20 host links + 4 x 3 fabric links
expect_summary spines=3,leaves=4,hosts=5,attach=emulated,host-rate=25G,leaf-oversub=2 \
	"7 switches (4 rtsw, 3 ctsw, 0 atsw), 20 hosts, 32 links, 0 events"
# 3-tier: 2 x (32 + 16) + 4 switches, 1,024 hosts, 1,024 + 2 x 32 x 16 + 2 x 16 x 4 links
expect_summary zones=2,leaves=32,spines=16,atsw=4,hosts=16,host-rate=400G,leaf-rate=400G,spine-oversub=1:7,attach=emulated \
	"100 switches (64 rtsw, 32 ctsw, 4 atsw), 1024 hosts, 2176 links, 0 events"
expect_summary zones=3,leaves=2,spines=2,atsw=1,hosts=1 \
	"13 switches (6 rtsw, 6 ctsw, 1 atsw), 6 hosts, 24 links, 0 events"

# leaf-links=2: 2 x 2 x 2 leaf-spine links, a 2:1 leaf counting both
expect_summary spines=2,leaves=2,hosts=8,leaf-links=2,leaf-oversub=2 \
	"4 switches (2 rtsw, 2 ctsw, 0 atsw), 16 hosts, 24 links, 0 events"
expect_bad spines=2,leaves=2,hosts=2,leaf-links=0 "bad key=value 'leaf-links=0'"

expect_bad spines=2,leaves=2,hosts=2,speed=1G "bad key=value 'speed=1G': unknown key"
expect_bad spines=2,leaves=2,hosts=2,host-rate=-1G "bad key=value 'host-rate=-1G'"
expect_bad zones=2,spines=2,leaves=2,hosts=2 "needs atsw=N"

# servers of GPUs (issue 40): meta 4 x 8 = 2 leaves of 16 GPUs, 32 host links + 2 x 2 uplinks;
# rail 4 x 8 = 8 leaves of 4 GPUs, 32 + 8 x 4; 3 servers: the last leaf holds one
expect_summary servers=4,gpus=8,layout=meta,spines=2 \
	"4 switches (2 rtsw, 2 ctsw, 0 atsw), 32 hosts, 36 links, 0 events, 4 servers x 8 GPUs"
expect_summary servers=4,gpus=8,layout=rail,spines=4,host-rate=400G,leaf-rate=400G \
	"12 switches (8 rtsw, 4 ctsw, 0 atsw), 32 hosts, 64 links, 0 events, 4 servers x 8 GPUs"
expect_summary servers=3,spines=2 \
	"4 switches (2 rtsw, 2 ctsw, 0 atsw), 24 hosts, 28 links, 0 events, 3 servers x 8 GPUs"
# 2 zones x 4 servers (rail: 8 leaves per zone), 2 spines per zone, 2 ATSWs
expect_summary zones=2,servers=4,layout=rail,spines=2,atsw=2 \
	"22 switches (16 rtsw, 4 ctsw, 2 atsw), 64 hosts, 104 links, 0 events, 8 servers x 8 GPUs"
expect_bad servers=254,layout=rail,spines=1 "more than a leaf's 253 host ports"
expect_bad servers=2,spines=1,attach=veth "a server's GPUs are emulated hosts"
expect_bad servers=2,spines=1,layout=ring "bad key=value 'layout=ring'"

# --clos takes the same keys after S,L,H
out=$("$topo" --clos 2,2,2,attach=emulated)
if [[ "$out" != *"clos-2x2x2: 4 switches"* || "$out" != *" emulated "* ]]; then
	echo "FAIL --clos 2,2,2,attach=emulated"; fails=$((fails + 1))
fi
out=$("$topo" --json-clos 3,2,2,host-rate=25G) ||
	{ echo "FAIL --json-clos 3,2,2,host-rate=25G: exit $?"; fails=$((fails + 1)); }
[[ "$out" == *'"rate_bps": 25000000000'* ]] ||
	{ echo "FAIL --json-clos 3,2,2,host-rate=25G: no 25G host link"; fails=$((fails + 1)); }
rc=0; "$topo" --clos 2,2,2,bogus=1 2>/dev/null || rc=$?
[[ $rc -eq 2 ]] || { echo "FAIL --clos with a bad key: exit $rc, expected 2"; fails=$((fails + 1)); }
exit $((fails > 0))
