#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rocelab-dp --traffic FILE on the virtual clock, on generated topologies:
# 1,000 generators all run to their count; generators, an RDMA transfer and a
# collective from one file run and check their data; bad traffic files exit 2
# with FILE:LINE (the parser's checks and the --gen/--rdma/--coll parsers' own).
# usage: test_traffic_dp.sh ROCELAB_DP ROCELAB_TOPO
set -u
DP=$1 TOPO=$2
. "$(dirname "$0")/../common/tap.sh"
trap 'rm -rf "$tmp" /var/run/dpdk/rl-tf$$-*' EXIT  # and DPDK's runtime folders of our runs

n=0
dp() { # rocelab-dp on the virtual clock with a unique DPDK name and a timeout
  n=$((n + 1))
  timeout 300 "$DP" --clock virtual --name "rl-tf$$-$n" "$@"
}

"$TOPO" --generate spines=4,leaves=8,hosts=16 -o "$tmp/clos128.yaml" || exit 1
"$TOPO" --generate spines=2,leaves=2,hosts=2,attach=emulated -o "$tmp/emu.yaml" || exit 1

# 1. 1,000 generators (more than the 64 the flags used to hold) over 128 hosts.
{
  echo "generators:"
  for i in $(seq 0 999); do
    src=$((i % 128)) dst=$(((i * 7 + 1 + i / 128) % 128))
    [ $dst -eq $src ] && dst=$(((dst + 1) % 128))
    echo "  - {src: h$src, dst: h$dst, rate: 1G, count: 10, start: $((i % 50))us}"
  done
} > "$tmp/gen1000.yaml"
dp --topology "$tmp/clos128.yaml" --traffic "$tmp/gen1000.yaml" > "$tmp/gen.txt" 2> "$tmp/gen.err"
rc=$?
done_gens=$(grep -c '^generator .*: sent 10 of 10,' "$tmp/gen.txt")
rx=$(awk '$1 ~ /^h[0-9]+$/ && NF == 5 { s += $4 } END { print s + 0 }' "$tmp/gen.txt")
check "1,000 generators from a traffic file: exit 0, each sent 10 of 10 ($done_gens), hosts received 10,000 ($rx)" \
  "[ $rc -eq 0 ] && [ $done_gens -eq 1000 ] && [ $rx -eq 10000 ]"

# 1b. The 1,024-host AI-zone fabric: 1,000 generators from zone 0 to zone 1 cross the
#     ATSW tier (every packet through 5 switches, the ATSWs share them by ECMP).
"$TOPO" --generate zones=2,leaves=32,spines=16,atsw=4,hosts=16,host-rate=400G,leaf-rate=400G,spine-oversub=1:7 \
  -o "$tmp/ai1024.yaml" || exit 1
{
  echo "generators:"
  for i in $(seq 0 999); do
    echo "  - {src: z0-h$((i % 512)), dst: z1-h$(((i * 5 + 3) % 512)), rate: 10G, count: 10}"
  done
} > "$tmp/cross.yaml"
dp --topology "$tmp/ai1024.yaml" --traffic "$tmp/cross.yaml" > "$tmp/cross.txt" 2> "$tmp/cross.err"
rc=$?
rx=$(awk '$1 ~ /^z1-h[0-9]+$/ && NF == 5 { s += $4 } END { print s + 0 }' "$tmp/cross.txt")
agg=$(awk '$2 == "atsw" { s += $4; n += ($4 > 0) } END { print s + 0, n + 0 }' "$tmp/cross.txt")
fwd=$(sed -n 's/.* events, \([0-9]*\) switch forwards.*/\1/p' "$tmp/cross.txt")
check "AI zones, 1,024 hosts: 10,000 packets from zone 0 reach zone 1 ($rx), all through the ATSWs, all 4 used ($agg), 5 switches each ($fwd forwards)" \
  "[ $rc -eq 0 ] && [ $rx -eq 10000 ] && [ '$agg' = '10000 4' ] && [ '${fwd:-0}' = 50000 ]"

# 2. Generators, RDMA and a collective from one file, on emulated NICs.
cat > "$tmp/mix.yaml" <<'YAML'
generators:
  - {src: h0, dst: h3, rate: 10G, count: 100}
rdma:
  - {src: h0, dst: h2, qps: 2, size: 65536, count: 8}
collectives:
  - {op: allreduce, hosts: [h0, h1, h2, h3], sizes: 64K}
