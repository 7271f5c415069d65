#!/usr/bin/env bash
# rocelab-dp on the virtual clock, driven by its in-process packet source:
# determinism, ECMP vs E-ECMP spreading (checked against rocelab-lb's
# prediction), ICRC and TTL after crossing the fabric, PFC on a 2:1 incast,
# failover, and bad input.
# usage: test_fabric_virtual.sh ROCELAB_DP ROCELAB_LB DATA_DIR
set -u
DP=$1 LB=$2 DATA=$3
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done

n=0
dp() { # run rocelab-dp on the virtual clock with a unique DPDK name and a timeout
  n=$((n + 1))
  timeout 120 "$DP" --clock virtual --name "rl-vt$$-$n" "$@"
}
# packets a link direction carried, from the final table: col FROM>TO
link_pkts() { awk -v l="$2" '$1 == l { print $3; exit }' "$1"; }
link_drops() { awk -v l="$2" '$1 == l { print $7; exit }' "$1"; }
switch_drops() { awk -v s="$2" '$1 == s && $2 ~ /tsw$/ { print $8; exit }' "$1"; }
host_col() { awk -v h="$2" -v c="$3" '$1 == h && NF == 5 { print $c; exit }' "$1"; }

# 1. Determinism: the same run twice gives the same tables and time series.
for i in 1 2; do
  dp --topology "$DATA/failover.yaml" --gen 'h0>h4:flows=16,rate=40G,count=4000' \
     --gen 'h1>h5:proto=roce,flows=8,rate=40G,count=4000' --csv "$tmp/ts$i.csv" \
     --csv-interval 100us > "$tmp/det$i.txt" 2>/dev/null
done
# (the 'ran' line also gives wall-clock time, which differs; its virtual time and events must not)
for i in 1 2; do sed 's/ in [0-9.]* s of wall time//; s/ ([0-9.]* M per wall second)//' "$tmp/det$i.txt" > "$tmp/det$i.cmp"; done
check "virtual clock: two runs give identical tables" "cmp -s $tmp/det1.cmp $tmp/det2.cmp && grep -q '^rocelab-dp: ran' $tmp/det1.cmp"
check "virtual clock: two runs give identical CSV time series" "cmp -s $tmp/ts1.csv $tmp/ts2.csv && [ \$(wc -l < $tmp/ts1.csv) -gt 100 ]"

# 2. 16 UDP flows with different source ports spread over both spines.
dp --topology "$DATA/lb-5tuple.yaml" --gen 'h0>h4:flows=16,count=1600' > "$tmp/udp.txt" 2>/dev/null
s0=$(link_pkts "$tmp/udp.txt" leaf0\>spine0); s1=$(link_pkts "$tmp/udp.txt" leaf0\>spine1)
check "16 UDP flows use both spines ($s0 / $s1)" "[ ${s0:-0} -ge 100 ] && [ ${s1:-0} -ge 100 ] && [ $((s0 + s1)) -eq 1600 ]"

# 3. 16 RoCE QPs, one source port: 5tuple keeps them on one spine, eecmp spreads them,
#    and each packet took the uplink rocelab-lb predicts for the switch's profile and seed.
for prof in 5tuple eecmp; do
  dp --topology "$DATA/lb-$prof.yaml" --gen 'h0>h4:proto=roce,flows=16,sport=0xc0a5,count=1600' \
     --capture "leaf0-spine0=$tmp/$prof-s0.pcap" --capture "leaf0-spine1=$tmp/$prof-s1.pcap" \
     --capture "leaf1-spine0=$tmp/$prof-d0.pcap" --capture "leaf1-spine1=$tmp/$prof-d1.pcap" \
     > "$tmp/$prof.txt" 2>/dev/null
  rows=0
  for u in 0 1; do
    # --fields column 10 is the predicted uplink; uplink u of leaf0 is spine u
    "$LB" --pcap "$tmp/$prof-s$u.pcap" --profile "$prof" --algo crc32 --seed 0x5eed \
      --uplinks 2 --fields > "$tmp/$prof-s$u.csv"
    lbrc=$?
    bad=$(awk -F, -v u=$u '$1 ~ /^[0-9]+$/ && $10 != u' "$tmp/$prof-s$u.csv" | wc -l)
    rows=$((rows + $(grep -c '^[0-9]' "$tmp/$prof-s$u.csv")))
    check "$prof: packets on leaf0-spine$u are those rocelab-lb sends to uplink $u" "[ $lbrc -eq 0 ] && [ $bad -eq 0 ]"
  done
  check "$prof: rocelab-lb saw all 1600 packets on the two uplinks" "[ $rows -eq 1600 ]"
