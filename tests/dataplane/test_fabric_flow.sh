#!/usr/bin/env bash
# rocelab-dp --fabric flow (issue 42): the collectives on flow/'s max-min fair
# engine, over the paths the packet engine's switches choose.
#   - by hand: 2 hosts on one leaf (100 Gbit/s, 1 us links, path MTU 4096),
#     an AllGather of 1 MiB: each rank sends one 524,288 B transfer to the
#     other, on its own link directions. cts=off: the data's bytes
#     ceil(524288 x 8 / 100e9 s) = 41,944 ns, its latency 2 hops x (1,000 +
#     ceil((4,096 + 82) x 8 / 100) = 335) = 2,670 ns, then the ACK back, a
#     header-only packet: 2 x (1,000 + ceil(82 x 8 / 100) = 7) = 2,014 ns;
#     46,628 ns in all (flow/README.md: bytes / rate + latency). cts=on adds
#     the grant before the data, a header-only packet: 48,642 ns;
#   - NCCL's protocols and latencies, by hand: LL's wire bytes (x 16/8) on the
#     2 hosts, launch=nccl's hwLat per network step, LL128 over NVLink (wire
#     bytes, the cap, hwLat[NVLINK]); LL with launch=nccl at 16 ranks within
#     5 % of the packet engine's busbw;
#   - against the packet engine, 16 ranks on 4 leaves x 4 spines with 5-tuple
#     ECMP, 2 QPs per connection, AllReduce of 1-2 MiB: busbw within 3 % per
#     size (the flow engine leaves out the headers' share of the links and
#     the queues), and the same link directions carry traffic, 60 of the 64
#     (each QP's data, grants and ACKs take the paths the switches' hash
#     gives their frames: a set that misses one QP's path differs);
#   - PXN: with NVLink slowed to 40 Gbit/s, channel rings take the packet
#     engine's time within 1 % (each copy to the NIC's GPU counted);
#   - PCIe: with servers.pcie_rate 20G, below the NICs' links, the same rings
#     take the packet engine's time within 3 %;
#   - NVLink: 2 servers x 4 GPUs on one leaf, a 1 MiB AllReduce in 512 KiB
#     chunks: the 6 in-server connections' 84 transfers never enter the
#     fabric ("# nvlink:" line as the packet engine's), busbw within 3 %;
#   - the byte check catches a flow's bytes taken out of one link's count on
#     purpose (ROCELAB_AUDIT_STEAL, test only) and names the link, also in a run
#     stopped with the collective still on the fabric;
#   - one fabric for the run: two collectives at once on one shared link
#     take the time of half its rate, on disjoint links their time alone;
#     iterations run on the fabric as it is (and as the first on an idle one);
#     the link table's util%; jobs (--jobs) share it: packed, each keeps
#     its time alone; spread over the spine, both slow down;
#   - inplace=on: the in-place pass by hand too, its counters line prefixed;
#   - no packet pool beyond 1,024 frames, whatever --mbufs says (no frame is sent);
#   - a run stopped by --duration with a collective on the flow fabric: exit 1,
#     and (under AddressSanitizer) nothing leaked;
#   - analytical: a ring AllReduce on one idle leaf within 1 % of
#     2(n-1)/n x S / link rate (time) and of the link rate (busbw);
#   - a refill period (flow,refill=): its counters, and the exact times where
#     every change touches every flow;
#   - refused with exit 2 and the reason: an incast (E4's PFC and buffers),
#     flowlet switching (E3), the PFC watchdog, --gen beside the collective,
#     and a bad --fabric value or refill period.
# usage: test_fabric_flow.sh ROCELAB_DP ROCELAB_TOPO
set -u
DP=$1 TOPO_TOOL=$2
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done
names=()

