#!/usr/bin/env bash
# rocelab-dp with the programs that read rocelab's metadata (issue 43, items
# 2-4): p4/flowlet.spec and p4/letflow.spec on the virtual clock, the
# metadata's ingress port, --check --pipeline (the program built without a
# run), and the refusal of a program that writes a header field rocelab does
# not take from it.
# One flow of 400 1000-byte frames at 2 Gb/s: a frame every 4 us. With a
# flowlet timeout of 1 us every frame starts a flowlet; with 1000 us none but
# the first does.
# usage: test_swx_progs.sh ROCELAB_DP SOURCE_ROOT
set -u
DP=$(realpath "$1") SRC=$(realpath "$2") RUN_PREFIX=rl-swxpg
# shellcheck source=dp_runs.sh
source "$SRC/tests/swx/dp_runs.sh"
# uplink FILE SPINE: frames leaf0 sent to SPINE
uplink() { awk -v l="leaf0>$2" '$1 == l { print $3 }' "$1"; }
for t in 1 1000; do
  { cat "$SRC/topologies/default.yaml"; printf 'defaults:\n  switch: {flowlet_timeout_us: %s}\n' $t; } \
    > "$tmp/t$t.yaml"
done
flow=(--gen 'h1>h5:rate=2G,count=400')

# flowlet.spec: every frame a new flowlet, each on the next uplink: 200 and 200
dp --topology "$tmp/t1.yaml" "${flow[@]}" --pipeline "$P4/flowlet.spec" > "$tmp/fl1.txt" 2>&1
check "flowlet.spec, gaps over the timeout: the uplinks alternate, 200 frames each" \
  "[ \"\$(uplink $tmp/fl1.txt spine0) \$(uplink $tmp/fl1.txt spine1)\" = '200 200' ]"
# no gap over the timeout: the flow stays where ECMP put it, all of the output as ecmp.spec's
dp --topology "$tmp/t1000.yaml" "${flow[@]}" --pipeline "$P4/flowlet.spec" > "$tmp/fl1000.txt" 2>&1
dp --topology "$tmp/t1000.yaml" "${flow[@]}" --pipeline "$P4/ecmp.spec" > "$tmp/ecmp.txt" 2>&1
check "flowlet.spec, gaps within the timeout: one uplink carries all 400" \
  "[ \$((\$(uplink $tmp/fl1000.txt spine0) * \$(uplink $tmp/fl1000.txt spine1))) = 0 ] && [ \$((\$(uplink $tmp/fl1000.txt spine0) + \$(uplink $tmp/fl1000.txt spine1))) = 400 ]"
check "flowlet.spec, gaps within the timeout: prints what ecmp.spec prints" \
  "grep -q '^rocelab-dp: ran' $tmp/ecmp.txt && cmp -s <(strip_wall $tmp/fl1000.txt) <(strip_wall $tmp/ecmp.txt)"

# letflow.spec: a random uplink per flowlet. 400 fair coin flips fall 200 +- 10
# (one standard deviation): more than 100 each is 10 deviations away from failing
dp --topology "$tmp/t1.yaml" "${flow[@]}" --pipeline "$P4/letflow.spec" > "$tmp/lf1.txt" 2>&1
check "letflow.spec, gaps over the timeout: both uplinks take more than 100 frames" \
  "[ \$(uplink $tmp/lf1.txt spine0) -gt 100 ] && [ \$(uplink $tmp/lf1.txt spine1) -gt 100 ]"
check "letflow.spec: not the strict alternation of flowlet.spec" \
  "[ \$(uplink $tmp/lf1.txt spine0) != 200 ]"
dp --topology "$tmp/t1000.yaml" "${flow[@]}" --pipeline "$P4/letflow.spec" > "$tmp/lf1000.txt" 2>&1
check "letflow.spec, gaps within the timeout: one uplink carries all 400" \
  "[ \$((\$(uplink $tmp/lf1000.txt spine0) * \$(uplink $tmp/lf1000.txt spine1))) = 0 ] && [ \$((\$(uplink $tmp/lf1000.txt spine0) + \$(uplink $tmp/lf1000.txt spine1))) = 400 ]"

# the metadata's port_in is the port rx gives, and its group size is 2 at the leaf:
# a program that drops when either differs drops nothing
sed 's/^\textract h.rl_meta$/\textract h.rl_meta\n\tjmpneq DROP h.rl_meta.port_in m.port_in/; s/^\tjmpeq EMIT m.n_members 0x0$/\tjmpeq EMIT m.n_members 0x0\n\tjmpneq DROP h.rl_meta.n_members m.n_members/' \
  "$P4/flowlet.spec" > "$tmp/meta.spec"
dp --topology "$SRC/topologies/default.yaml" --gen 'h1>h5:count=50' --gen 'h4>h0:count=30' \
  --pipeline "$tmp/meta.spec" > "$tmp/meta.txt" 2>&1
check "rl_meta: port_in and n_members as the switch has them (the test program is edited)" \
  "[ \$(grep -c 'jmpneq DROP h.rl_meta' $tmp/meta.spec) = 2 ] && grep -q '^rocelab-dp: ran' $tmp/meta.txt && ! grep -q 'p4=' $tmp/meta.txt && [ \$(awk '\$1 == \"h0\" && NF == 5 { print \$4 }' $tmp/meta.txt) = 30 ]"

