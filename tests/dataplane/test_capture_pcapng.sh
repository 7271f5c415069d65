#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rocelab-dp --capture LINK=FILE.pcapng (dataplane/io/dp_pcapng.h): two links
# in one pcapng file, read back with tshark: one interface per link, named
# after its first end's port and its peer, nanosecond timestamps; each
# frame's interface and direction; the frames per direction are the link
# table's packets; each interface's frames, stamps included, are the classic
# .pcap of the same (deterministic) run; --workers 2 writes the same file;
# the live clock's counts match too;
# bad input exits 2 with a message; a failed write exits 1.
# usage: test_capture_pcapng.sh ROCELAB_DP NULL_TOPOLOGY (net_null hosts, for the live clock)
set -u
DP=$1 NULL=$2
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done

n=0
dp() { # rocelab-dp on the virtual clock with a unique DPDK name and a timeout
  n=$((n + 1))
  timeout 120 "$DP" --clos 2,2,2 --clock virtual --name "rl-png$$-$n" "$@"
}
# packets a link direction carried, from the final table: col FROM>TO
link_pkts() { awk -v l="$2" '$1 == l { print $3; exit }' "$1"; }
# frames of FILE on interface NAME in direction DIR (1 inbound, 2 outbound)
frames() {
  tshark -r "$1" -T fields -e frame.interface_name -e frame.packet_flags_direction 2>/dev/null |
    awk -v i="$2" -v d="$3" '$1 == i && $2 + 0 == d { k++ } END { print k + 0 }'
}
# the first 4 bytes of FILE, in hex
magic() { od -An -tx1 -N4 "$1" | tr -d ' \n'; }

# Traffic both ways over leaf0's two uplinks (8 flows each way spread over both).
gens=(--gen 'h0>h3:flows=8,count=400' --gen 'h3>h0:flows=8,count=300')
dp "${gens[@]}" --capture "leaf0-spine0=$tmp/two.pcapng" --capture "leaf0-spine1=$tmp/two.pcapng" \
  > "$tmp/ng.txt" 2> "$tmp/ng.err"; rc_ng=$?
dp "${gens[@]}" --capture "leaf0-spine0=$tmp/s0.pcap" --capture "leaf0-spine1=$tmp/s1.pcap" \
  > "$tmp/pcap.txt" 2> /dev/null; rc_pcap=$?
check "a run capturing two links into one .pcapng exits 0 (and the .pcap run: $rc_ng, $rc_pcap)" \
  "[ $rc_ng -eq 0 ] && [ $rc_pcap -eq 0 ]"
check "FILE.pcapng is pcapng, FILE.pcap classic nanosecond pcap ($(magic "$tmp/two.pcapng"), $(magic "$tmp/s0.pcap"))" \
  "[ $(magic "$tmp/two.pcapng") = 0a0d0d0a ] && [ $(magic "$tmp/s0.pcap") = 4d3cb2a1 ]"

# 1. The interfaces: one per link, in --capture order, nanosecond resolution.
capinfos "$tmp/two.pcapng" > "$tmp/info.txt" 2>&1
names=$(sed -n 's/^ *Name = //p' "$tmp/info.txt" | tr '\n' ' ')
descs=$(sed -n 's/^ *Description = //p' "$tmp/info.txt" | tr '\n' ',')
nsres=$(grep -c 'Time precision = nanoseconds (9)' "$tmp/info.txt")
check "two interfaces, named leaf0:p2->spine0 and leaf0:p3->spine1 (got: $names)" \
  "[ '$names' = 'leaf0:p2->spine0 leaf0:p3->spine1 ' ]"
check "their descriptions name the links (got: $descs)" \
  "[ '$descs' = 'link leaf0-spine0,link leaf0-spine1,' ]"
check "both interfaces stamp in nanoseconds (if_tsresol 9: $nsres)" "[ $nsres -eq 2 ]"

# 2. Per link and direction: the frames in the file are the link table's packets.
total=0
for s in 0 1; do
  ifname="leaf0:p$((s + 2))->spine$s"
  up=$(link_pkts "$tmp/ng.txt" "leaf0>spine$s"); down=$(link_pkts "$tmp/ng.txt" "spine$s>leaf0")
  out=$(frames "$tmp/two.pcapng" "$ifname" 2); in=$(frames "$tmp/two.pcapng" "$ifname" 1)
  total=$((total + ${up:-0} + ${down:-0}))
  check "$ifname: outbound frames = leaf0>spine$s's packets ($out = ${up:-?}), inbound = spine$s>leaf0's ($in = ${down:-?})" \
    "[ ${up:-0} -gt 0 ] && [ ${down:-0} -gt 0 ] && [ $out -eq ${up:-0} ] && [ $in -eq ${down:-0} ]"
  # (tshark's nanosecond pcap of one interface against rocelab-dp's own .pcap,
  # past the 24-byte file headers, which differ in snaplen only)
  tshark -r "$tmp/two.pcapng" -Y "frame.interface_id == $s" -F nsecpcap -w "$tmp/if$s.pcap" 2>/dev/null
  check "interface $s's frames, stamps and lengths included, are leaf0-spine$s's .pcap, byte for byte" \
    "[ -s $tmp/s$s.pcap ] && cmp -s <(tail -c +25 $tmp/if$s.pcap) <(tail -c +25 $tmp/s$s.pcap)"