dp() { # NAME-SUFFIX ARGS...: one run with a unique --name and a timeout
  local name="rl-flow-$$-$1"; shift
  names+=("$name")
  timeout 120 "$DP" --clock virtual --flows 0 --name "$name" "$@"
}
# JSON FIELD: each size's FIELD of the first collective, one a line
sizes() { /usr/bin/python3 -c "
import json, sys
for s in json.load(open(sys.argv[1]))['collectives'][0]['sizes']: print(s[sys.argv[2]])" "$1" "$2"; }
# JSON: the link directions with packets, one a line, sorted
busy_links() { /usr/bin/python3 -c "
import json, sys
print('\n'.join(sorted(l['from'] + '>' + l['to'] for l in json.load(open(sys.argv[1]))['links'] if l['packets'])))" "$1"; }

"$TOPO_TOOL" --generate spines=1,leaves=1,hosts=2,attach=emulated,host-mtu=9000 -o "$tmp/two.yaml" > /dev/null
for cts in off:46.628 on:48.642; do
  dp "two-${cts%:*}" --topology "$tmp/two.yaml" --fabric flow --json "$tmp/two.json" \
    --coll "op=allgather,sizes=1M,data=off,qps=1,cts=${cts%:*}" > "$tmp/two.txt" 2>&1; rc=$?
  t=$(sizes "$tmp/two.json" time_us 2> /dev/null)
  check "2 hosts, one transfer each, cts=${cts%:*}: exit 0 ($rc), ${cts#*:} us by hand, got $t" \
    "[ $rc -eq 0 ] && [ '$t' = '${cts#*:}' ]"
done
# inplace=on: the in-place pass runs on the flow fabric too, the same transfer by
# hand (46.628 us, an idle fabric again); one line with both halves, then the
# out-of-place pass's lines (counters, active QPs, latency) and the in-place
# pass's counters line, prefixed
dp two-inplace --topology "$tmp/two.yaml" --fabric flow \
  --coll "op=allgather,sizes=1M,data=off,qps=1,cts=off,inplace=on" > "$tmp/inplace.txt" 2>&1; rc=$?
check "inplace=on on the flow fabric: exit 0 ($rc), both halves 46.63 us by hand, the line before both counters lines" \
  "[ $rc -eq 0 ] && grep -Eq '^ +1048576 .* 46\.63 .* N/A +46\.63 .* N/A\$' $tmp/inplace.txt &&
   grep -A1 -E '^ +1048576 ' $tmp/inplace.txt | sed -n 2p | grep -q '^# flow engine: flows ' &&
   grep -A4 -E '^ +1048576 ' $tmp/inplace.txt | sed -n 5p | grep -q '^# in-place: flow engine: flows '"
# The byte check is not blind: ROCELAB_AUDIT_STEAL (test only, dp_audit.h) takes the
# next flow delivered over h0>leaf0 out of that link's count (flow/'s fl_test_steal):
# its 524,288 B are named on that link, exit 1 under ROCELAB_AUDIT=fatal.
ROCELAB_AUDIT=fatal ROCELAB_AUDIT_STEAL='h0>leaf0' ROCELAB_AUDIT_LOG= dp two-steal --topology "$tmp/two.yaml" \
  --fabric flow --coll "op=allgather,sizes=1M,data=off,qps=1,cts=off" > /dev/null 2> "$tmp/steal.err"; rc=$?
check "a flow's bytes stolen on h0>leaf0 are named there (rc $rc)" \
  "[ $rc -eq 1 ] && grep -q '^rocelab-dp: AUDIT: flow engine, link h0>leaf0: 524288 byte(s) unaccounted (sent 524288 = delivered 0 + in flight 0)' $tmp/steal.err"
# ... and in a run stopped (--duration 70us, in the second of 3 iterations of 46.6 us)
# while the collective is still on the flow fabric: checked before the report's verdict.
ROCELAB_AUDIT=fatal ROCELAB_AUDIT_STEAL='h0>leaf0' ROCELAB_AUDIT_LOG= dp two-steal-stop --topology "$tmp/two.yaml" \
  --fabric flow --duration 70us --coll "op=allgather,sizes=1M,data=off,qps=1,cts=off,iters=3" \
  > /dev/null 2> "$tmp/steal-stop.err"; rc=$?
check "stopped with the collective on the fabric: the stolen bytes named, in the verdict (rc $rc)" \
  "[ $rc -eq 1 ] && grep -q '^rocelab-dp: AUDIT: flow engine, link h0>leaf0: 524288 byte(s) unaccounted' $tmp/steal-stop.err && grep -q 'AUDIT: WARNING: 1 place' $tmp/steal-stop.err"
# A run stopped (--duration) while a collective is on the flow fabric: exit 1, the
# collective named as unfinished, and the fabric and its replays freed at exit
# (dp_flowrun_free: under AddressSanitizer's leak check, 44 blocks were lost).
dp two-stop --topology "$tmp/two.yaml" --fabric flow --duration 10us \
  --coll "op=allgather,sizes=1M,data=off,qps=1,cts=off" > "$tmp/stop.out" 2> "$tmp/stop.err"; rc=$?
check "stopped at 10 us with the collective on the flow fabric: exit 1 ($rc), nothing leaked" \
  "[ $rc -eq 1 ] && ! grep -q 'LeakSanitizer' $tmp/stop.err"
# no frame is sent: the packet pool is 1,024 frames whatever --mbufs asks for
# (the packet engine's 131,071 jumbo frames would be 1.3 GB zeroed at set-up)
dp two-pool --topology "$tmp/two.yaml" --fabric flow --mbufs 4095 \
  --coll "op=allgather,sizes=1M,data=off,qps=1,cts=off" > "$tmp/pool.out" 2>&1; rc=$?
check "--mbufs 4095 with --fabric flow: exit 0 ($rc), a pool of 1024 frames" \
  "[ $rc -eq 0 ] && grep -q 'packet pool 1024 frames' $tmp/pool.out"
dp two-pool-pkt --topology "$tmp/two.yaml" --fabric packet --mbufs 4095 --duration 1ms \
  --coll "op=allgather,sizes=1M,data=off,qps=1,cts=off" > "$tmp/pool-pkt.out" 2>&1; rc=$?
check "--mbufs 4095 with the packet engine: its pool of 4095 frames" \
  "grep -q 'packet pool 4095 frames' $tmp/pool-pkt.out"
# launch= (NCCL's fixed cost before each collective) counts as in the packet
# engine: the same transfer, 5 us later
dp two-launch --topology "$tmp/two.yaml" --fabric flow --json "$tmp/launch.json" \
  --coll "op=allgather,sizes=1M,data=off,qps=1,cts=off,launch=5us" > /dev/null 2>&1; rc=$?
t=$(sizes "$tmp/launch.json" time_us 2> /dev/null)
check "launch=5us: exit 0 ($rc), 46.628 + 5 = 51.628 us, got $t" "[ $rc -eq 0 ] && [ '$t' = 51.628 ]"
# NCCL's LL protocol (model=nccl,NCCL_PROTO=LL) puts 16 wire bytes on the link
# per 8 data bytes (nc_tune_wire_bytes): a 16 KiB AllGather on the 2 hosts is one
# 8,192 B transfer each way, 16,384 B on the wire. model=nccl always grants:
# its 64 B FIFO entry is a flow on the reverse path, ceil(64 x 8 / 100) = 6 ns
# + 2 x (1,000 + ceil((64 + 82) x 8 / 100) = 12) = 2,030 ns; then the data
# ceil(16,384 x 8 / 100) = 1,311 + 2,670 = 3,981 ns; then the ACK, 2,014 ns:
# 8,025 ns (with the data bytes on the wire: 7,370). The GPU's write of the
# 8,192 B at LL's cap (ne_coll_proto_cap_Bps) overlaps the grant's wait.
ll='op=allgather,sizes=16K,data=off,model=nccl,NCCL_PROTO=LL'
dp two-ll --topology "$tmp/two.yaml" --fabric flow --json "$tmp/ll.json" --coll "$ll" > /dev/null 2>&1; rc=$?
t=$(sizes "$tmp/ll.json" time_us 2> /dev/null)
check "LL's wire bytes, one transfer each way: exit 0 ($rc), 8.025 us by hand, got $t" "[ $rc -eq 0 ] && [ '$t' = 8.025 ]"
# launch=nccl adds NCCL's baseLat once and its hwLat per step (nccl/nc_tune.c,
# from NCCL's src/graph/tuning.cc: ring LL baseLat 6.6 us, hwLat[NET] 2.7 us):
# a network transfer is consumed 2.7 us after its last byte came in. A 16 KiB
# AllReduce on the 2 hosts is 2 steps of one transfer each, the second sent
# when the first is consumed: 6,600 + 2,700 (the first step's wait, on the
# chain) + 2,700 - 2,014 (the last step's wait outlasts its ACK, which ends
# the iteration without it) = 9,986 ns more, exact (every time is whole ns).
for l in off nccl; do
  dp "two-step-$l" --topology "$tmp/two.yaml" --fabric flow --json "$tmp/step-$l.json" \
    --coll "op=allreduce,sizes=16K,data=off,model=nccl,NCCL_PROTO=LL,launch=$l" > /dev/null 2>&1
done
t0=$(sizes "$tmp/step-off.json" time_us 2> /dev/null) t1=$(sizes "$tmp/step-nccl.json" time_us 2> /dev/null)
check "launch=nccl, LL ring of 2 steps: 6.6 + 2.7 + 0.686 = 9.986 us more ($t0 -> $t1 us)" \
  "[ -n '$t0' ] && [ -n '$t1' ] && awk 'BEGIN { exit !(sprintf(\"%.3f\", $t1 - $t0) == \"9.986\") }'"
# grants and ACKs are header-only: timers, not flows, so the engine's flows
# are the 2 data parts only (its events: their 2 starts and 2 ends)
check "the counters line (cts=on): 2 flows (the data), 4 timers (2 grants, 2 ACKs), 4 events, 4 link directions" \
  "grep -q '^# flow engine: flows 2 (data 2 for 2 parts), header-only timers 4, events 4, .* links crossed 4, ' $tmp/two.txt"

# the link table counts every iteration, as the packet engine's does (the flow
# engine runs one and repeats it): h0>leaf0's bytes with iters=4 are 4 x iters=1's
link_bytes() { python3 -c "
import json, sys
print(sum(l['bytes'] for l in json.load(open(sys.argv[1]))['links'] if l['from'] == 'h0' and l['to'] == 'leaf0'))" "$1"; }
for it in 1 4; do
  dp "two-iters$it" --topology "$tmp/two.yaml" --fabric flow --json "$tmp/iters$it.json" \
    --coll "op=allgather,sizes=1M,data=off,qps=1,iters=$it" > /dev/null 2>&1
done
b1=$(link_bytes "$tmp/iters1.json" 2> /dev/null) b4=$(link_bytes "$tmp/iters4.json" 2> /dev/null)
check "the link table, iters=4: h0>leaf0 $b4 B = 4 x iters=1's $b1 B" "[ -n '$b1' ] && [ '$b1' -gt 0 ] && [ '$b4' -eq \$((4 * $b1)) ]"

# One flow fabric for the run (issue 42): collectives that run at once share
# its links. 2 leaves x 2 hosts, one spine, every link 100 Gbit/s and 1 us.
# A sendrecv of 1 MiB (two 524,288 B transfers, one after the other on its
# one QP; cts=off) from h0 to h2 crosses 4 links: alone, each transfer's
# bytes take ceil(524,288 x 8 / 100) = 41,944 ns, so 2 x 41,944 + the data's
# latency 4 x (1,000 + 335) = 5,340 + the ACK's 4 x (1,000 + 7) = 4,028:
# 93,256 ns. With h1 to h3's the same at once, both cross leaf0>spine0 and
# spine0>leaf1 at 50 Gbit/s each: 2 x ceil(83,886.08) = 167,774 + 9,368 =
# 177,142 ns for both. On disjoint links (h1 to h0 beside h2 to h3: 2 hops,
# 2 x 41,944 + 2,670 + 2,014 = 88,572 ns) each keeps its time alone exactly.
"$TOPO_TOOL" --generate spines=1,leaves=2,hosts=2,attach=emulated,host-mtu=9000 -o "$tmp/l2.yaml" > /dev/null
sr() { echo "op=sendrecv,hosts=$1,pairs=0>1,sizes=1M,data=off,qps=1,cts=off${2-}"; }
# JSON: each collective's first size's time_us, one a line
times() { /usr/bin/python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['collectives']: print(c['sizes'][0]['time_us'])" "$1"; }
share() { # ID WHAT EXPECTED-TIMES COLL...: the collectives at once, each one's time
  local id=$1 n=$2 want=$3; shift 3
  local args=()
  for c in "$@"; do args+=(--coll "$c"); done
  dp "share-$id" --topology "$tmp/l2.yaml" --fabric flow --json "$tmp/share-$id.json" "${args[@]}" \
    > "$tmp/share-$id.txt" 2>&1; local rc=$?
  local got; got=$(times "$tmp/share-$id.json" 2> /dev/null | tr '\n' ' ')
  check "one fabric, $n: exit 0 ($rc), times $want us, got $got" "[ $rc -eq 0 ] && [ '$got' = '$want ' ]"
}
share alone alone "93.256" "$(sr h0+h2)"
share shared "one link shared (half rate each)" "177.142 177.142" "$(sr h0+h2)" "$(sr h1+h3)"
share alone2 "h1>h0 alone" "88.572" "$(sr h1+h0)"
share disjoint "disjoint links (the time alone)" "88.572 88.572" "$(sr h1+h0)" "$(sr h2+h3)"
# iterations follow one another on the fabric as it is: h0 to h2's first of
# 2 shares the link with h1 to h3's one (177,142 ns), its second runs alone
# (93,256 ns): mean 135,199 ns. Alone, 1 warm-up + 4 take the first's time each.
share iters2 "2 iterations, the first shared" "135.199 177.142" "$(sr h0+h2 ,iters=2)" "$(sr h1+h3)"
share iters5 "idle fabric, 5 iterations" "93.256" "$(sr h0+h2 ,warmup=1,iters=4)"
# A refill period (--fabric flow,refill=200us): between refills only the flows
# on the links that changed get new rates. Here every change (both transfers
# start, end, and the next start, at the same instants) touches both flows
# and all their links, so each local fill is the exact one: the shared
# link's times, 177.142 us each (flow/'s tests give the cases where it is not).
dp refill --topology "$tmp/l2.yaml" --fabric flow,refill=200us --json "$tmp/refill.json" \
  --coll "$(sr h0+h2)" --coll "$(sr h1+h3)" > "$tmp/refill.txt" 2>&1; rc=$?
got=$(times "$tmp/refill.json" 2> /dev/null | tr '\n' ' ')
check "refill=200us, one link shared: exit 0 ($rc), the exact times 177.142 177.142 us, got $got" \
  "[ $rc -eq 0 ] && [ '$got' = '177.142 177.142 ' ]"
check "refill=200us: the counters line gives the period and its local fills" \
  "grep -Eq 'refill every 200000 ns \([1-9][0-9]* local fills of the changed links. flows\)' $tmp/refill.txt"
check "idle fabric, 5 iterations: the run's clock ends at 5 x 93.256 us" \
  "grep -q 'ran 0.000466 s (virtual)' $tmp/share-iters5.txt"
# the link table's util% is each link's busy time: payload and packets'
# 82 B wire overhead at its rate, over the run (h0>leaf0 alone: (1,048,576 +
# 256 x 82) x 8 / 100 = 85,565 ns of 93,256 ns: 91.8 %)
check "the link table's util% for h0>leaf0: 91.8" \
  "grep -Eq '^h0>leaf0 +up +256 +1048576 +91.8 ' $tmp/share-alone.txt"

# Jobs (--jobs, --workload) on the one flow fabric: two jobs of 4 GPUs, each
# the ASTRA-sim DATA file data/workload-data4.txt (2 AllReduces), on 2 leaves
# x 4 hosts under one spine (test_jobs.sh's fabric). Packed (a job a leaf),
# they share no link: each keeps its time alone exactly (slowdown 0.00 %),
# and alone is a plain --workload run's time on its hosts. Spread (both rings
# cross leaf0-spine0-leaf1), they share the leaves' uplinks: both slow down.
DATA=$(dirname "$0")/data
W=$(realpath "$DATA/workload-data4.txt")
jobs_file() { # POLICY: two jobs of 4 GPUs
  printf 'policy: %s\njobs:\n  - {name: a, workload: "astra:%s", gpus: 4}\n  - {name: b, workload: "astra:%s", gpus: 4}\n' \
    "$1" "$W" "$W"
}
# FILE JOB: from the job's "# jobs: NAME: ..." line, "hosts alone mix slowdown"
job_line() {
  sed -n "s/^# jobs: $2: .* (\([h0-9+]*\)), arrival .*: iteration 1 alone \([0-9.]*\) us, in the mix \([0-9.]*\) us, slowdown \([-0-9.]*\) %\$/\1 \2 \3 \4/p" "$1"
}
for pol in packed spread; do
  jobs_file $pol > "$tmp/$pol.yaml"
  names+=("rl-flow-$$-jobs-$pol-alone0" "rl-flow-$$-jobs-$pol-alone1")
  dp "jobs-$pol" --quiet --topology "$DATA/two-leaves-one-spine.yaml" --fabric flow --jobs "$tmp/$pol.yaml" \
    > "$tmp/jobs-$pol.txt" 2>&1
  echo "$pol: exit $?" >> "$tmp/jobs-rc"
done
check "jobs: both mixes exit 0" "grep -c ': exit 0' $tmp/jobs-rc | grep -qx 2"
pa=$(job_line "$tmp/jobs-packed.txt" a) pb=$(job_line "$tmp/jobs-packed.txt" b)
sa=$(job_line "$tmp/jobs-spread.txt" a) sb=$(job_line "$tmp/jobs-spread.txt" b)
plain=$(dp jobs-plain --quiet --topology "$DATA/two-leaves-one-spine.yaml" --fabric flow \
  --workload "astra:$W,hosts=h0+h1+h2+h3" 2> /dev/null | awk '$2 == "job:" && $4 == "1:" { print $6 }')
check "jobs packed: a ($pa) and b ($pb) keep their time alone in the mix (0.00 %), a plain --workload run's ($plain)" \
  "(set -- $pa; [ \$2 = \$3 ] && [ \$4 = 0.00 ] && [ \$2 = '$plain' ]) && (set -- $pb; [ \$2 = \$3 ] && [ \$4 = 0.00 ])"
check "jobs spread: a ($sa) and b ($sb) slow down in the mix (the shared uplinks)" \
  "(set -- $sa; [ \$4 != 0.00 ] && awk -v a=\$2 -v m=\$3 'BEGIN { exit !(m > a) }') && (set -- $sb; awk -v a=\$2 -v m=\$3 'BEGIN { exit !(m > a) }')"

# NCCL's split over 16 QPs on those 2 hosts: every QP's data takes the one
# path (host, leaf, host), so each transfer's 16 parts go as one flow of
# weight 16 (flow/README.md): D data flows for 16 x D parts, one 64 B grant
# flow per transfer (2 x D flows in all) and one ACK timer per part
dp two-q16 --topology "$tmp/two.yaml" --fabric flow \
  --coll 'op=allgather,sizes=1M,data=off,model=nccl,NCCL_IB_QPS_PER_CONNECTION=16,NCCL_IB_SPLIT_DATA_ON_QPS=1' \
  > "$tmp/two-q16.txt" 2>&1; rc=$?
fdp=$(sed -n 's/^# flow engine: flows \([0-9]*\) (data \([0-9]*\) for \([0-9]*\) parts), header-only timers \([0-9]*\),.*/\1 \2 \3 \4/p' "$tmp/two-q16.txt")
check "16 QPs on one path: exit 0 ($rc), one flow per transfer: flows, data, parts, timers = 2D, D, 16D, 16D ($fdp)" \
  "[ $rc -eq 0 ] && (set -- $fdp; [ \$2 -gt 0 ] && [ \$1 -eq \$((2 * \$2)) ] && [ \$3 -eq \$((16 * \$2)) ] && [ \$4 -eq \$3 ])"

# Analytical (issue 42): a ring AllReduce of S = 256 MiB over n = 8 hosts on one
# leaf (idle, non-blocking: every host link 100 Gbit/s = 12.5 GB/s) sends
# 2(n-1)/n x S bytes on each host link, so its time is 2(n-1)/n x S / 12.5e9 s
# = 37,580.0 us and its busbw (nccl-tests: algbw x 2(n-1)/n) is 12.5 GB/s.
# 16 MiB chunks keep the per-chunk latency (2.7 us) under 1 % of a chunk's
# 1,342 us on the wire: both within 1 %.
"$TOPO_TOOL" --generate spines=1,leaves=1,hosts=8,attach=emulated,host-mtu=9000 -o "$tmp/one8.yaml" > /dev/null
dp ring8 --topology "$tmp/one8.yaml" --fabric flow --json "$tmp/ring8.json" \
  --coll 'op=allreduce,sizes=256M,data=off,qps=1,chunk=16M' > /dev/null 2>&1; rc=$?
got=$(paste <(sizes "$tmp/ring8.json" time_us) <(sizes "$tmp/ring8.json" busbw_GBps) 2> /dev/null)
check "ring AllReduce, 8 hosts on one leaf, 256 MiB: exit 0 ($rc), time and busbw within 1 % of 37580.0 us and 12.5 GB/s ($got)" \
  "[ $rc -eq 0 ] && echo '$got' | awk 'NF == 2 { t = \$1 / 37580.0 - 1; b = \$2 / 12.5 - 1; ok = t > -0.01 && t < 0.01 && b > -0.01 && b < 0.01 } END { exit !ok }'"

"$TOPO_TOOL" --generate spines=4,leaves=4,hosts=4,attach=emulated,host-mtu=9000 -o "$tmp/c16.yaml" > /dev/null
COLL='op=allreduce,sizes=1M:2M,data=off,qps=2'
for fab in packet flow; do
  dp "$fab" --topology "$tmp/c16.yaml" --fabric "$fab" --coll "$COLL" --json "$tmp/$fab.json" \
    > "$tmp/$fab.txt" 2>&1
  echo "$fab: exit $?" >> "$tmp/rc"
done
check "16 ranks: both engines exit 0" "grep -c ': exit 0' $tmp/rc | grep -qx 2"
paste <(sizes "$tmp/packet.json" busbw_GBps) <(sizes "$tmp/flow.json" busbw_GBps) > "$tmp/bw"
echo "# busbw packet flow: $(tr '\t\n' ' ;' < "$tmp/bw")"
check "16 ranks: 2 sizes, busbw within 3 % of the packet engine's at each" \
  "[ \$(wc -l < $tmp/bw) -eq 2 ] && awk '{ e = (\$2 - \$1) / \$1; if (e < -0.03 || e > 0.03) bad++ } END { exit bad > 0 }' $tmp/bw"
busy_links "$tmp/packet.json" > "$tmp/packet.links"
busy_links "$tmp/flow.json" > "$tmp/flow.links"
check "16 ranks: the same $(wc -l < "$tmp/flow.links") of 64 link directions carry traffic on both" \
  "[ \$(wc -l < $tmp/flow.links) -lt 64 ] && cmp -s $tmp/packet.links $tmp/flow.links"

# The same 16 ranks with NCCL's LL and launch=nccl: the LL wire bytes (x 2), the
# GPU's write at LL's cap before each post, baseLat and each network step's
# hwLat on both engines: busbw within 5 % per size (without them the flow
# engine's was 2.1 times the packet engine's at both).
COLL='op=allreduce,sizes=1M:2M,data=off,qps=2,model=nccl,launch=nccl,NCCL_PROTO=LL'
for fab in packet flow; do
  dp "ll-$fab" --topology "$tmp/c16.yaml" --fabric "$fab" --coll "$COLL" --json "$tmp/ll-$fab.json" > /dev/null 2>&1
  echo "ll-$fab: exit $?" >> "$tmp/rc-ll"
done
paste <(sizes "$tmp/ll-packet.json" busbw_GBps) <(sizes "$tmp/ll-flow.json" busbw_GBps) > "$tmp/bw-ll"
echo "# busbw packet flow (LL, launch=nccl): $(tr '\t\n' ' ;' < "$tmp/bw-ll")"
check "16 ranks, LL and launch=nccl: both exit 0, 2 sizes, busbw within 5 % of the packet engine's at each" \
  "[ \$(grep -c ': exit 0' $tmp/rc-ll) -eq 2 ] && [ \$(wc -l < $tmp/bw-ll) -eq 2 ] && awk '{ e = (\$2 - \$1) / \$1; if (e < -0.05 || e > 0.05) bad++ } END { exit bad > 0 }' $tmp/bw-ll"

# Per QP: 4 ranks on 2 leaves x 2 hosts, 4 spines, 2 QPs: the flow table's
# (--json, its 20 flows with most bytes) path of each flow both engines list
# (data, ACK and grant QPs: src:sport > dst qp N) is the same.
"$TOPO_TOOL" --generate spines=4,leaves=2,hosts=2,attach=emulated,host-mtu=9000 -o "$tmp/c4.yaml" > /dev/null
for fab in packet flow; do
  dp "c4-$fab" --flows 1000 --topology "$tmp/c4.yaml" --fabric "$fab" --json "$tmp/c4-$fab.json" \
    --coll 'op=allreduce,sizes=1M,data=off,qps=2' > /dev/null 2>&1
done
same=$(/usr/bin/python3 -c "
import json, sys
p, q = ({f['flow']: f['path'] for f in json.load(open(a))['flows']['top']} for a in sys.argv[1:])
both = set(p) & set(q)
print(len(both), sum(p[k] != q[k] for k in both), sum(' > spine' in p[k] for k in both))" \
  "$tmp/c4-packet.json" "$tmp/c4-flow.json" 2> /dev/null)
check "4 ranks, per QP: 16 or more flows in both tables, none on another path, some across spines ($same)" \
  "(set -- $same; [ \$1 -ge 16 ] && [ \$2 -eq 0 ] && [ \$3 -ge 4 ])"

"$TOPO_TOOL" --generate servers=2,gpus=4,layout=meta,spines=2 -o "$tmp/meta.yaml" > /dev/null
for fab in packet flow; do
  dp "nvl-$fab" --topology "$tmp/meta.yaml" --fabric "$fab" --json "$tmp/nvl-$fab.json" \
    --coll 'op=allreduce,sizes=1M,chunk=512K,data=off' > "$tmp/nvl-$fab.txt" 2>&1
done
bw=$(paste <(sizes "$tmp/nvl-packet.json" busbw_GBps) <(sizes "$tmp/nvl-flow.json" busbw_GBps) 2> /dev/null)
check "NVLink: 84 transfers of 11010048 bytes, 6 of 8 connections, on both engines" \
  "[ \$(cat $tmp/nvl-packet.txt $tmp/nvl-flow.txt | grep -xc '# nvlink: transfers 84, bytes 11010048, connections 6 of 8') -eq 2 ]"
check "NVLink: busbw within 3 % ($bw)" \
  "echo '$bw' | awk 'NF == 2 { e = (\$2 - \$1) / \$1; ok = e > -0.03 && e < 0.03 } END { exit !ok }'"

# NVLink with LL128 and launch=nccl, by hand: 2 GPUs of one server (450 GB/s
# NVLink), a 1 MiB AllReduce is 2 steps of one 524,288 B transfer each way.
# Each carries LL128's wire bytes, 4,370 lines of 120 data bytes x 128 =
# 559,360 B: ceil(1,243.02) = 1,244 ns at 450 GB/s, over the data's 1,191 ns at
# LL128's cap (12 channels x 36.7 GB/s = 440.4 GB/s); its hop takes NCCL's
# hwLat[NVLINK] of ring LL128, 1.9 us, in place of the 0.6 us nvlink_latency;
# plus baseLat 14 us (nccl/nc_tune.c): 14,000 + 2 x (1,244 + 1,900) = 20,288 ns
# (the packet engine's time too), and the "# nvlink:" line counts wire bytes.
"$TOPO_TOOL" --generate servers=1,gpus=2,layout=meta,spines=1 -o "$tmp/s1.yaml" > /dev/null
dp nvl-ll128 --topology "$tmp/s1.yaml" --fabric flow --json "$tmp/nvl-ll128.json" \
  --coll 'op=allreduce,sizes=1M,data=off,model=nccl,launch=nccl,NCCL_PROTO=LL128' > "$tmp/nvl-ll128.txt" 2>&1; rc=$?
t=$(sizes "$tmp/nvl-ll128.json" time_us 2> /dev/null)
check "NVLink, LL128 and launch=nccl: exit 0 ($rc), 20.288 us by hand, got $t; 4 transfers of 2237440 wire bytes" \
  "[ $rc -eq 0 ] && [ '$t' = 20.288 ] && grep -qx '# nvlink: transfers 4, bytes 2237440, connections 2 of 2' $tmp/nvl-ll128.txt"

# channel rings (order=nccl on whole servers): each network hop leaves on its channel's NIC (PXN);
# the flow engine traces the QPs from that NIC, as the packet engine sends from it
cr='model=nccl,op=allreduce,sizes=4M,order=nccl,channels=4,data=off'
for fab in packet flow; do
  dp "cr-$fab" --flows 1000 --topology "$tmp/meta.yaml" --fabric "$fab" --json "$tmp/cr-$fab.json" --coll "$cr" \
    > "$tmp/cr-$fab.txt" 2>&1
done
same=$(/usr/bin/python3 -c "
import json, sys
p, q = ({f['flow']: f['path'] for f in json.load(open(a))['flows']['top']} for a in sys.argv[1:])
both = set(p) & set(q)
print(len(p), len(both), sum(p[k] != q[k] for k in both))" "$tmp/cr-packet.json" "$tmp/cr-flow.json" 2> /dev/null)
check "channel rings: every packet-engine QP flow traced by the flow engine, none on another path ($same)" \
  "(set -- $same; [ \$1 -ge 16 ] && [ \$2 -eq \$1 ] && [ \$3 -eq 0 ])"
bw=$(paste <(sizes "$tmp/cr-packet.json" busbw_GBps) <(sizes "$tmp/cr-flow.json" busbw_GBps) 2> /dev/null)
check "channel rings: busbw within 5 % ($bw)" \
  "echo '$bw' | awk 'NF == 2 { e = (\$2 - \$1) / \$1; ok = e > -0.05 && e < 0.05 } END { exit !ok }'"
# PXN: a network transfer whose GPU is not its channel's NIC's first crosses
# NVLink to that GPU, on its egress, before the NIC sends it (ne_coll_nvlink.c).
# With NVLink slowed to 40 Gbit/s that copy sets the time: the flow engine
# counts the copies and takes the packet engine's time (without the copy it was
# 25 % faster: 1101.7 against 1479.0 us)
sed 's/^servers: {gpus_per_server: 4}/servers: {gpus_per_server: 4, nvlink_rate: 40G}/' "$tmp/meta.yaml" > "$tmp/slow.yaml"
for fab in packet flow; do
  dp "pxn-$fab" --topology "$tmp/slow.yaml" --fabric "$fab" --json "$tmp/pxn-$fab.json" --coll "$cr" \
    > "$tmp/pxn-$fab.txt" 2>&1
done
t=$(paste <(sizes "$tmp/pxn-packet.json" time_us) <(sizes "$tmp/pxn-flow.json" time_us) 2> /dev/null)
check "PXN over a 40G NVLink: the flow engine counts its copies and takes the packet engine's time within 1 % ($t)" \
  "grep -q 'PXN copies [1-9]' $tmp/pxn-flow.txt && grep -q 'nvlink_rate: 40G' $tmp/slow.yaml &&
   echo '$t' | awk 'NF == 2 { e = (\$2 - \$1) / \$1; ok = e > -0.01 && e < 0.01 } END { exit !ok }'"
# a GPU's NIC sends no faster than its PCIe (servers.pcie_rate, dp_nic.c's
# line rate): at 20G the host links' flows get 20G, and the time is the
# packet engine's within 3 % (the headers' share); before, 4.9x faster
sed 's/^servers: {gpus_per_server: 4}/servers: {gpus_per_server: 4, pcie_rate: 20G}/' "$tmp/meta.yaml" > "$tmp/pcie.yaml"
for fab in packet flow; do
  dp "pcie-$fab" --topology "$tmp/pcie.yaml" --fabric "$fab" --json "$tmp/pcie-$fab.json" --coll "$cr" \
    > /dev/null 2>&1
done
t=$(paste <(sizes "$tmp/pcie-packet.json" time_us) <(sizes "$tmp/pcie-flow.json" time_us) 2> /dev/null)
check "PCIe at 20G below the NIC's link: the flow engine's time within 3 % of the packet engine's ($t)" \
  "grep -q 'pcie_rate: 20G' $tmp/pcie.yaml &&
   echo '$t' | awk 'NF == 2 { e = (\$2 - \$1) / \$1; ok = e > -0.03 && e < 0.03 } END { exit !ok }'"

refused() { # NAME WHAT-STDERR-SAYS ARGS...: exit 2 and the reason
  local n=$1 why=$2; shift 2
  dp "$n" --fabric flow "$@" > "$tmp/$n.out" 2>&1; local rc=$?
  check "refused, $n: exit 2 ($rc), says '$why'" "[ $rc -eq 2 ] && grep -q -- '$why' $tmp/$n.out"
}
refused incast "op=incast: an incast is decided by PFC" --topology "$tmp/c16.yaml" \
  --coll 'op=incast,sizes=1M,data=off'
"$TOPO_TOOL" --generate spines=2,leaves=2,hosts=2,attach=emulated,host-mtu=9000,lb=flowlet \
  -o "$tmp/flowlet.yaml" > /dev/null
refused data "data=on (the default): flows move no bytes" --topology "$tmp/c16.yaml" \
  --coll 'op=allreduce,sizes=1M'
refused flowlet "balances by flowlets" --topology "$tmp/flowlet.yaml" --coll 'op=allreduce,sizes=1M,data=off'
refused watchdog "not with --pfc-watchdog" --topology "$tmp/c16.yaml" --pfc-watchdog \
  --coll 'op=allreduce,sizes=1M,data=off'
refused gen "not with --gen" --topology "$tmp/c16.yaml" --coll 'op=allreduce,sizes=1M,data=off' \
  --gen 'h0>h4:proto=roce,count=10'
dp badvalue --topology "$tmp/c16.yaml" --fabric fluid --coll 'op=allreduce,sizes=1M,data=off' \
  > "$tmp/bad.out" 2>&1; rc=$?
check "--fabric fluid: exit 2 ($rc), names the value" "[ $rc -eq 2 ] && grep -q \"'fluid'\" $tmp/bad.out"
dp badrefill --topology "$tmp/c16.yaml" --fabric flow,refill=2s --coll 'op=allreduce,sizes=1M,data=off' \
  > "$tmp/badrefill.out" 2>&1; rc=$?
check "--fabric flow,refill=2s (over 1s): exit 2 ($rc), names the value" \
  "[ $rc -eq 2 ] && grep -q \"'flow,refill=2s'\" $tmp/badrefill.out"
check "no DPDK runtime directory left behind" "[ \$(dpdk_left ${names[*]}) -eq 0 ]"
tap_done