done
t0=$(link_pkts "$tmp/5tuple.txt" leaf0\>spine0); t1=$(link_pkts "$tmp/5tuple.txt" leaf0\>spine1)
check "5tuple: 16 QPs with one source port share one spine ($t0 / $t1)" "[ \$(( (t0 == 0) + (t1 == 0) )) -eq 1 ] && [ $((t0 + t1)) -eq 1600 ]"
nq=$(grep -cE '^10\.0\.0\.1:49317 > 10\.0\.1\.1 qp [0-9]+ +100 +[0-9]+ +0  leaf0:p[23] > spine[01]:p1 > leaf1:p0$' "$tmp/eecmp.txt")
check "flow table: 16 QPs of 100 packets, each with its 3-switch path ($nq)" "[ $nq -eq 16 ]"
e0=$(link_pkts "$tmp/eecmp.txt" leaf0\>spine0); e1=$(link_pkts "$tmp/eecmp.txt" leaf0\>spine1)
check "eecmp: the same 16 QPs spread over both spines ($e0 / $e1)" "[ $e0 -ge 300 ] && [ $e1 -ge 300 ] && [ $((e0 + e1)) -eq 1600 ]"

# 4. After two switches, RoCE packets keep a valid ICRC and carry TTL 62.
for u in 0 1; do
  f=$tmp/eecmp-d$u.pcap
  check "ICRC valid after crossing leaf0 and spine$u" "\"$LB\" --pcap $f --fields | tail -1 | grep -q 'icrc_bad=0' && ! \"$LB\" --pcap $f --fields | tail -1 | grep -q 'roce=0 '"
  check "TTL decremented by each switch (64 -> 62)" "[ \"\$(tshark -r $f -T fields -e ip.ttl 2>/dev/null | sort -u)\" = 62 ]"
done

# 4b. TTL expiry hop by hop (the parse that travels with a frame keeps its TTL in step):
#     sent with TTL 3, a frame crosses leaf0 and a spine and dies at leaf1; with TTL 4 it arrives.
dp --topology "$DATA/lb-5tuple.yaml" --gen 'h0>h4:count=100,ttl=3' > "$tmp/ttl3.txt" 2>/dev/null
dp --topology "$DATA/lb-5tuple.yaml" --gen 'h0>h4:count=100,ttl=4' > "$tmp/ttl4.txt" 2>/dev/null
check "TTL 3: leaf1 drops all 100 as 'ttl', h4 gets none" "grep -Eq '^leaf1 +rtsw +100 +0 .* ttl=100 *\$' $tmp/ttl3.txt && [ \"\$(host_col $tmp/ttl3.txt h4 4)\" = 0 ]"
check "TTL 4: all 100 reach h4, no switch drops" "[ \"\$(host_col $tmp/ttl4.txt h4 4)\" = 100 ] && ! grep -Eq '^(leaf|spine)[0-9]+ .* ttl=' $tmp/ttl4.txt"