done
nall=$(tshark -r "$tmp/two.pcapng" 2>/dev/null | wc -l)
check "the file holds every frame of both links and no other ($nall = $total)" "[ $nall -eq $total ] && [ $total -gt 0 ]"

# 3. Partitions hold records and merge the four directions: the same file.
dp --workers 2 "${gens[@]}" --capture "leaf0-spine0=$tmp/w2.pcapng" \
  --capture "leaf0-spine1=$tmp/w2.pcapng" > /dev/null 2>&1; rc=$?
check "--workers 2 writes the same pcapng, byte for byte (exit $rc)" \
  "[ $rc -eq 0 ] && cmp -s $tmp/two.pcapng $tmp/w2.pcapng"

# 3b. The live clock (net_null hosts): the same interfaces and counts, stamps in time order.
timeout 60 "$DP" --topology "$NULL" --name "rl-png$$-live" --duration 300ms \
  --gen 'h0>h4:flows=8,count=1000' --gen 'h4>h0:flows=8,count=600' \
  --capture "leaf0-spine0=$tmp/live.pcapng" --capture "leaf0-spine1=$tmp/live.pcapng" \
  > "$tmp/live.txt" 2> /dev/null; rc=$?
good=0
for s in 0 1; do
  ifname="leaf0:p$((s + 4))->spine$s"
  up=$(link_pkts "$tmp/live.txt" "leaf0>spine$s"); down=$(link_pkts "$tmp/live.txt" "spine$s>leaf0")
  out=$(frames "$tmp/live.pcapng" "$ifname" 2); in=$(frames "$tmp/live.pcapng" "$ifname" 1)
  [ "${up:-0}" -gt 0 ] && [ "${down:-0}" -gt 0 ] && [ "$out" -eq "${up:-0}" ] && [ "$in" -eq "${down:-0}" ] &&
    good=$((good + 1))
  echo "# live $ifname: out $out (table ${up:-?}), in $in (table ${down:-?})"
done
check "live clock: exit 0, each interface's frames per direction = the link table's (exit $rc)" \
  "[ $rc -eq 0 ] && [ $good -eq 2 ] && capinfos -o $tmp/live.pcapng | grep -q 'Strict time order: *True'"

# 4. Bad input: exit 2 with a message naming what is wrong.
bad() { # NAME WANT-TEXT ARGS...
  local name=$1 want=$2; shift 2
  dp "$@" > /dev/null 2> "$tmp/bad.err"; local rc=$?
  check "$name: exit 2 with '$want' (exit $rc: $(grep rocelab-dp "$tmp/bad.err" | tail -1))" \
    "[ $rc -eq 2 ] && grep -qF -- \"\$want\" $tmp/bad.err"
}
bad "unknown link" "no link named 'leaf9-spine0'" --capture "leaf9-spine0=$tmp/x.pcapng"
bad "unwritable .pcapng" "$tmp/none/x.pcapng" --capture "leaf0-spine0=$tmp/none/x.pcapng"
bad "unwritable .pcap" "$tmp/none/x.pcap" --capture "leaf0-spine0=$tmp/none/x.pcap"
bad "two links in one .pcap" "a .pcap file holds one link" \
  --capture "leaf0-spine0=$tmp/y.pcap" --capture "leaf0-spine1=$tmp/y.pcap"
bad "one link named twice" "link 'leaf0-spine0' named twice" \
  --capture "leaf0-spine0=$tmp/z.pcapng" --capture "leaf0-spine0=$tmp/z2.pcapng"
check "no file written in a directory that does not exist" "[ ! -e $tmp/none ]"

# 5. A write that fails during the run (a full disk: /dev/full) is a failed run, exit 1.
for f in full.pcapng full.pcap; do
  [ -w /dev/full ] || { ok "$f on a full disk: skipped (no /dev/full)"; continue; }
  ln -s /dev/full "$tmp/$f"
  dp "${gens[@]}" --capture "leaf0-spine0=$tmp/$f" > /dev/null 2> "$tmp/full.err"; rc=$?
  check "$f on a full disk: exit 1, 'write failed' (exit $rc)" \
    "[ $rc -eq 1 ] && grep -q 'leaf0-spine0=$tmp/$f: write failed' $tmp/full.err"
done
tap_done
