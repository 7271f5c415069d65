#!/usr/bin/env bash
# rocelab-dp --workload (issue 41, items 1-2): job graphs run on the emulated
# NICs of data/coll-no-servers.yaml (8 emulated hosts h0..h7, 2 leaves).
#   - a Chakra trace of 2 ranks (chakra_write.py ar2): compute 10 us,
#     AllReduce of 256 KiB, compute 5 us: the iteration is 10 us + the
#     collective's time + 5 us, and that time is the one a plain --coll of the
#     same size on the same hosts prints (to its 2 decimals); its --json
#     validates against the schema and holds the same numbers;
#   - an AllReduce of 1 MiB over all 8 ranks (ar8): the time and busbw of
#     --coll op=allreduce,sizes=1M (its 13-column line: time to 0.1 us);
#   - a Send/Recv pair (p2p): the receiver computes 3 us, the sender 10 us:
#     the iteration is 10 us + the transfer;
#   - a 4-rank ASTRA-sim DATA file (data/workload-data4.txt): the compute-only
#     critical path is 1000 + 500 + 700 + 600 + 3000 cycles = 5.8 us at 1 ns
#     (11.6 us at cycle_ps=2000); layer 2's collective starts at 2.2 us, layer
#     1's waits for the NICs until it ended, and the iteration is 2.2 us + both
#     collectives' times, each within 0.5 % of a plain --coll's; iters=2
#     gives 2 iterations;
#   - process groups (group=NAME:R+R, Chakra's pg_name): AllReduces over
#     {0,1} and {2,3} overlap, both starting at 10 us;
#   - a small rocelab-llm job (TP 2, PP 2, DP 2) runs to its end;
#   - refused with exit 2, naming the file and node or line: a Broadcast, a
#     dependency on a missing node, a Send without its Recv, a bad ASTRA-sim
#     line, a HYBRID_DATA_MODEL file without model_parallel_NPU_group, a pg_name without its group=; a job with more ranks than hosts=
#     names; an unknown kind; --workload without --clock virtual;
#   - no DPDK runtime directory is left behind.
# usage: test_workload.sh ROCELAB_DP DATA_DIR
set -u
DP=$1 DATA=$2
TOPO=$(realpath "$DATA/coll-no-servers.yaml")
SCHEMA=$(realpath "$DATA/../../../docs/reference/rocelab-dp.schema.json")
WRITE="/usr/bin/python3 $(dirname "$0")/chakra_write.py"
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done
names=()

dp() { # NAME-SUFFIX ARGS...: one run with a unique --name and a timeout
  local name="rl-wl-$$-$1"; shift
  names+=("$name")
  timeout 120 "$DP" --clock virtual --flows 0 --quiet --name "$name" --topology "$TOPO" "$@"
}
# FILE K: iteration K's time (us, 3 decimals) from a job report
iter_time() { awk -v k="$2" '$1 == "#" && $2 == "job:" && $4 == k":" { print $6 }' "$1"; }
# FILE NODE: the time(us) of the instance whose rank-0 node is NODE (first iteration)
inst_col() { awk -v n="$2" -v c="$3" '$1 == 1 && $2 == n { print $c; exit }' "$1"; }
# FILE: the time(us) column of a plain --coll's result line
coll_time() { awk '/^ +[0-9]+ +[0-9]+ +float/ { print $6; exit }' "$1"; }
# A B C ...: the sum, 3 decimals
sum3() { awk 'BEGIN { s = 0; for (i = 1; i < ARGC; i++) s += ARGV[i]; printf "%.3f", s }' "$@"; }
# A B TOL: |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; }

# compute 10 us, AllReduce, compute 5 us
$WRITE "$tmp/ar" ar2 262144
dp ar --workload "chakra:$tmp/ar" --json "$tmp/ar.json" > "$tmp/ar.txt" 2> "$tmp/ar.err"; rc=$?
dp arc --coll op=allreduce,hosts=h0+h1,sizes=262144 > "$tmp/arc.txt" 2>&1
t=$(inst_col "$tmp/ar.txt" 2 7) it=$(iter_time "$tmp/ar.txt" 1) want=$(sum3 10 "$t" 5)
check "chakra AllReduce: exit 0 ($rc), iteration $it us = 10 + $t + 5 = $want" \
  "[ $rc -eq 0 ] && [ -n '$t' ] && [ '$it' = '$want' ]"
check "  its collective's time $t us is --coll's $(coll_time "$tmp/arc.txt") us" \
  "near '$t' '$(coll_time "$tmp/arc.txt")' 0.005"
check "  compute critical path 15 us, exposed communication = the collective's time" \
  "grep -q 'compute critical path 15.000 us, exposed communication $t us' $tmp/ar.txt"

