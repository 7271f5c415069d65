#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rocelab-dp --workers 2 on the live clock (dataplane/parallel/dp_part.h): two threads,
# each polling its own hosts' ports, frames handed over through rings on the
# links cut between them. Real Linux hosts in network namespaces, inside a
# private network namespace of its own: all-pairs ping (IPv4 and IPv6), TCP
# across the cut, a telemetry link change applied with the other thread
# stopped, and the thread summary.
# usage: test_partitions_live.sh ROCELAB_DP DATA_DIR   (root)
. "$(dirname "$0")/../common/live.sh"  # netns, DP DATA FAB, ok/nok/check, fx/tel, all_pairs_ping
name=lp$$
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
final=/tmp/rocelab-$name.final
trap 'bash "$FAB" down "$name" > "$final" 2>&1 || true; rm -f "$final"' EXIT

# live.yaml: leaf0 (h0-h3) and spine0 in partition 0, leaf1 (h4-h7) and spine1 in 1
if ! bash "$FAB" up "$name" --topology "$DATA/live.yaml" --timeout 300 -- --workers 2; then
  nok "fabric came up with --workers 2"; echo "$pass passed, $fail failed"; exit 1
fi
ok "fabric came up with --workers 2"

# 1. Every host pings every other (half the pairs cross the cut).
all_pairs_ping "$name"
check "all $pairs host pairs ping" "[ $bad -eq 0 ] && [ $pairs -eq 56 ]"
check "IPv6 ping across the cut (h0 -> h5, fd00:0:0:1::2)" "fx h0 ping -6 -c 2 -i 0.2 -W 2 -q fd00:0:0:1::2 > /dev/null"

# 2. TCP across the cut.
fx h4 timeout 30 iperf3 -s -1 -D --logfile /dev/null; sleep 0.3
mbps=$(fx h0 timeout 30 iperf3 -c 10.0.1.1 -t 3 -J 2>/dev/null | json 'round(d["end"]["sum_received"]["bits_per_second"]/1e6)')
check "iperf3 TCP h0 -> h4 across the cut (${mbps:-?} Mbit/s)" "[ -n \"$mbps\" ] && [ $mbps -ge 50 ]"
# /rocelab/info counts every partition's events (the fabric's own engine runs only the
# global ones: a few), and its clock moves
ev=$(tel /rocelab/info | json 'd["/rocelab/info"]["events"]' 2>/dev/null)
t0=$(tel /rocelab/info | json 'd["/rocelab/info"]["now_ns"]' 2>/dev/null); sleep 0.2
t1=$(tel /rocelab/info | json 'd["/rocelab/info"]["now_ns"]' 2>/dev/null)
check "telemetry info counts both partitions' events (${ev:-?}) and its clock moves ($t0 -> $t1)" \
  "[ \"\${ev:-0}\" -gt 10000 ] && [ \"\${t1:-0}\" -gt \"\${t0:-0}\" ]"

# 3. Telemetry: a link taken down by command (applied with the other thread
#    stopped) stops carrying traffic; back up, pings cross again.
tel "/rocelab/link_set,leaf0-spine0,down" > /dev/null
fx h0 ping -c 20 -i 0.05 -W 1 -q 10.0.1.1 > /dev/null 2>&1
state=$(tel /rocelab/links | python3 -c "import json,sys; t=list(json.load(sys.stdin).values())[0]; print(t['leaf0_to_spine0'][t['columns'].index('up')])" 2>/dev/null)
check "link_set down reaches the fabric (leaf0>spine0 up=${state:-?})" "[ \"$state\" = 0 ]"
tel "/rocelab/link_set,leaf0-spine0,up" > /dev/null
check "pings cross again after link_set up" "fx h0 ping -c 3 -i 0.2 -W 2 -q 10.0.1.1 > /dev/null"

# 4. A clean stop, the tables, and the partitions' summary.
bash "$FAB" down "$name" > "$final" 2>&1
trap - EXIT
check "rocelab-dp stopped cleanly and printed its tables" "grep -q '^rocelab-dp: ran' $final"
check "two partitions ran, frames crossed" "grep -Eq '2 partitions \\(live\\), [1-9][0-9]* frames crossed' $final"
rm -f "$final"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
