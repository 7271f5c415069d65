#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One fabric over two rocelab-dp processes (--process K/N --peer DEVARGS,
# dataplane/io/dp_peer.h; issue 16 item 3), brought up by scripts/fabric.sh
# --processes 2 with a net_memif between them. Real Linux hosts in network
# namespaces, inside a private network namespace of its own:
#   0. bad input: exit 2 with a clear message; what a peer port receives (net_pcap)
#   1. every host pings every other, IPv4 and IPv6, across the cut
#   2. iperf3 TCP across the cut; nothing dropped on the cut links or at the
#      peer ports, and every frame one process sent over the cut the other received
#   3. a link between the processes taken down (in both) moves the traffic to
#      the other spine, in both directions (the links' counters say so)
#   4. a collective of emulated NICs (process 0) through spines in process 1
#      completes with its data checked
# usage: test_two_process.sh ROCELAB_DP DATA_DIR   (root)
. "$(dirname "$0")/../common/live.sh"  # netns, DP DATA FAB, ok/nok/check, fx/tel, all_pairs_ping
name=tp$$
final=/tmp/rocelab-$name.final
srv=
trap '[ -z "$srv" ] || kill "$srv" 2>/dev/null; bash "$FAB" down "$name" > "$final" 2>&1 || true; rm -f "$final"' EXIT

# COLUMN of link direction LINK in the /rocelab/links table of process K (0 or 1).
link_col() { # K LINK COLUMN
  local fab=$name; [ "$1" -eq 0 ] || fab=$name-p$1
  bash "$FAB" tel "$fab" /rocelab/links | python3 -c '
import json, sys
t = list(json.load(sys.stdin).values())[0]
print(t[sys.argv[1]][t["columns"].index(sys.argv[2])])' "$2" "$3" 2>/dev/null
}

# ---- 0. bad input
bad_input() { # WHAT EXPECTED-MESSAGE ARGS...
  local what=$1 want=$2 out rc; shift 2
  out=$(timeout 30 "$DP" "$@" 2>&1); rc=$?
  check "$what: exit 2 and says '$want' ($rc)" "[ $rc -eq 2 ] && grep -q -- \"$want\" <<< \"\$out\""
}
peer="net_memif0,role=server,socket=/tmp/rocelab-$name-none.sock,socket-abstract=no"
bad_input "--process 2/2" "bad --process" --topology "$DATA/two-process.yaml" --process 2/2 --peer "$peer"
bad_input "--process without --peer" "needs 1 --peer" --topology "$DATA/two-process.yaml" --process 0/2
bad_input "--peer without --process" "--peer needs --process" --topology "$DATA/two-process.yaml" --peer "$peer"
bad_input "--process with --clock virtual" "on the live clock" --topology "$DATA/two-process.yaml" --clock virtual --process 0/2 --peer "$peer"
# 2,400 host links come first: the cut leaf-spine links' directions would need VLAN ids above 4094
bad_input "a cut link beyond 4094 VLAN ids" "would need VLAN id" --clos 2,10,240 --process 0/2 --peer "$peer"
bad_input "--coll given to process 1" "emulated NICs run in process 0" --topology "$DATA/two-process-nics.yaml" --process 1/2 --peer "$peer" --coll op=allreduce
bad_input "--peer naming no DPDK driver" "DPDK has no driver for --peer 'net_bogus0'" --topology "$DATA/two-process.yaml" --process 0/2 --peer net_bogus0 --name "rl-$name-bogus"
check "bad input left no socket behind" "[ ! -e /tmp/rocelab-$name-none.sock ]"

# ---- 0b. what a peer port receives, frame by frame: process 0 of null-2x2 (leaf0, spine0,
# h0-h3 on net_null) with a net_pcap peer reading crafted frames. The link table lists the
# channels in index order: a channel's VLAN id is its row + 1.
tmp=$(mktemp -d "/tmp/rocelab-$name-pcap.XXXXXX")
NULL22=$DATA/../../bench/null-2x2.yaml
vid_of() { timeout 30 "$DP" --topology "$NULL22" --clock virtual --duration 1us 2>/dev/null |
  awk -v c="$1" '/^link \(from>to\)/ { f = 1; next } f && NF == 0 { exit } f { i++; if ($1 == c) print i }'; }