check "  --json: valid (the schema), its workload the text's ($it us, $t us)" "/usr/bin/python3 -c '
import json, sys, jsonschema
d = json.load(open(sys.argv[1])); jsonschema.validate(d, json.load(open(sys.argv[2])))
w = d[\"workload\"]
assert w[\"finished\"] and w[\"ranks\"] == 2 and len(w[\"iterations\"]) == 1
assert abs(w[\"iterations\"][0][\"time_us\"] - float(sys.argv[3])) < 5e-4
assert abs(w[\"communication\"][0][\"time_us\"] - float(sys.argv[4])) < 5e-4
' $tmp/ar.json $SCHEMA $it $t"

# an AllReduce of 1 MiB over 8 ranks (issue 41): the nccl-tests numbers of --coll
$WRITE "$tmp/ar8" ar8 1048576
dp ar8 --workload "chakra:$tmp/ar8" > "$tmp/ar8.txt" 2>&1; rc=$?
dp ar8c --coll op=allreduce,sizes=1M > "$tmp/ar8c.txt" 2>&1
got=$(awk '$1 == 1 && $2 == 1 { printf "%.1f %.2f", $7, $8 }' "$tmp/ar8.txt")
want=$(awk '/^ +[0-9]+ +[0-9]+ +float/ { printf "%.1f %.2f", $6, $8; exit }' "$tmp/ar8c.txt")
check "chakra AllReduce of 1 MiB over 8 ranks: exit 0 ($rc), time and busbw '$got' as --coll's '$want'" \
  "[ $rc -eq 0 ] && [ -n '$want' ] && [ '$got' = '$want' ]"

# Send/Recv
$WRITE "$tmp/p2p" p2p 1048576
dp p2p --workload "chakra:$tmp/p2p" > "$tmp/p2p.txt" 2>&1; rc=$?
t=$(inst_col "$tmp/p2p.txt" 2 7) it=$(iter_time "$tmp/p2p.txt" 1)
check "chakra Send/Recv: exit 0 ($rc), iteration $it us = 10 + $t, starts at 10 us" \
  "[ $rc -eq 0 ] && [ '$it' = '$(sum3 10 "$t")' ] && [ '$(inst_col "$tmp/p2p.txt" 2 6)' = 10.000 ]"

# process groups: two AllReduces on disjoint ranks overlap, both at 10 us
$WRITE "$tmp/grp" groups 262144
dp grp --workload "chakra:$tmp/grp,group=g0:0+1,group=g1:2+3" > "$tmp/grp.txt" 2>&1; rc=$?
starts=$(awk '$1 == 1 && $2 == 2 { printf "%s/%s ", $4, $6 }' "$tmp/grp.txt")
check "chakra process groups: exit 0 ($rc), two AllReduces of 2 ranks, both at 10 us ($starts)" \
  "[ $rc -eq 0 ] && [ '$starts' = '2/10.000 2/10.000 ' ]"

# ASTRA-sim DATA, 4 ranks, 2 iterations
dp astra --workload "astra:$DATA/workload-data4.txt,hosts=h0+h1+h2+h3,iters=2" > "$tmp/astra.txt" 2>&1; rc=$?
dp c256 --coll op=allreduce,hosts=h0+h1+h2+h3,sizes=262144 > "$tmp/c256.txt" 2>&1
dp c1m --coll op=allreduce,hosts=h0+h1+h2+h3,sizes=1048576 > "$tmp/c1m.txt" 2>&1
t2=$(inst_col "$tmp/astra.txt" 4 7) s1=$(inst_col "$tmp/astra.txt" 7 6) t1=$(inst_col "$tmp/astra.txt" 7 7)
it=$(iter_time "$tmp/astra.txt" 1)
check "astra DATA: exit 0 ($rc), compute critical path 5.8 us (by hand), 2 iterations" \
  "[ $rc -eq 0 ] && [ \$(grep -c 'compute critical path 5.800 us' $tmp/astra.txt) -eq 2 ]"
check "  layer 2's AllReduce at 2.2 us, layer 1's at its end ($s1 = 2.2 + $t2)" \
  "[ '$(inst_col "$tmp/astra.txt" 4 6)' = 2.200 ] && [ '$s1' = '$(sum3 2.2 "$t2")' ]"
check "  iteration $it us = 2.2 + $t2 + $t1" "[ '$it' = '$(sum3 2.2 "$t2" "$t1")' ]"
# (within 0.5 %: layer 1's collective is its NICs' second, whose QPs have other numbers, so
# other UDP source ports and other ECMP paths than a first collective's)
check "  the collectives' times are --coll's ($(coll_time "$tmp/c256.txt"), $(coll_time "$tmp/c1m.txt")) within 0.5 %" \
  "near '$t2' '$(coll_time "$tmp/c256.txt")' $(awk -v t="$t2" 'BEGIN { print t / 200 }') &&
   near '$t1' '$(coll_time "$tmp/c1m.txt")' $(awk -v t="$t1" 'BEGIN { print t / 200 }')"
dp cyc2 --workload "astra:$DATA/workload-data4.txt,hosts=h0+h1+h2+h3,cycle_ps=2000" > "$tmp/cyc.txt" 2>&1
check "  cycle_ps=2000: compute critical path 11.6 us" "grep -q 'compute critical path 11.600 us' $tmp/cyc.txt"

# rocelab-llm
LLM='llm:preset=llama3-8b,layers=2,tp=2,pp=2,dp=2,gbs=4,seq=1024,hidden=1024,ffn=2048,heads=8,kv_heads=8,vocab=32000'
dp llm --workload "$LLM" > "$tmp/llm.txt" 2>&1; rc=$?
check "llm TP 2 x PP 2 x DP 2: exit 0 ($rc), 8 ranks, one iteration" \
  "[ $rc -eq 0 ] && grep -q ': 8 ranks, ' $tmp/llm.txt && [ -n '$(iter_time "$tmp/llm.txt" 1)' ]"

# refused: exit 2 and where
refused() { # NAME WANT ARGS...: exit 2 and stderr holding WANT
  local name=$1 want=$2; shift 2
  dp "$name" --check "$@" > /dev/null 2> "$tmp/$name.err"; local rc=$?
  check "refused: $name: exit 2 ($rc), '$want'" "[ $rc -eq 2 ] && grep -qF -- '$want' $tmp/$name.err"
}
$WRITE "$tmp/bc" bcast; $WRITE "$tmp/mis" missing; $WRITE "$tmp/un" unmatched
refused bcast "$tmp/bc.0.et: node 2: BROADCAST: ne_coll cannot run it yet" --workload "chakra:$tmp/bc"
refused missing "$tmp/mis.1.et: node 3: depends on node 9" --workload "chakra:$tmp/mis"
refused unmatched "$tmp/un.0.et: node 1: Send to rank 1 (tag 0) has no matching Recv" --workload "chakra:$tmp/un"
# HYBRID_TRANSFORMER, model groups of 2 (h0+h1 on leaf0, h4+h5 on leaf1), data groups h0+h4 and
# h1+h5: per group the forward AllReduce (64 KiB), waited for, then after the input-gradient and
# weight-gradient computes (100 ns each) the weight-gradient AllReduce (256 KiB) of the data group
printf 'HYBRID_TRANSFORMER model_parallel_NPU_group: 2\n1\nl -1 100 ALLREDUCE 65536 100 NONE 0 100 ALLREDUCE 262144 1\n' > "$tmp/ht.txt"
dp ht --workload "astra:$tmp/ht.txt,hosts=h0+h1+h4+h5" > "$tmp/ht.txt.out" 2>&1; rc=$?
fwd=$(awk '$1 == 1 && $5 == 65536 && $4 == 2 { print $7; n++ } END { if (n != 2) print "x" }' "$tmp/ht.txt.out" | head -1)
check "astra HYBRID_TRANSFORMER: exit 0 ($rc), 2 forward AllReduces of 2 ranks, 2 weight-gradient ones starting at forward + 0.3 us" \
  "[ $rc -eq 0 ] && [ \$(awk '\$1 == 1 && \$4 == 2' $tmp/ht.txt.out | wc -l) -eq 4 ] && [ \$(awk -v f='$fwd' '\$1 == 1 && \$5 == 262144 && \$4 == 2 && \$6 == sprintf(\"%.3f\", 0.1 + f + 0.2)' $tmp/ht.txt.out | wc -l) -eq 2 ]"
printf 'DATA\n1\nl1 -1 1000 NONE 0 2000 NONE\n' > "$tmp/short.txt"
refused astra-line "$tmp/short.txt:3:" --workload "astra:$tmp/short.txt"
printf 'HYBRID_DATA_MODEL\n1\nl1 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1024 1\n' > "$tmp/model.txt"
refused astra-model "$tmp/model.txt:1:" --workload "astra:$tmp/model.txt"
refused too-many "the job has 2 ranks, but hosts= names 1 emulated host" --workload "chakra:$tmp/ar,hosts=h0"
refused kind "unknown kind" --workload "nccl:x"
refused no-group "grp.0.et: node 2: pg_name" --workload "chakra:$tmp/grp"
name="rl-wl-$$-live"; names+=("$name")
timeout 60 "$DP" --name "$name" --topology "$TOPO" --workload "chakra:$tmp/ar" > /dev/null 2> "$tmp/live.err"; rc=$?
check "refused: live clock: exit 2 ($rc)" "[ $rc -eq 2 ] && grep -q 'add --clock virtual' $tmp/live.err"

check "no DPDK runtime directory left behind" "[ $(dpdk_left "${names[@]}") -eq 0 ]"
tap_done
