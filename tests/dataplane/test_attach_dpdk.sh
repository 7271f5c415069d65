#!/usr/bin/env bash
# attach: dpdk (issue 16 item 2): hosts that are any DPDK virtual device.
#  1. net_pcap: the golden rxe capture (tests/testdata/rxe-rc-ud.pcap) split by
#     sender and replayed by its two endpoints, on different leaves of a 2x2
#     Clos with the capture's own addresses; what each endpoint's port writes
#     is exactly what the other sent, TTL 64 -> 61 (three switches), ICRC
#     valid, and each frame on the leaf uplink rocelab-lb predicts.
#  2. net_memif: dpdk-testpmd (5-tuple swap) at the other end of a memif host
#     port sends every frame of an in-process generator back into the fabric.
#  3. devargs DPDK refuses: exit 2 naming the host and the devargs, nothing
#     left behind.
# No netdev is created (pcap files, a memif socket in a private directory),
# so no network namespace is needed. DPDK 22.11 leaves each process's runtime
# directory (/var/run/dpdk/PREFIX) behind after rte_eal_cleanup(); the script
# removes its own by prefix and checks nothing else is left.
# usage: test_attach_dpdk.sh ROCELAB_DP ROCELAB_LB DATA_DIR TESTDATA_DIR
set -u
DP=$(realpath "$1") LB=$(realpath "$2") DATA=$(realpath "$3") GOLD=$(realpath "$4")/rxe-rc-ud.pcap
RUN=${XDG_RUNTIME_DIR:-/var/run}/dpdk
[ "$(id -u)" -eq 0 ] || RUN=${XDG_RUNTIME_DIR:-/tmp}/dpdk
pfx=ad$$
tmp=$(mktemp -d "/tmp/rocelab-$pfx.XXXXXX")
tp_pid=
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok - $1"; }
nok() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
cleanup() {
  [ -n "$tp_pid" ] && kill "$tp_pid" 2> /dev/null && wait "$tp_pid" 2> /dev/null
  rm -rf "$tmp" "$RUN/$pfx"-*
}
trap cleanup EXIT
npk() { tshark -r "$1" 2> /dev/null | wc -l; }
# pick FILTER IN OUT: the frames of IN that match a display filter, as a pcap
pick() { tshark -r "$2" -Y "$1" -F pcap -w "$3" 2> /dev/null; }
# what a frame carries end to end (not TTL, IP checksum or MACs), one line per frame, sorted
payload() { tshark -r "$1" -T fields -e ip.src -e ip.dst -e udp.srcport -e infiniband.bth.opcode \
  -e infiniband.bth.destqp -e infiniband.bth.psn -e frame.len 2> /dev/null | sort; }

# ---- 1. net_pcap: the golden capture through two leaves
mkdir "$tmp/pcap" && cd "$tmp/pcap" || exit 1
cp "$DATA/attach-pcap.yaml" .
pick 'ip.src==10.99.0.1' "$GOLD" vm1-in.pcap
pick 'ip.src==10.99.0.2' "$GOLD" vm2-in.pcap
n1=$(npk vm1-in.pcap) n2=$(npk vm2-in.pcap)
check "the capture splits into its two senders ($n1 + $n2 frames)" "[ $n1 -gt 0 ] && [ $n2 -gt 0 ] && [ $((n1 + n2)) -eq $(npk "$GOLD") ]"
timeout 60 "$DP" --topology attach-pcap.yaml --duration 1s --name "$pfx-pcap" \
  --capture leaf0-spine0=l0s0.pcap --capture leaf0-spine1=l0s1.pcap \
  --capture leaf1-spine0=l1s0.pcap --capture leaf1-spine1=l1s1.pcap > out.txt 2> err.txt
rc=$?
check "rocelab-dp with two net_pcap hosts exits 0 ($rc)" "[ $rc -eq 0 ]"
for p in "vm1 vm2 10.99.0.1 52:54:00:99:00:02" "vm2 vm1 10.99.0.2 52:54:00:99:00:01"; do
  set -- $p
  src=$1 dst=$2 ip=$3 mac=$4
  check "$dst's port wrote every frame $src replayed ($(npk $dst-out.pcap) of $(npk $src-in.pcap))" \
    "[ \"\$(payload $dst-out.pcap)\" = \"\$(payload $src-in.pcap)\" ]"
  check "$src -> $dst: TTL 61 after three switches" "[ \"\$(tshark -r $dst-out.pcap -T fields -e ip.ttl 2> /dev/null | sort -u)\" = 61 ]"
  check "$src -> $dst: the frames carry $dst's MAC" "[ \"\$(tshark -r $dst-out.pcap -T fields -e eth.dst 2> /dev/null | sort -u)\" = $mac ]"
  n=$(npk $src-in.pcap)
  check "$src -> $dst: every ICRC valid" "\"$LB\" --pcap $dst-out.pcap --fields | tail -1 | grep -qx 'summary: roce=$n icrc_ok=$n icrc_bad=0'"
done
# each frame left its first leaf on the uplink rocelab-lb predicts (uplink u is spine u)
for p in "0 10.99.0.1" "1 10.99.0.2"; do
  set -- $p
  rows=0
  for u in 0 1; do
    pick "ip.src==$2" "l$1s$u.pcap" "up$1$u.pcap"
    "$LB" --pcap "up$1$u.pcap" --profile eecmp --algo crc32 --seed 0x5eed --uplinks 2 --fields > "up$1$u.csv"
    lbrc=$?
    bad=$(awk -F, -v u=$u '$1 ~ /^[0-9]+$/ && $10 != u' "up$1$u.csv" | wc -l)
    got=$(grep -c '^[0-9]' "up$1$u.csv")
    rows=$((rows + got))
    check "leaf$1 -> spine$u: $got frames from $2, each where rocelab-lb predicts" "[ $lbrc -eq 0 ] && [ $bad -eq 0 ] && [ $got -gt 0 ]"
  done
  check "leaf$1's uplinks carried every frame from $2 once ($rows)" "[ $rows -eq \$(npk \$( [ $1 = 0 ] && echo vm1-in.pcap || echo vm2-in.pcap)) ]"