YAML
dp --topology "$tmp/emu.yaml" --traffic "$tmp/mix.yaml" > "$tmp/mix.txt" 2>&1
rc=$?
check "mixed file: exit 0, generator sent 100 of 100" "[ $rc -eq 0 ] && grep -q '^generator h0>h3:rate=10G,count=100: sent 100 of 100,' $tmp/mix.txt"
check "mixed file: rdma 8 of 8, data verified" "grep -q '^rdma h0>h2:qps=2,size=65536,count=8: 8 of 8 WRITEs.*data verified' $tmp/mix.txt"
check "mixed file: allreduce of 64K over 4 ranks, 0 wrong" \
  "awk '\$1 == 65536 && \$9 == 0 { f = 1 } END { exit !f }' $tmp/mix.txt && grep -q '# allreduce: 4 ranks' $tmp/mix.txt"

# 2b. Two collectives at once on disjoint hosts (two jobs on one fabric, their rings
#     across the same spines): each completes its sweep with its data checked, its
#     lines tagged [c1] / [c2], the same messages as when it runs alone (timing may
#     differ, the work may not), and the output is the same with 2 worker threads.
cat > "$tmp/two.yaml" <<'YAML'
collectives:
  - {op: allreduce, hosts: [h0, h2], sizes: 64K:128K}
  - {op: allgather, hosts: [h1, h3], sizes: 64K, qps: 2}
YAML
dp --topology "$tmp/emu.yaml" --traffic "$tmp/two.yaml" > "$tmp/two.txt" 2> "$tmp/two.err"
rc=$?
c1=$(grep -Ec '^\[c1\] +(65536|131072) .* 0( +N/A){4}$' "$tmp/two.txt")
c2=$(grep -Ec '^\[c2\] +65536 .* 0( +N/A){4}$' "$tmp/two.txt")
check "two collectives: exit 0, c1 ran 2 sizes and c2 1, each 0 wrong ($c1, $c2)" \
  "[ $rc -eq 0 ] && [ $c1 -eq 2 ] && [ $c2 -eq 1 ] && grep -q '^# \[c1\] allreduce: 2 ranks' $tmp/two.txt && grep -q '^# \[c2\] allgather: 2 ranks, 1 channel(s), 2 QP' $tmp/two.txt"
msgs() { sed -n "s/^# $1totals:.* messages=\([0-9]*\) .*/\1/p" "$2"; }
dp --topology "$tmp/emu.yaml" --coll op=allreduce,hosts=h0+h2,sizes=64K:128K > "$tmp/solo1.txt" 2>&1
dp --topology "$tmp/emu.yaml" --coll op=allgather,hosts=h1+h3,sizes=64K,qps=2 > "$tmp/solo2.txt" 2>&1
m1=$(msgs '\[c1\] ' "$tmp/two.txt") m2=$(msgs '\[c2\] ' "$tmp/two.txt")
s1=$(msgs '' "$tmp/solo1.txt") s2=$(msgs '' "$tmp/solo2.txt")
check "two collectives: each moves the messages it moves alone (c1 $m1 = $s1, c2 $m2 = $s2)" \
  "[ -n '$m1' ] && [ '$m1' = '$s1' ] && [ -n '$m2' ] && [ '$m2' = '$s2' ]"
dp --topology "$tmp/emu.yaml" --traffic "$tmp/two.yaml" --workers 2 > "$tmp/two-w2.txt" 2> /dev/null
check "two collectives: the same output with --workers 2" \
  "diff <(grep -v ' of wall time' $tmp/two.txt) <(grep -v ' of wall time' $tmp/two-w2.txt) > /dev/null"
rc=0; dp --topology "$tmp/emu.yaml" --traffic "$tmp/two.yaml" --coll-series "$tmp/series.csv" > /dev/null 2> "$tmp/series.err" || rc=$?
check "two collectives and one --coll-series file: exit 2, said why" \
  "[ $rc -eq 2 ] && grep -q 'coll-series .*: one collective per file (this run has 2)' $tmp/series.err"

# 2c. An incast over 1,024 emulated NICs: the root holds a connection to each of the
#     1,023 others (2,046 QPs; the NICs' QP tables were sized for 64 peers at most) and a
#     staging area of 1,023 x 32 slots of 512 KiB (16 GiB of addresses, data=off).
"$TOPO" --generate spines=16,leaves=64,hosts=16,host-rate=400G,leaf-rate=400G,host-mtu=9000,attach=emulated \
  -o "$tmp/emu1024.yaml" || exit 1