# 5. PFC: a 2:1 incast on lossless priority 3 (DSCP 26). With PFC: XOFF frames
#    from leaf0 on the host links, zero drops, everything delivered. Without: drops,
#    and sent = delivered + dropped.
gens=(--gen 'h0>h2:dscp=26,rate=10G,count=30000' --gen 'h1>h2:dscp=26,rate=10G,count=30000')
dp --topology "$DATA/incast-pfc-on.yaml" "${gens[@]}" --capture "h0-leaf0=$tmp/pfc.pcap" > "$tmp/pfc-on.txt" 2>/dev/null
xoff=$(tshark -r "$tmp/pfc.pcap" -Y 'eth.type == 0x8808 && eth.src == 02:01:00:00:00:00' 2>/dev/null | wc -l)
check "PFC on: leaf0 sent PFC frames to h0 ($xoff in the capture)" "[ $xoff -gt 0 ]"
check "PFC on: zero drops in the fabric" "[ \"\$(switch_drops $tmp/pfc-on.txt leaf0)\" = 0 ]"
check "PFC on: h2 received all 60000 packets" "[ \"\$(host_col $tmp/pfc-on.txt h2 4)\" = 60000 ]"
check "PFC on: the senders waited (paused)" "grep -q 'waited [1-9][0-9]* times for its NIC queue' $tmp/pfc-on.txt"
dp --topology "$DATA/incast-pfc-off.yaml" "${gens[@]}" > "$tmp/pfc-off.txt" 2>/dev/null
dr=$(switch_drops "$tmp/pfc-off.txt" leaf0); rx=$(host_col "$tmp/pfc-off.txt" h2 4)
check "PFC off: drops counted ($dr)" "[ ${dr:-0} -gt 0 ]"
check "PFC off: sent = delivered + dropped ($rx + $dr)" "[ $(( ${rx:-0} + ${dr:-0} )) -eq 60000 ]"

# 5b. PFC watchdog: h2 floods its leaf with XOFF (a PFC storm) while h0 sends to it on the
#     lossless priority. Without the watchdog the pause spreads to h0 (it waits); with it
#     (detection 1 ms) the storming queue is drained and counted, and h0 is not held back.
storm=(--gen 'h0>h2:dscp=26,rate=10G,count=20000' --gen 'h2>h0:proto=pfc,rate=10M,count=200')
dp --topology "$DATA/incast-pfc-on.yaml" "${storm[@]}" > "$tmp/storm.txt" 2>/dev/null
dp --topology "$DATA/incast-pfc-on.yaml" "${storm[@]}" --pfc-watchdog=detect=1ms,restore=1ms,poll=500us > "$tmp/wd.txt" 2>/dev/null
sd=$(awk '$1 == "leaf0" && $2 == "rtsw" { print $8 }' "$tmp/storm.txt")
check "PFC storm without watchdog: no drops, h0 held back by pause" "[ \"$sd\" = 0 ] && grep -q 'h0>h2.*waited [1-9][0-9]* times for its NIC queue' $tmp/storm.txt"
wdd=$(grep -o 'pfc_storm=[0-9]*' "$tmp/wd.txt" | cut -d= -f2)
check "PFC watchdog: storming queue drained and counted (${wdd:-0} dropped), h0 not held back" "[ \${wdd:-0} -gt 1000 ] && grep -q 'h0>h2.*waited 0 times for its NIC queue' $tmp/wd.txt"

# 6. Failover: leaf0-spine0 down from 1 ms to 2 ms. Traffic leaves spine0 while it is down.
dp --topology "$DATA/failover.yaml" --gen 'h0>h4:flows=16,rate=10G,count=6000' \
   --csv "$tmp/fo.csv" --csv-interval 250us > "$tmp/fo.txt" 2>/dev/null
# tx_pkts of leaf0>spine0 at 1.25 ms and 1.75 ms: unchanged while down
a=$(awk -F, '$1 == 1250000 && $3 == "leaf0" && $4 == "spine0" { print $9 }' "$tmp/fo.csv")
b=$(awk -F, '$1 == 1750000 && $3 == "leaf0" && $4 == "spine0" { print $9 }' "$tmp/fo.csv")
c=$(awk -F, '$1 == 3000000 && $3 == "leaf0" && $4 == "spine0" { print $9 }' "$tmp/fo.csv")
check "failover: nothing sent to spine0 while its link is down ($a -> $b)" "[ -n \"$a\" ] && [ \"$a\" = \"$b\" ]"
check "failover: spine0 carries traffic again after the link is back ($b -> $c)" "[ -n \"$c\" ] && [ $c -gt $b ]"
moved=$(awk '/ > 10\.0\.1\.1:9 udp/ && $(NF-5) > 0' "$tmp/fo.txt" | wc -l)
check "failover: the flow table counts path changes ($moved flows moved)" "[ $moved -ge 1 ]"
lost=$(link_drops "$tmp/fo.txt" leaf0\>spine0)
rx=$(host_col "$tmp/fo.txt" h4 4)
check "failover: only packets on the failing link were lost ($lost), the rest arrived ($rx)" "[ $(( ${rx:-0} + ${lost:-0} )) -eq 6000 ] && [ ${lost:-0} -le 16 ]"