# --check --pipeline: the new programs built, no run (rocelab-p4 --check builds the others: swx_cli)
for p in flowlet letflow; do
  timeout 60 "$DP" --check --pipeline "$P4/$p.spec" > "$tmp/check_$p.txt" 2>&1
  check "--check --pipeline p4/$p.spec: exit 0, OK" \
    "[ $? = 0 ] && grep -q '$p.spec: OK' $tmp/check_$p.txt && ! grep -q '^rocelab-dp: ran' $tmp/check_$p.txt"
done
printf 'struct m_t {\n\tbit<32> port\n}\nmetadata instanceof m_t\napply {\n\trx m.port\n\tfrob m.port\n\ttx m.port\n}\n' \
  > "$tmp/unknown.spec"
timeout 60 "$DP" --check --pipeline "$tmp/unknown.spec" > "$tmp/check_unknown.txt" 2>&1
check "--check --pipeline: an unknown instruction: exit 2 at FILE:7" \
  "[ $? = 2 ] && grep -q 'unknown.spec:7: unknown instruction' $tmp/check_unknown.txt"
# what only DPDK's build finds: tx to a port the switches do not have (6 at most)
sed 's/^\ttx m.port_out$/\ttx 0x20/' "$P4/ecmp.spec" > "$tmp/tx.spec"
line=$(grep -n '^	tx 0x20$' "$tmp/tx.spec" | cut -d: -f1)
timeout 60 "$DP" --check --topology "$SRC/topologies/default.yaml" --pipeline "$tmp/tx.spec" \
  > "$tmp/check_tx.txt" 2>&1
check "--check --topology --pipeline: DPDK refuses tx 0x20 on 6 ports: exit 2 at FILE:$line" \
  "[ $? = 2 ] && [ -n '$line' ] && grep -q \"tx.spec:$line: tx to port 0x20\" $tmp/check_tx.txt"

# a program that rewrites the DSCP: the frames leave with it, their IPv4 checksum right
sed 's/^\tsub h.ipv4.ttl 0x1$/\tsub h.ipv4.ttl 0x1\n\tmov h.ipv4.diffserv 0x68/' "$P4/ecmp.spec" > "$tmp/dscp.spec"
dp --topology "$SRC/topologies/default.yaml" --gen 'h1>h5:count=10' --pipeline "$tmp/dscp.spec" \
  --capture "h1-leaf0=$tmp/dscp_in.pcap" --capture "h5-leaf1=$tmp/dscp_out.pcap" > "$tmp/dscp.txt" 2>&1
dscps() { tshark -r "$1" -o ip.check_checksum:TRUE -T fields -e ip.dsfield.dscp -e ip.checksum.status 2>/dev/null | sort | uniq -c | tr -s ' \t' ' '; }
check "a write to h.ipv4.diffserv (0x68): sent with DSCP 0, received with DSCP 26, checksums good" \
  "[ \"\$(dscps $tmp/dscp_in.pcap)\" = ' 10 0 1' ] && [ \"\$(dscps $tmp/dscp_out.pcap)\" = ' 10 26 1' ]"
# a field rocelab takes nothing from: refused at its line
sed 's/^\tsub h.ipv4.ttl 0x1$/\tsub h.ipv4.ttl 0x1\n\tmov h.ipv4.identification 0x7/' "$P4/ecmp.spec" > "$tmp/ident.spec"
line=$(grep -n 'mov h.ipv4.identification 0x7' "$tmp/ident.spec" | cut -d: -f1)
dp --topology "$SRC/topologies/default.yaml" --gen 'h1>h5:count=10' --pipeline "$tmp/ident.spec" \
  > "$tmp/ident.txt" 2>&1
check "a write to h.ipv4.identification: exit 2 at FILE:$line naming the field" \
  "[ $? = 2 ] && [ -n '$line' ] && grep -q \"ident.spec:$line: .*writes h.ipv4.identification, which rocelab-dp does not take\" $tmp/ident.txt"
# the source MAC is rocelab's rewrite too: a program may write it
sed 's/^\tsub h.ipv4.ttl 0x1$/\tsub h.ipv4.ttl 0x1\n\tmov h.ethernet.src_addr 0x020000000001/' "$P4/ecmp.spec" > "$tmp/smac.spec"
timeout 60 "$DP" --check --pipeline "$tmp/smac.spec" > "$tmp/smac.txt" 2>&1
check "a write to h.ethernet.src_addr: accepted" \
  "[ $? = 0 ] && grep -q 'mov h.ethernet.src_addr' $tmp/smac.spec"
# what a program replaces is refused with it, not printed and left unapplied:
# --te places paths in the C next-hop stage, lb: is one
dp --topology "$SRC/topologies/default.yaml" --te --coll 'op=allreduce,sizes=64K,hosts=h0+h4' \
  --pipeline "$P4/ecmp.spec" > "$tmp/te.txt" 2>&1
check "--te with --pipeline: exit 2 naming a switch that runs the program" \
  "[ $? = 2 ] && grep -q 'rocelab-dp: --te: switch leaf0 runs a program' $tmp/te.txt && ! grep -q '^te:' $tmp/te.txt"
{ cat "$SRC/topologies/default.yaml"; printf 'defaults:\n  switch: {lb: pinning}\n'; } > "$tmp/lb.yaml"
dp --topology "$tmp/lb.yaml" --gen 'h1>h5:count=10' --pipeline "$P4/ecmp.spec" > "$tmp/lb.txt" 2>&1
check "lb: pinning with --pipeline: exit 2 naming the switch, lb: and the program" \
  "[ $? = 2 ] && grep -q 'switch leaf0: lb: pinning is a stage of the C pipeline, which its program .*ecmp.spec replaces' $tmp/lb.txt"
tap_done