dp --topology "$tmp/emu1024.yaml" --coll op=incast,sizes=64K,chunk=512K,window=32,data=off > "$tmp/incast.txt" 2>&1
rc=$?
check "incast 1,023:1 over 1,024 emulated NICs: exit 0, the size done, 1,023 messages" \
  "[ $rc -eq 0 ] && grep -Eq '^ +65536 +16384 +float +none +0 ' $tmp/incast.txt && grep -q '^# totals:.* messages=1023 ' $tmp/incast.txt"

# 3. Bad files: exit 2, "rocelab-dp: FILE:LINE: ..." (table: name | line | message | file body)
# (fed with < <(printf ...), not a pipe: a pipe would run it in a subshell and lose its count)
bad() { # bad NAME LINE MESSAGE [extra rocelab-dp args] ; body on stdin
  local name=$1 line=$2 msg=$3; shift 3
  cat > "$tmp/bad.yaml"
  dp --topology "$tmp/emu.yaml" --traffic "$tmp/bad.yaml" "$@" > /dev/null 2> "$tmp/bad.err"
  local rc=$?
  local first
  first=$(grep -m1 '^rocelab-dp: ' "$tmp/bad.err")
  if [ $rc -eq 2 ] && [[ "$first" == "rocelab-dp: $tmp/bad.yaml:$line: "*"$msg"* ]]; then
    ok "bad traffic ($name): exit 2, $first"
  else
    nok "bad traffic ($name): exit $rc, '$first' (expected exit 2, FILE:$line: ...$msg)"
  fi
}
bad "unknown key" 2 "generator: bad speed=1G: unknown key; keys: proto, flows" < <(printf 'generators:\n  - {src: h0, dst: h1, speed: 1G}\n')
bad "unknown host" 2 "dst: unknown host 'h7'" < <(printf 'generators:\n  - {src: h0, dst: h7}\n')
bad "negative rate" 3 "generator: bad rate=-1G: takes RATE" < <(printf 'generators:\n  - {src: h0, dst: h1}\n  - {src: h0, dst: h1, rate: -1G}\n')
bad "collective over one host" 2 "a collective over 1 host" < <(printf 'collectives:\n  - {op: allreduce, hosts: [h1]}\n')
bad "size beyond the generator's range" 2 "generator: bad size=20000" < <(printf 'generators:\n  - {src: h0, dst: h1, size: 20000}\n')
bad "qps beyond the rdma range" 2 "qps" < <(printf 'rdma:\n  - {src: h0, dst: h1, qps: 1000}\n')
bad "collectives sharing a host" 3 "host h2 is a rank of collective 1 already" < <(printf 'collectives:\n  - {op: allreduce, hosts: [h0, h2]}\n  - {op: allgather, hosts: [h1, h2]}\n')
bad "--coll (all hosts) and a file collective" 2 "host h0 is a rank of collective 1 already" --coll op=allgather < <(printf 'collectives:\n  - {op: allreduce}\n')
bad "unknown collective op" 2 "--coll: op=scatter: must be allreduce" < <(printf 'collectives:\n  - {op: scatter}\n')
# a collective naming 500 hosts (about 2,900 characters of host list: --coll reads it whole)
"$TOPO" --generate spines=2,leaves=5,hosts=100,attach=emulated,name=emu500 -o "$tmp/emu500.yaml" || exit 1
{ echo "collectives:"; echo "  - {op: allreduce, sizes: 4K, data: off,"; echo "     hosts: ["
  for i in $(seq 0 499); do echo "       h$((499 - i)),"; done; echo "     ]}"; } > "$tmp/long.yaml"
dp --topology "$tmp/emu500.yaml" --traffic "$tmp/long.yaml" > "$tmp/long.out" 2> "$tmp/long.err"
rc=$?
check "a collective over 500 named hosts runs whole (500 ranks, the size done, exit 0)" \
  "[ $rc -eq 0 ] && grep -q '^# allreduce: 500 ranks' $tmp/long.out && grep -Eq '^ +4096 ' $tmp/long.out"
rc=0; dp --topology "$tmp/emu.yaml" --traffic "$tmp/none.yaml" > /dev/null 2> "$tmp/none.err" || rc=$?
check "missing traffic file: exit 2, FILE: cannot read" "[ $rc -eq 2 ] && grep -q \"$tmp/none.yaml: cannot read\" $tmp/none.err"

tap_done