# 7. Emulated RDMA NICs: RDMA WRITEs cross the fabric with their data verified; with
#    0.5% loss on leaf0's uplinks go-back-N retransmits and the data still arrives.
#    A size takes K/M/G as --coll's sizes do (the README's example says size=1M).
rd=(--rdma 'h0>h4:qps=4,size=262144,count=16' --rdma 'h1>h5:qps=4,size=256K,count=16')
dp --topology "$DATA/emulated.yaml" "${rd[@]}" > "$tmp/rdma.txt" 2>&1; rc=$?
check "RDMA WRITEs through the fabric, data verified (exit $rc)" "[ $rc -eq 0 ] && [ \$(grep -c '16 of 16 WRITEs of 262144 B.*0 errors, data verified' $tmp/rdma.txt) -eq 2 ]"
retr=$(awk '$1 ~ /^h[01]$/ && NF == 9 { s += $4 } END { print s + 0 }' "$tmp/rdma.txt")
check "no retransmits on a lossless fabric ($retr)" "[ $retr -eq 0 ]"
dp --topology "$DATA/emulated-lossy.yaml" "${rd[@]}" > "$tmp/rdma-lossy.txt" 2>&1; rc=$?
retr=$(awk '$1 ~ /^h[01]$/ && NF == 9 { s += $4 } END { print s + 0 }' "$tmp/rdma-lossy.txt")
loss=$(awk '$1 ~ /^leaf0>spine[01]$/ { s += $7 } END { print s + 0 }' "$tmp/rdma-lossy.txt")
check "0.5% loss: $loss packets lost, $retr retransmitted, data still verified" "[ $rc -eq 0 ] && [ $loss -gt 0 ] && [ $retr -ge $loss ] && [ \$(grep -c 'data verified' $tmp/rdma-lossy.txt) -eq 2 ]"
dp --topology "$DATA/emulated.yaml" --rdma 'h0>h0' > "$tmp/rdma-bad.txt" 2>&1; rc=$?
check "--rdma with the same host twice: exit 2" "[ $rc -eq 2 ] && grep -q 'source and destination are the same host' $tmp/rdma-bad.txt"

# 8. Collectives over emulated NICs: AllReduce / AllToAll results checked element by element.
dp --topology "$DATA/emulated.yaml" --coll 'op=allreduce,sizes=64K:256K,qps=4,mode=split,chunk=32K' > "$tmp/ar.txt" 2>&1; rc=$?
rows=$(awk '$1 ~ /^[0-9]+$/ && NF == 13 && $9 == 0 && $10 == "N/A"' "$tmp/ar.txt" | wc -l)
check "AllReduce over 4 emulated NICs: 3 sizes, every element right (exit $rc)" "[ $rc -eq 0 ] && [ $rows -eq 3 ]"
bus=$(awk '$1 == 262144 { print $8 }' "$tmp/ar.txt")
check "AllReduce busbw below the 100G line rate and above 10% of it ($bus GB/s)" "python3 -c 'import sys; sys.exit(not 1.25 < float(\"${bus:-0}\") <= 12.5)'"
avg=$(sed -n 's/^# Avg bus bandwidth *: \([0-9.]*\) *$/\1/p' "$tmp/ar.txt")
mean=$(awk '$1 ~ /^[0-9]+$/ && NF == 13 { s += $8; n++ } END { if (n) printf "%.2f", s / n }' "$tmp/ar.txt")
check "nccl-tests' closing lines: 0 out of bounds, Avg bus bandwidth $avg = the sizes' mean busbw $mean (2 decimals)" \
  "grep -qx '# Out of bounds values : 0 OK' $tmp/ar.txt && [ -n \"$avg\" ] && awk -v a=\"$avg\" -v m=\"$mean\" 'BEGIN { d = a - m; exit !(d < 0.01 && d > -0.01) }'"
