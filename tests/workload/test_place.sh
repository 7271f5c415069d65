#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rocelab-place: --help and --version; a placement's table and hosts= lists; the SVG
# is well-formed XML (Python's parser) with one server cell per server of the
# topology; a job that does not fit is refused (exit 2, the message naming it);
# bad job files and command lines exit 2 with FILE:LINE or the bad option.
# usage: test_place.sh ROCELAB_PLACE ROCELAB_TOPO
set -u
place=$1 topo=$2
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"
py=/usr/bin/python3

rc=0; "$place" --help > "$tmp/out" 2> "$tmp/err" || rc=$?
check "--help: exit 0, usage on stdout, nothing on stderr" \
  "[ $rc -eq 0 ] && grep -q '^usage: rocelab-place' '$tmp/out' && [ ! -s '$tmp/err' ]"
rc=0; "$place" --version > "$tmp/out" 2>&1 || rc=$?
check "--version: exit 0, names the program" "[ $rc -eq 0 ] && grep -q '^rocelab-place ' '$tmp/out'"

# 2 zones x 3 racks x 2 servers of 4 GPUs: 12 servers
"$topo" --generate zones=2,atsw=1,spines=1,servers=6,gpus=4 -o "$tmp/t.yaml" > /dev/null
cat > "$tmp/jobs.yaml" << 'EOF'
jobs:
  - {name: a, workload: llm:llama3-8b, gpus: 8}
  - {name: b, workload: astra:w.txt, gpus: 12, arrival: 1ms, policy: spread}
EOF
rc=0; "$place" "$tmp/jobs.yaml" "$tmp/t.yaml" --list --svg "$tmp/p.svg" > "$tmp/out" 2> "$tmp/err" || rc=$?
check "placed: exit 0, nothing on stderr" "[ $rc -eq 0 ] && [ ! -s '$tmp/err' ]"
# a (topology-aware): z0-leaf0's two servers; b (spread): one of each next rack with room
check "table: a on 2 servers, 1 rack, no rack hop" \
  "grep -Eq '^a +0.000 +8 topology-aware +2 +1 +1 +0 +0$' '$tmp/out'"
check "table: b spread over 3 racks in 2 zones" \
  "grep -Eq '^b +1.000 +12 spread +3 +3 +2 +3 +2$' '$tmp/out'"
check "--list: a's hosts= in ring order" \
  "grep -qx 'a hosts=z0-s0-g0,z0-s0-g1,z0-s0-g2,z0-s0-g3,z0-s1-g0,z0-s1-g1,z0-s1-g2,z0-s1-g3' '$tmp/out'"
check "--list: b's servers" "grep -qx 'b servers: z0-s2 z0-s4 z1-s0' '$tmp/out'"
cells=$($py -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
print(sum(1 for e in r.iter("{http://www.w3.org/2000/svg}rect") if e.get("class") == "server"))' \
  "$tmp/p.svg" 2> "$tmp/err") || cells=x
check "SVG: well-formed XML, one cell per server (12: $cells)" "[ '$cells' = 12 ]"
check "SVG: the legend names both jobs" "grep -q '>a (8 GPUs' '$tmp/p.svg' && grep -q '>b (12 GPUs' '$tmp/p.svg'"

cat > "$tmp/big.yaml" << 'EOF'
jobs:
  - {name: a, workload: llm:x, gpus: 40}
  - {name: huge, workload: llm:x, gpus: 16}
EOF
rc=0; "$place" "$tmp/big.yaml" "$tmp/t.yaml" > "$tmp/out" 2> "$tmp/err" || rc=$?
check "a job that does not fit: exit 2 ($rc), refused with its GPUs and the free GPUs" \
  "[ $rc -eq 2 ] && grep -qx '$tmp/big.yaml:3: job huge does not fit: it needs 16 GPUs, 8 are free' '$tmp/err'"
check "a job that does not fit: its row says refused" "grep -Eq '^huge .* refused$' '$tmp/out'"

printf 'jobs:\n  - {name: a, workload: llm:x, gpus: 8}\n  - {name: b, workload: llm:x, gpus: 8, polcy: random}\n' > "$tmp/bad.yaml"
rc=0; "$place" "$tmp/bad.yaml" "$tmp/t.yaml" > "$tmp/out" 2> "$tmp/err" || rc=$?
check "bad job file: exit 2 ($rc), FILE:LINE and the nearest key, nothing on stdout" \
  "[ $rc -eq 2 ] && grep -q '^$tmp/bad.yaml:3: unknown job key .polcy. (did you mean policy?' '$tmp/err' && [ ! -s '$tmp/out' ]"
rc=0; "$place" --check "$tmp/bad.yaml" > /dev/null 2> "$tmp/err" || rc=$?
check "--check a bad job file: exit 2 ($rc)" "[ $rc -eq 2 ] && grep -q 'bad.yaml:3:' '$tmp/err'"
rc=0; "$place" --check "$tmp/jobs.yaml" > "$tmp/out" 2>&1 || rc=$?
check "--check a good job file: exit 0 ($rc)" "[ $rc -eq 0 ] && grep -q ': 2 jobs$' '$tmp/out'"
rc=0; "$place" "$tmp/jobs.yaml" "$tmp/t.yaml" --policy packd > "$tmp/out" 2> "$tmp/err" || rc=$?
check "--policy packd: exit 2 ($rc), one line naming it" \
  "[ $rc -eq 2 ] && [ \$(wc -l < '$tmp/err') -eq 1 ] && grep -q packd '$tmp/err' && [ ! -s '$tmp/out' ]"
rc=0; "$place" "$tmp/jobs.yaml" "$tmp/nothere.yaml" > "$tmp/out" 2> "$tmp/err" || rc=$?
check "a topology that cannot be read: exit 2 ($rc)" "[ $rc -eq 2 ] && grep -q 'nothere.yaml' '$tmp/err'"
rc=0; "$place" "$tmp/jobs.yaml" "$tmp/t.yaml" --svg "$tmp/no/dir/p.svg" > /dev/null 2> "$tmp/err" || rc=$?
check "an SVG that cannot be written: exit 1 ($rc)" "[ $rc -eq 1 ] && grep -q 'cannot write' '$tmp/err'"
tap_done