v_in=$(vid_of 'spine1>leaf0') v_out=$(vid_of 'leaf0>spine1') v_host=$(vid_of 'h0>leaf0')
python3 - "$tmp/in.pcap" "$v_in" "$v_out" "$v_host" <<'PY'
import struct, sys
def frame(vid):  # IPv4/UDP to h0 (10.0.0.1), VLAN tag vid (None: untagged)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, 1, 0, 64, 17, 0, bytes([10, 0, 1, 1]), bytes([10, 0, 0, 1]))
    c = sum(struct.unpack("!10H", ip)); c = (c & 0xffff) + (c >> 16); c = (c & 0xffff) + (c >> 16)
    ip = ip[:10] + struct.pack("!H", ~c & 0xffff) + ip[12:]
    tag = b"" if vid is None else struct.pack("!HH", 0x8100, vid)
    eth = bytes.fromhex("020000000001") + bytes.fromhex("020000000002") + tag + b"\x08\x00"
    return (eth + ip + struct.pack("!HHHH", 4000, 5000, 8, 0)).ljust(60, b"\0")
vin, vout, vhost = (int(a) for a in sys.argv[2:5])
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for v in (None, 4000, vout, vhost, vin):  # untagged, no channel, the other way, not cut, into leaf0
        d = frame(v)
        f.write(struct.pack("<IIII", 1, 0, len(d), len(d)) + d)
PY
timeout 30 "$DP" --topology "$NULL22" --process 0/2 --duration 1s --name "rl-$name-pcap" \
  --peer "net_pcap9,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap" > "$tmp/out.txt" 2>&1
read -r _ _ prx _ _ _ untagged unknown _ _ <<< "$(awk '$2 == "net_pcap9"' "$tmp/out.txt")"
h0rx=$(awk '$1 == "h0" && NF == 5 { print $4 }' "$tmp/out.txt")
check "peer rx: VLAN ids $v_in (in), $v_out, $v_host: 1 frame taken, 1 untagged, 3 unknown_vid (${prx:-?} ${untagged:-?} ${unknown:-?})" \
  "[ \"${prx:-}/${untagged:-}/${unknown:-}\" = 1/1/3 ]"
check "the frame taken reached h0 through leaf0 (h0 received ${h0rx:-?})" "[ \"${h0rx:-}\" = 1 ]"
rm -rf "$tmp"

# ---- 1. up: leaf0, spine0 (h0, h1) in process 0; leaf1, spine1 (h4, h5) in process 1
if ! bash "$FAB" up "$name" --topology "$DATA/two-process.yaml" --timeout 300 --processes 2; then
  nok "fabric came up over two processes"; echo "$pass passed, $fail failed"; exit 1
fi
ok "fabric came up over two processes"
all_pairs_ping "$name"
check "all $pairs host pairs ping (8 of them across the cut)" "[ $bad -eq 0 ] && [ $pairs -eq 12 ]"
check "IPv6 ping across the cut (h0 -> h4, fd00:0:0:1::1)" "fx h0 ping -6 -c 2 -i 0.2 -W 2 -q fd00:0:0:1::1 > /dev/null"