# the same collective again, captured twice: the same bytes (its buffers' addresses on the
# wire, RETH, are fixed per rank, not the heap's, which moves with ASLR from run to run)
for i in 1 2; do
  dp --topology "$DATA/emulated.yaml" --coll 'op=allreduce,sizes=64K,qps=4,mode=split,chunk=32K' \
     --capture "h0-leaf0=$tmp/cdet$i.pcap" > /dev/null 2>&1
done
check "a collective captured in two runs: byte-identical pcaps" \
  "[ -s $tmp/cdet1.pcap ] && cmp -s $tmp/cdet1.pcap $tmp/cdet2.pcap"
dp --topology "$DATA/emulated.yaml" --coll 'op=alltoall,sizes=128K,qps=2,mode=rr,chunk=16K' > "$tmp/a2a.txt" 2>&1; rc=$?
check "AllToAll over 4 emulated NICs, every element right (exit $rc)" "[ $rc -eq 0 ] && awk '\$1 == 131072 && \$9 == 0' $tmp/a2a.txt | grep -q ."
dp --topology "$DATA/emulated.yaml" --coll 'op=allreduce,hosts=h0+h9' > "$tmp/cbad.txt" 2>&1; rc=$?
check "--coll with an unknown host: exit 2" "[ $rc -eq 2 ] && grep -qF 'hosts=h0+h9: ' $tmp/cbad.txt"
# NCCL's keys pass through to ne_coll_config_set: a bad one names the pair and exits 2
for bad in 'NCCL_IB_QPS_PER_CONNECTTION=4' 'NCCL_IB_QPS_PER_CONNECTION=129' 'NCCL_BUFFSIZE=4000' \
           'NCCL_CTRAN_IB_QP_SCALING_THRESHOLD=1000' 'proxy_post_wqe=200parsecs' 'proxy_poll_cqe=-1us'; do
  dp --topology "$DATA/emulated.yaml" --coll "model=nccl,op=allreduce,$bad" > "$tmp/nbad.txt" 2>&1; rc=$?
  check "--coll $bad: exit 2 naming the pair ($(grep -- '--coll' $tmp/nbad.txt))" "[ $rc -eq 2 ] && grep -qF -- '--coll: $bad:' $tmp/nbad.txt"
done
dp --topology "$DATA/emulated.yaml" --coll 'model=nccl,op=allreduce,sizes=64K:128K,NCCL_IB_QPS_PER_CONNECTION=4,NCCL_IB_SPLIT_DATA_ON_QPS=1,proxy_post_wqe=200ns,proxy_poll_cqe=100ns' > "$tmp/nccl.txt" 2>&1; rc=$?
rows=$(awk '$1 ~ /^[0-9]+$/ && $9 == 0' "$tmp/nccl.txt" | wc -l)
check "model=nccl with split over 4 QPs and proxy costs: 2 sizes, every element right, 4 data WQEs per message (exit $rc)" "[ $rc -eq 0 ] && [ $rows -eq 2 ] && awk '/^# totals/ { for (i = 1; i <= NF; i++) { split(\$i, kv, \"=\"); v[kv[1]] = kv[2] } } END { exit !(v[\"messages\"] > 0 && v[\"data_wqes\"] == 4 * v[\"messages\"] && v[\"proxy_busy_ns\"] > 0) }' $tmp/nccl.txt"
# sizes 10 us apart, the ended run kept until the next starts: a poll meanwhile
# (proxy costs keep the collective polling) must not end a size twice
dp --topology "$DATA/emulated.yaml" --coll 'op=allreduce,sizes=32K:128K,proxy_post_wqe=1us,proxy_poll_cqe=500ns' > "$tmp/gap.txt" 2>&1; rc=$?
check "a sweep with proxy costs: each of its 3 sizes ends once, every element right (exit $rc)" \
  "[ $rc -eq 0 ] && [ \$(awk '\$1 ~ /^[0-9]+\$/' $tmp/gap.txt | wc -l) -eq 3 ] && [ \$(awk '\$1 ~ /^[0-9]+\$/ && \$9 == 0 { print \$1 }' $tmp/gap.txt | sort -u | wc -l) -eq 3 ]"
