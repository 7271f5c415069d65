#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rocelab-dp --workers N (dataplane/parallel/dp_part.h): the virtual clock on N
# partitions gives the same output as one engine, byte for byte: generators
# on the default topology (tables and CSV), a link that goes down between
# partitions, PFC across a cut (lossless), 64 emulated NICs running an
# AllReduce and an AllToAll, the E1 experiment; frames do cross the cut and
# some arrive exactly at a window's end; bad input gives exit 2. (The live
# clock on partitions: test_partitions_live.sh.)
#
# usage: test_partitions.sh ROCELAB_DP ROCELAB_TOPO DATA_DIR TOPOLOGIES_DIR EXPERIMENTS_DIR
DP=$1 TOPO=$2 DATA=$3 TOPOS=$4 EXPS=$5
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done
. "$(dirname "$0")/part_cases.sh"      # the cases (gens, fo, inc, nics64) and what reads the output

n=0
dp() { # rocelab-dp on the virtual clock with a unique DPDK name and a timeout
  n=$((n + 1))
  timeout 600 "$DP" --clock virtual --name "rl-pt$$-$n" "$@"
}
# A run on the threads of TAG (wN: --workers N), or what TAG names (`by_workers label wN`).
by_workers() {
  if [ "$1" = label ]; then echo "--workers ${2#w}"; return; fi
  local w=${1#w}; shift
  dp --workers "$w" "$@"
}
# same_as_one NAME ARGS...: with --workers 2 and 4 against 1 (4 oversubscribes a
# 2-core machine: still identical; $WORKERS overrides the list, 1 included);
# @T@ in an argument becomes wN.
same_as_one() {
  local name=$1 w tags=""; shift
  for w in ${WORKERS:-1 2 4}; do [ "$w" = 1 ] || tags+=" w$w"; done
  same_as_ref "$name" by_workers w1 "$tags" "$@"
}

# 1. Generators on the default topology; the link time series too.
same_as_one default --topology "$TOPOS/default.yaml" "${gens[@]}" --csv "$tmp/default.@T@.csv" --csv-interval 20us \
  --capture "leaf0-spine1=$tmp/default.@T@.pcap" --capture "h2-leaf0=$tmp/default-h2.@T@.pcap"
check "default: the CSV time series are identical for 1, 2 and 4 workers" \
  "cmp -s $tmp/default.w1.csv $tmp/default.w2.csv && cmp -s $tmp/default.w1.csv $tmp/default.w4.csv && [ \$(wc -l < $tmp/default.w1.csv) -gt 20 ]"
# leaf0-spine1 is cut (its two directions are sent by two threads): the pcap is still the one engine's
check "default: the pcaps of a cut link and of a host link are identical for 1, 2 and 4 workers" \
  "cmp -s $tmp/default.w1.pcap $tmp/default.w2.pcap && cmp -s $tmp/default.w1.pcap $tmp/default.w4.pcap && cmp -s $tmp/default-h2.w1.pcap $tmp/default-h2.w2.pcap && cmp -s $tmp/default-h2.w1.pcap $tmp/default-h2.w4.pcap && [ \$(stat -c %s $tmp/default.w1.pcap) -gt 100000 ]"
c=$(crossed "$tmp/default.w2.err"); e=$(at_end "$tmp/default.w2.err")
check "default: frames crossed the cut ($c), some arriving exactly at a window's end ($e)" \
  "[ \"${c:-0}\" -gt 1000 ] && [ \"${e:-0}\" -gt 0 ]"

# the balance of the cut: each partition's share of the loop spent running its windows
busy() { sed -n "s/^rocelab-dp: partition $2: .* busy \([0-9]*\)% of the loop .*/\1/p" "$1"; }
b0=$(busy "$tmp/default.w2.err" 0); b1=$(busy "$tmp/default.w2.err" 1)
check "default: each partition says how busy it was ($b0% and $b1% of the loop)" \
  "[ \"${b0:-0}\" -gt 0 ] && [ \"${b0:-0}\" -le 100 ] && [ \"${b1:-0}\" -gt 0 ] && [ \"${b1:-0}\" -le 100 ]"

check "rocelab-topo --partitions 2 shows the cut rocelab-dp makes (lookahead, 2 links cut)" \
  "\"$TOPO\" --partitions 2 $TOPOS/default.yaml | grep -q '^2 links cut; lookahead (smallest delay of a cut link) 1000 ns' && grep -q 'lookahead 1000 ns' $tmp/default.w2.err && \"$TOPO\" --partitions 2 $TOPOS/default.yaml | grep -q '^partition 1: leaf1 spine1; 4 hosts'"
"$TOPO" --partitions 3 "$DATA/part-file.yaml" > /dev/null 2> "$tmp/topo3.err"; rc=$?
check "rocelab-topo --partitions 3 on a file cut into 2: exit 2, says which partition is empty" \
  "[ $rc = 2 ] && grep -q 'no switch is in partition 2 of 3' $tmp/topo3.err"

# 2. A link between partitions goes down at 1 ms and comes back at 2 ms, with
#    traffic on it; the same without a bound (the run ends when drained).
same_as_one failover "${fo[@]}"
check "failover: the cut link came back up after dropping what it held when it went down" \
  "[ \"\$(lk $tmp/failover.w2.txt 'leaf0>spine1' 2)\" = up ] && [ \"\$(lk $tmp/failover.w2.txt 'leaf0>spine1' 7)\" -gt 0 ]"
same_as_one failover_bounded "${fo[@]}" --duration 1900us
check_failover_moved "$tmp/failover_bounded.w2.txt" "2 workers"

# 2b. The cut the topology file gives (switch key partition).
WORKERS="1 2" same_as_one file_cut --topology "$DATA/part-file.yaml" --gen 'h0>h2:flows=8,rate=40G,count=3000' \
  --gen 'h3>h1:proto=roce,flows=4,rate=40G,count=3000' --gen 'h0>h1:rate=10G,count=1000'
check "file cut: leaf0 and leaf1 in different partitions: frames crossed, lookahead 2 us" \
  "[ \"\$(crossed $tmp/file_cut.w2.err)\" -gt 0 ] && grep -q 'lookahead 2000 ns' $tmp/file_cut.w2.err"

# 3. PFC across the cut: a 2:1 incast whose senders (leaf0) are in partition 0
#    and whose bottleneck (leaf1 -> h2) is in partition 1 stays lossless.
WORKERS="1 2 3" same_as_one incast "${inc[@]}" --capture "leaf1-spine0=$tmp/incast.@T@.pcap"
check "incast: the pcap of the cut link (data one way, PFC the other) is identical for 1, 2 and 3 workers" \
  "cmp -s $tmp/incast.w1.pcap $tmp/incast.w2.pcap && cmp -s $tmp/incast.w1.pcap $tmp/incast.w3.pcap"
rx=$(awk '$1 == "h2" && NF == 5 { print $4; exit }' "$tmp/incast.w2.txt")
check "incast: h2 received all 40000 packets with 2 workers (lossless across the cut)" "[ \"$rx\" = 40000 ]"
check "incast: no switch dropped anything" \
  "! awk '\$2 ~ /tsw\$/ && \$8 != 0 { bad = 1 } END { exit !bad }' $tmp/incast.w2.txt"
check "incast: leaf1 sent PFC frames across the cut and spine0's port to it was paused" \
  "[ \"\$(lk $tmp/incast.w2.txt 'leaf1>spine0' 6)\" -gt 0 ] && awk '\$1 == \"spine0>leaf1\" && \$9 > 0 { f = 1 } END { exit !f }' $tmp/incast.w2.txt"

# 4. 64 emulated NICs on a generated 2-tier Clos: an AllReduce and an AllToAll.
nics64 w2

# 5. The E1 experiment (smoke: first seed, two sizes): identical result tables.
e1_same --workers w "--workers 2"

# 6. Bad input: exit 2 and a message that says what is wrong.
bad() { # NAME EXPECTED-TEXT ARGS...
  local name=$1 want=$2; shift 2
  dp "$@" > "$tmp/bad.out" 2> "$tmp/bad.err"; local rc=$?
  check "bad input: $name: exit 2 and '$want'" "[ $rc = 2 ] && grep -q -- \"$want\" $tmp/bad.err"
}
bad "--workers 0" "bad --workers" --topology "$TOPOS/default.yaml" --workers 0
bad "--workers x" "bad --workers" --topology "$TOPOS/default.yaml" --workers x
bad "more workers than switches" "want 1\.\.3" --topology "$DATA/part-incast.yaml" --workers 4
bad "a partition the file gives beyond --workers" "part-file-bad.yaml:[0-9]*: switch 'leaf1' is in partition 2, but there are 2 (0..1)" \
  --topology "$DATA/part-file-bad.yaml" --workers 2
sed 's/partition: 2/partition: 0/' "$DATA/part-file-bad.yaml" > "$tmp/part-file-bad2.yaml"
bad "a switch the file gives no partition" "switch 'spine1' has no partition" \
  --topology "$tmp/part-file-bad2.yaml" --workers 2
bad "a cut link with no delay" "link 'leaf0-spine1' (line [0-9]*) joins partitions" \
  --topology "$DATA/part-nodelay.yaml" --workers 2 --gen 'h0>h2:count=10'
dp --workers 2 --topology "$TOPOS/default.yaml" --clock live --lag-policy stop > "$tmp/bad.out" 2> "$tmp/bad.err"; rc=$?
check "bad input: --workers 2 --lag-policy stop (live): exit 2, says it works with one worker" \
  "[ $rc = 2 ] && grep -q 'lag-policy stop works with one worker' $tmp/bad.err"

tap_done