done
port=$(awk '$1 == "net_pcap_vm1" { print $3, $4, $5 }' out.txt)
check "vm1's pcap port read $n1, wrote $n2, refused none ($port)" "[ \"$port\" = \"$n1 $n2 0\" ]"
rm -rf "$RUN/$pfx-pcap"

# ---- 2. net_memif to dpdk-testpmd (5-tuple swap sends each frame back to its source)
mkdir "$tmp/memif" && cd "$tmp/memif" || exit 1
sed "s|@DIR@|$tmp/memif|" "$DATA/attach-memif.yaml" > attach-memif.yaml
N=1000
timeout 60 dpdk-testpmd -l 0,1 --no-huge -m 512 --no-pci --file-prefix "$pfx-tp" --log-level='*:warning' \
  --vdev="net_memif0,role=server,socket=$tmp/memif/memif.sock,socket-abstract=no" -- \
  --forward-mode=5tswap --stats-period 1 --nb-cores=1 --total-num-mbufs=8192 > tp.txt 2>&1 &
tp_pid=$!
# the client is refused while the server's port is not started, and does not retry
for _ in $(seq 150); do grep -q 'forwards packets on' tp.txt && break; sleep 0.2; done
timeout 60 "$DP" --topology attach-memif.yaml --duration 5s --name "$pfx-memif" \
  --gen "h0>m0:count=$N,rate=100M,size=1000,start=500ms" > out.txt 2> err.txt
rc=$?
sleep 1.5 # one more testpmd stats period
kill -INT "$tp_pid"
# testpmd 22.11 may crash in its exit path after the memif peer left; its figures are printed by then
{ wait "$tp_pid"; } 2> /dev/null; tp_pid=
check "rocelab-dp with a net_memif host exits 0 ($rc)" "[ $rc -eq 0 ]"
# memif's counters restart when the peer disconnects: take the largest periodic figure
# (testpmd prints them each second; rocelab-dp stays connected for seconds after the burst)
tprx=$(sed -n 's/^ *RX-packets: *\([0-9]*\) *RX-missed.*/\1/p' tp.txt | sort -n | tail -1)
tptx=$(sed -n 's/^ *TX-packets: *\([0-9]*\) *TX-errors.*/\1/p' tp.txt | sort -n | tail -1)
check "testpmd received and sent back all $N frames over memif (${tprx:-?} / ${tptx:-?})" "[ \"${tprx:-}\" = $N ] && [ \"${tptx:-}\" = $N ]"
h0rx=$(awk '$1 == "h0" && NF == 5 { print $4 }' out.txt)
m0rx=$(awk '$1 == "m0" && NF == 5 { print $4 }' out.txt)
check "the frames came back through the fabric to h0 ($m0rx to m0, ${h0rx:-?} back at h0)" "[ \"${m0rx:-}\" = $N ] && [ \"${h0rx:-}\" = $N ]"
port=$(awk '$1 == "net_memif0" && $2 == "m0" { print $3, $4, $5 }' out.txt)
check "m0's memif port: $N frames out, $N back, none refused (rx tx refused: ${port:-?})" "[ \"$port\" = \"$N $N 0\" ]"
rm -rf "$RUN/$pfx-memif" "$RUN/$pfx-tp"

# ---- 3. devargs DPDK refuses
mkdir "$tmp/bad" && cd "$tmp/bad" || exit 1
bad_topo() { # HOST_LINE: a 2-leaf fabric whose host a is the given line
  printf 'switches:\n  - {name: leaf0, role: rtsw}\n  - {name: leaf1, role: rtsw}\n  - {name: spine0, role: ctsw}\nhosts:\n%s\n  - {name: b, leaf: leaf1, attach: net_null}\nlinks:\n  - [leaf0, spine0]\n  - [leaf1, spine0]\n' "$1" > bad.yaml
}
n=0
for dv in "net_pcap0,rx_pcap=$tmp/bad/none.pcap,tx_pcap=$tmp/bad/out.pcap" "net_bogus0,x=1" \
  "net_memif9,role=client,socket=memif.sock" "net_null1"; do
  n=$((n + 1))
  bad_topo "  - {name: a, leaf: leaf0, attach: dpdk, devargs: \"$dv\"}"
  timeout 60 "$DP" --topology bad.yaml --duration 1s --name "$pfx-bad$n" > out.txt 2> err.txt
  rc=$?
  msg=$(grep '^rocelab-dp:' err.txt | tail -1)
  echo "# $msg"
  check "devargs '$dv': exit 2, the message names host a and the devargs" \
    "[ $rc -eq 2 ] && grep '^rocelab-dp: ' err.txt | grep -qF \"host a\" && grep -qF \"'$dv'\" err.txt"
  rm -rf "$RUN/$pfx-bad$n"
done
check "nothing left behind by the refused runs" "[ -z \"\$(ls -A | grep -vx -e bad.yaml -e out.txt -e err.txt)\" ]"

cd /
check "no DPDK process of this test left" "! pgrep -f -- '--file-prefix[= ]$pfx' > /dev/null && ! pgrep -f -- '--name $pfx' > /dev/null"
cleanup; trap - EXIT
check "nothing left in /tmp or $RUN" "[ ! -e \"$tmp\" ] && [ -z \"\$(ls -d \"$RUN/$pfx\"-* 2> /dev/null)\" ]"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