# A NIC is woken only when it has something due: a wake-up armed earlier does the work
# of an event for nothing. Each frame sent used to leave one at now + 1 ns behind it;
# with proxy costs, a post that made the NIC due armed it at now + 1, and a frame
# arriving at that NIC in the same nanosecond served it at once, leaving that wake-up
# with nothing to do (5 of 567 frames here). Both fail this test without their fix.
idle() { sed -n 's/^# totals: .* nic_idle_wakes=\([0-9]*\) .*/\1/p' "$1"; }
sent=$(awk '$1 ~ /^h[0-9]+$/ && NF == 9 { s += $2 } END { print s + 0 }' "$tmp/nccl.txt")
check "emulated NICs woken only when due: no idle wake-up in the AllReduce, the AllToAll and the AllReduce with proxy costs ($(idle $tmp/ar.txt), $(idle $tmp/a2a.txt), $(idle $tmp/nccl.txt); $sent frames sent with proxy costs)" \
  "[ \"$(idle $tmp/ar.txt)\" = 0 ] && [ \"$(idle $tmp/a2a.txt)\" = 0 ] && [ \"$(idle $tmp/nccl.txt)\" = 0 ] && [ $sent -gt 100 ]"

# 8b. data=off: the NICs leave payload bytes unwritten (they stand for zeros), so an
#     mbuf keeps what it held before, here an --rdma transfer's data. A capture still
#     shows zeros and valid ICRCs, and a NIC that reads payloads (an --rdma end that is
#     also a rank) takes the ranks' frames: both fail if the zeros are not written
#     where the bytes are read (dp_frame_write_zeros).
dp --topology "$DATA/emulated.yaml" --rdma 'h0>h4:qps=2,size=262144,count=8' \
   --coll 'op=allreduce,hosts=h1+h5,sizes=1M,data=off' --capture "leaf0-spine0=$tmp/uw0.pcap" \
   --capture "leaf0-spine1=$tmp/uw1.pcap" > "$tmp/uw.txt" 2>&1; rc=$?
bad=0 roce=0
for f in "$tmp/uw0.pcap" "$tmp/uw1.pcap"; do
  read -r r b < <("$LB" --pcap "$f" --fields | tail -1 | sed -n 's/^summary: roce=\([0-9]*\) icrc_ok=[0-9]* icrc_bad=\([0-9]*\)$/\1 \2/p')
  roce=$((roce + ${r:-0})) bad=$((bad + ${b:-1}))
done
check "data=off beside --rdma data: the captures' ICRCs all valid ($roce RoCE frames, $bad bad; exit $rc)" \
  "[ $rc -eq 0 ] && [ $roce -gt 1000 ] && [ $bad -eq 0 ] && grep -q 'data verified' $tmp/uw.txt"
dp --topology "$DATA/emulated.yaml" --rdma 'h0>h4:qps=2,size=262144,count=8' \
   --coll 'op=allreduce,hosts=h0+h1+h4+h5,sizes=1M,data=off' > "$tmp/uw2.txt" 2>&1; rc=$?
rej=$(awk '$1 ~ /^h[0-9]$/ && NF >= 9 { s += $9 } END { print s + 0 }' "$tmp/uw2.txt")
check "ranks that are also --rdma ends take the ranks' frames ($rej rejected; exit $rc)" \
  "[ $rc -eq 0 ] && [ $rej -eq 0 ] && grep -q 'data verified' $tmp/uw2.txt && grep -Eq '^ +1048576 ' $tmp/uw2.txt"

#     A UDP generator leaves its payloads unwritten too: in mbufs that held the
#     --rdma transfer's data, the captured datagrams still carry 1,000 zero bytes.
dp --topology "$DATA/emulated.yaml" --rdma 'h0>h4:qps=2,size=262144,count=8' \
   --gen 'h1>h5:proto=udp,size=1042,rate=20G,count=3000' --capture "leaf0-spine0=$tmp/ug0.pcap" \
   --capture "leaf0-spine1=$tmp/ug1.pcap" > "$tmp/ug.txt" 2>&1; rc=$?