# ---- 2. TCP across the cut, and no loss there
# the server in the foreground of a timeout, stopped by PID (a -D daemon would outlive the test)
timeout 120 nsenter -t "$(bash "$FAB" pid "$name" h4)" -n iperf3 -s --logfile /dev/null &
srv=$!
sleep 0.3
mbps=$(fx h0 timeout 30 iperf3 -c 10.0.1.1 -t 3 -J 2>/dev/null | python3 -c '
import json, sys; print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))' 2>/dev/null)
check "iperf3 TCP h0 -> h4 across the cut (${mbps:-?} Mbit/s)" "[ -n \"$mbps\" ] && [ $mbps -ge 20 ]"
cut_drops=0
for d in "0 leaf0_to_spine1" "0 spine0_to_leaf1" "1 leaf1_to_spine0" "1 spine1_to_leaf0"; do
  v=$(link_col ${d% *} ${d#* } drops); cut_drops=$((cut_drops + ${v:-1}))
done
check "no drops on the four cut link directions ($cut_drops)" "[ $cut_drops -eq 0 ]"

# ---- 3. leaf0-spine1 (between the processes) down in both: traffic moves to spine0
tx() { link_col "$1" "$2" tx_pkts; }
iperf_p() { fx h0 timeout 30 iperf3 -c 10.0.1.1 -t 1 -P 16 -J 2>/dev/null | python3 -c '
import json, sys; print(json.load(sys.stdin)["end"]["sum_received"]["bytes"])' 2>/dev/null; }
snap() { echo "$(tx 0 leaf0_to_spine0) $(tx 0 leaf0_to_spine1) $(tx 1 leaf1_to_spine0) $(tx 1 leaf1_to_spine1)"; }
delta() { local a=($1) b=($2); echo "$((b[0] - a[0])) $((b[1] - a[1])) $((b[2] - a[2])) $((b[3] - a[3]))"; }
s0=$(snap); got=$(iperf_p); s1=$(snap); read -r u0 u1 d0 d1 <<< "$(delta "$s0" "$s1")"
check "16 TCP flows h0 -> h4 use both spines before (up: $u0 $u1, down: $d0 $d1)" \
  "[ -n \"$got\" ] && [ $u0 -gt 0 ] && [ $u1 -gt 0 ] && [ $d0 -gt 0 ] && [ $d1 -gt 0 ]"
bash "$FAB" tel-all "$name" "/rocelab/link_set,leaf0-spine1,down" > /dev/null
sleep 0.2
check "leaf0-spine1 is down in both processes" "[ \"$(link_col 0 leaf0_to_spine1 up)\" = 0 ] && [ \"$(link_col 1 spine1_to_leaf0 up)\" = 0 ]"
s2=$(snap); got=$(iperf_p); s3=$(snap); read -r u0 u1 d0 d1 <<< "$(delta "$s2" "$s3")"
check "after: the 16 flows cross (${got:-?} bytes)" "[ -n \"$got\" ] && [ $got -gt 0 ]"
check "after: leaf0 sends all up spine0 (process 0: spine0 +$u0, spine1 +$u1)" "[ $u0 -gt 1000 ] && [ $u1 -eq 0 ]"
check "after: leaf1 sends all back over spine0 (process 1: spine0 +$d0, spine1 +$d1)" "[ $d0 -gt 1000 ] && [ $d1 -eq 0 ]"
bash "$FAB" tel-all "$name" "/rocelab/link_set,leaf0-spine1,up" > /dev/null
sleep 0.2
check "pings cross again after link_set up" "fx h0 ping -c 3 -i 0.2 -W 2 -q 10.0.1.1 > /dev/null"

kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; srv=

# ---- the tables: peer ports lost nothing, each received what the other sent
bash "$FAB" down "$name" > "$final" 2>&1
check "both processes stopped cleanly and printed their tables" "[ \$(grep -c '^rocelab-dp: ran' $final) -eq 2 ]"
# peer lines: PROCESS DEVICE RX TX HELD PORT_FULL UNTAGGED UNKNOWN_VID SEGMENTED TAG_FAILED, process 0's first
mapfile -t peers < <(awk '$2 ~ /^net_memif/ && NF == 10' "$final")
read -r _ _ rx0 tx0 held0 _ a0 b0 c0 e0 <<< "${peers[0]:-}"
read -r _ _ rx1 tx1 held1 _ a1 b1 c1 e1 <<< "${peers[1]:-}"
check "frames crossed both ways (process 0 sent ${tx0:-?}, received ${rx0:-?})" "[ ${#peers[@]} -eq 2 ] && [ ${tx0:-0} -gt 10000 ] && [ ${rx0:-0} -gt 10000 ]"
check "every frame sent over the cut arrived (0->1 ${tx0:-?}/${rx1:-?}, 1->0 ${tx1:-?}/${rx0:-?})" "[ \"${tx0:-x}\" = \"${rx1:-y}\" ] && [ \"${tx1:-x}\" = \"${rx0:-y}\" ]"
check "no peer drops, nothing held at the end" "[ \"${held0:-x}${a0:-x}${b0:-x}${c0:-x}${e0:-x}${held1:-x}${a1:-x}${b1:-x}${c1:-x}${e1:-x}\" = 0000000000 ]"

# ---- 4. emulated NICs (process 0, with the leaves) through the spines in process 1
if bash "$FAB" up "$name" --topology "$DATA/two-process-nics.yaml" --timeout 120 --processes 2 \
     --first-args "--duration 4s --coll op=allreduce,hosts=all,sizes=64K,iters=1"; then
  p0=$(cat "/tmp/rocelab-$name/dp.pid")
  for _ in $(seq 100); do kill -0 "$p0" 2>/dev/null || break; sleep 0.1; done
  bash "$FAB" down "$name" > "$final" 2>&1
  # (one size, to keep it short: behind a cut -- threads or processes -- on a loaded machine
  # the NICs see milliseconds of delay and some RC timeouts; see the README's limits)
  lines=$(grep -cE '^ +65536 +16384 +float +sum +-1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +0( +N/A){4}$' "$final")
  check "the allreduce over both processes finished, no wrong data ($lines)" "[ $lines -eq 1 ] && ! grep -q 'failed or did not finish' $final"
  [ "$lines" -eq 1 ] || grep -E -A1 'float|^# |net_memif|failed|stalled' "$final" | sed 's/^/# /'
  # the ring's two connections between the racks carry 6 chunks of 16 KiB each: 48 frames
  # of 4 KiB at least through the spines, which only process 1 runs
  spine=$(awk '$1 == "spine0" || $1 == "spine1" { n += $4 } END { print n + 0 }' "$final")
  check "its frames went through process 1's spines ($spine forwards)" "[ $spine -ge 48 ]"
else
  nok "emulated-NIC fabric came up over two processes"
fi
trap - EXIT
rm -f "$final"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