read -r udp dirty < <(for f in "$tmp/ug0.pcap" "$tmp/ug1.pcap"; do
  tshark -r "$f" -Y 'udp.dstport == 9' -T fields -e data.data 2>/dev/null; done |
  awk '{ n++; if ($1 !~ /^0+$/ || length($1) != 2000) d++ } END { print n + 0, d + 0 }')
check "UDP generator beside --rdma data: the captured payloads are zeros ($udp datagrams, $dirty not; exit $rc)" \
  "[ $rc -eq 0 ] && [ $udp -eq 3000 ] && [ $dirty -eq 0 ] && grep -q 'data verified' $tmp/ug.txt"

# 8c. The virtual clock runs on the CPUs it was given, not pinned to EAL's lcore 0:
#     two runs at once (tests, experiments) would share CPU 0 with the other core idle.
#     Read once the run loop is under way (its first progress line, after a second).
want=$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/self/status)
timeout 120 "$DP" --clock virtual --name "rl-vt$$-aff" --topology "$DATA/failover.yaml" \
  --gen 'h0>h4:count=100000000,rate=100G' > /dev/null 2> "$tmp/aff.err" & bg=$!
got=""
for _ in $(seq 300); do
  if grep -q 'virtual time' "$tmp/aff.err"; then
    pid=$(pgrep -P $bg | head -1) # (rocelab-dp, the child of timeout)
    got=$(sed -n 's/^Cpus_allowed_list:\s*//p' "/proc/$pid/status" 2>/dev/null)
    break
  fi
  sleep 0.1
done
kill -TERM $bg 2>/dev/null; wait $bg 2>/dev/null
check "virtual clock: rocelab-dp runs on the CPUs it was given ($want), not pinned (${got:-none})" "[ '$got' = '$want' ]"

# 9. Bad input: exit 2 with a message, nothing runs.
printf 'name: x\nswitches:\n  - {name: s, role: nope}\nhosts: []\n' > "$tmp/bad.yaml"
out=$("$DP" --check --topology "$tmp/bad.yaml" 2>&1); rc=$?
check "--check on a bad file: exit 2 and FILE:LINE ($out)" "[ $rc -eq 2 ] && echo \"$out\" | grep -q 'bad.yaml:3:'"
"$DP" --check --topology "$DATA/live.yaml" > /dev/null 2>&1
check "--check on a good file: exit 0" "[ $? -eq 0 ]"
out=$(dp --topology "$DATA/lb-5tuple.yaml" --gen 'h0>nohost' 2>&1); rc=$?
check "unknown generator host: exit 2 ($out)" "[ $rc -eq 2 ] && echo \"$out\" | grep -q 'unknown destination host'"
out=$(dp --topology "$tmp/missing.yaml" 2>&1); rc=$?
check "missing topology: exit 2" "[ $rc -eq 2 ] && echo \"$out\" | grep -q 'cannot read'"
check "--help" "\"$DP\" --help | grep -q '^usage: rocelab-dp'"

# Progress of a run longer than a second of wall time: whole lines on stderr when it is not
# a terminal (no '\r'), stdout flushed before each, so a log of both keeps every table line.
# (enough packets for a few seconds of CPU: fewer under ASan, which runs it about 10x slower)
npk=6000000; ldd "$DP" 2>/dev/null | grep -q libasan && npk=1000000
dp --topology "$DATA/lb-5tuple.yaml" --gen "h0>h4:size=64,rate=10G,count=$npk" > "$tmp/prog.txt" 2>&1; rc=$?
nprog=$(grep -c '^rocelab-dp: virtual time [0-9.]* s, [0-9]* events$' "$tmp/prog.txt")
check "progress: $nprog whole lines in a log of stdout and stderr, no carriage return, the generator's line intact (exit $rc)" \
  "[ $rc -eq 0 ] && [ $nprog -ge 1 ] && ! grep -q \$'\\r' $tmp/prog.txt && grep -q '^generator h0>h4:.*sent $npk of $npk' $tmp/prog.txt"
# 10. The packet pool's frames hold the largest frame a host sends, no more (the start
#     line shows it): an emulated NIC's 4 KiB frames whatever its host's MTU (the 9,280 B
#     of a jumbo frame halved the frames a 1,024-rank ring could keep in memory); a
#     generator on an emulated host up to that host's MTU; a plain host's MTU; 2048 B at
#     the least. Every frame of each run fits (a collective's data checked, every
#     generated frame delivered); a generator beyond its own host's frames is refused.
pool_room() { sed -n 's/.*; packet pool [0-9]* frames of \([0-9]*\) B;.*/\1/p' "$1"; }
dp --topology "$DATA/emulated.yaml" --coll 'op=allreduce,sizes=256K,data=on' > "$tmp/pool1.txt" 2>&1
check "pool: emulated NICs on hosts of MTU 9000 take frames of 4224 B ($(pool_room "$tmp/pool1.txt")), the AllReduce's data right" \
  "[ '$(pool_room "$tmp/pool1.txt")' = 4224 ] && grep -Eq '^ +262144 .* 0( +N/A){4}\$' $tmp/pool1.txt"
dp --topology "$DATA/emulated.yaml" --coll 'op=allreduce,sizes=256K,data=on' \
   --gen 'h0>h4:size=6000,count=100' > "$tmp/pool2.txt" 2>&1
got1=$(host_col "$tmp/pool1.txt" h4 4) got2=$(host_col "$tmp/pool2.txt" h4 4)
check "pool: a 6000-byte generator on an emulated host of MTU 9000 widens them to 6016 B ($(pool_room "$tmp/pool2.txt")), its 100 frames delivered ($got2 against $got1 without it), the data right" \
  "[ '$(pool_room "$tmp/pool2.txt")' = 6016 ] && grep -q '^generator h0>h4:.*sent 100 of 100' $tmp/pool2.txt && grep -Eq '^ +262144 .* 0( +N/A){4}\$' $tmp/pool2.txt && [ \"${got2:-0}\" -eq \$((${got1:-0} + 100)) ]"
sed 's/^defaults:$/defaults:\n  host: {mtu: 9000}/' "$DATA/lb-5tuple.yaml" > "$tmp/jumbo.yaml"
dp --topology "$tmp/jumbo.yaml" --gen 'h0>h4:size=9022,count=100' > "$tmp/pool3.txt" 2>&1
check "pool: plain hosts of MTU 9000 take frames of 9024 B ($(pool_room "$tmp/pool3.txt")), all 100 of 9022 B delivered" \
  "[ '$(pool_room "$tmp/pool3.txt")' = 9024 ] && grep -q '^generator h0>h4:.*sent 100 of 100' $tmp/pool3.txt && [ \"\$(host_col $tmp/pool3.txt h4 4)\" = 100 ]"
for sz in 9023 9100; do
  out=$(dp --topology "$tmp/jumbo.yaml" --gen "h0>h4:size=$sz,count=1" 2>&1); rc=$?
  check "pool: a $sz-byte generator, beyond its host's 9022-byte frames, is refused: exit 2 ($out)" \
    "[ $rc -eq 2 ] && echo \"\$out\" | grep -q 'size $sz is larger than the hosts. frames (h0: 9022 B, MTU 9000 + 22)'"
done
out=$(dp --topology "$DATA/emulated.yaml" --gen 'h0>h4:size=9023,count=1' 2>&1); rc=$?
check "pool: on an emulated host of MTU 9000 too: exit 2 ($out)" \
  "[ $rc -eq 2 ] && echo \"\$out\" | grep -q 'size 9023 is larger than the hosts. frames (h0: 9022 B'"
dp --topology "$DATA/lb-5tuple.yaml" --gen 'h0>h4:count=10' > "$tmp/pool4.txt" 2>&1
check "pool: hosts of MTU 1500 take frames of 2048 B ($(pool_room "$tmp/pool4.txt"))" "[ '$(pool_room "$tmp/pool4.txt")' = 2048 ]"
out=$(dp --topology "$DATA/lb-5tuple.yaml" --gen 'h0>h4:size=1600,count=1' 2>&1); rc=$?
check "pool: a 1600-byte generator on a host of MTU 1500 is refused, though the pool's frames would hold it: exit 2 ($out)" \
  "[ $rc -eq 2 ] && echo \"\$out\" | grep -q 'size 1600 is larger than the hosts. frames (h0: 1522 B, MTU 1500 + 22)'"
tap_done
