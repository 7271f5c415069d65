#!/usr/bin/env bash
# rocelab-dp --pipeline (issue 43, item 2): every switch's IPv4 decision from
# a DPDK SWX program. With p4/ecmp.spec (IPv4 LPM, ECMP with rocelab's hash)
# the whole stdout is the C pipeline's, wall-time figures aside: generated
# UDP and RoCE flows on topologies/default.yaml and across a link that goes
# down and up, E1's fabric with E-ECMP under an NCCL-model AllReduce; with
# --workers 2, and under mpirun -np 2 where there is mpirun. A program
# without ECMP (p4/default.spec) changes the output (the comparison sees the
# program); the program reads the ingress port; its drops count as reason
# p4; a bad program is refused with FILE:LINE and exit 2. The topology's
# pipeline: key (for every switch, per role; relative to the topology's
# folder) does what --pipeline does.
# usage: test_swx_dp.sh ROCELAB_DP SOURCE_ROOT
set -u
DP=$(realpath "$1") SRC=$(realpath "$2") RUN_PREFIX=rl-swxdp
# shellcheck source=dp_runs.sh
source "$SRC/tests/swx/dp_runs.sh"
# same NAME ARGS...: the run with --pipeline p4/ecmp.spec prints what the C pipeline prints
same() {
  local name=$1; shift
  dp "$@" > "$tmp/$name.c.txt" 2> "$tmp/$name.c.err"; echo $? > "$tmp/$name.c.rc"
  dp "$@" --pipeline "$P4/ecmp.spec" > "$tmp/$name.p.txt" 2> "$tmp/$name.p.err"; echo $? > "$tmp/$name.p.rc"
  strip_wall "$tmp/$name.c.txt" > "$tmp/$name.c.cmp"
  strip_wall "$tmp/$name.p.txt" > "$tmp/$name.p.cmp"
  check "$name: --pipeline p4/ecmp.spec exits 0 and prints what the C pipeline prints" \
    "[ \$(cat $tmp/$name.c.rc) = 0 ] && [ \$(cat $tmp/$name.p.rc) = 0 ] && grep -q '^rocelab-dp: ran' $tmp/$name.c.cmp && cmp -s $tmp/$name.c.cmp $tmp/$name.p.cmp"
}

gens=(--gen 'h1>h5:flows=16,rate=40G,count=3000' --gen 'h2>h6:proto=roce,flows=8,rate=40G,count=3000'
      --gen 'h4>h0:size=200,rate=10G,count=3000' --gen 'h7>h3:proto=roce,flows=16,rate=20G,count=2000'
      --gen 'h1>h2:count=500')
same gens5 --topology "$SRC/topologies/default.yaml" "${gens[@]}"
# the flows took both spines (else the hash was never asked)
check "gens5: leaf0 sent on both uplinks" \
  "[ \$(awk '\$1 == \"leaf0>spine0\" || \$1 == \"leaf0>spine1\" { if (\$3 > 0) k++ } END { print k + 0 }' $tmp/gens5.p.txt) = 2 ]"
same gens_eecmp --topology "$SRC/topologies/default-eecmp.yaml" "${gens[@]}"
# a link down at 1 ms and up at 2 ms: the program's groups follow the C pipeline's
fo=(--topology "$SRC/tests/dataplane/data/part-failover.yaml" --gen 'h0>h2:flows=16,rate=40G,count=15000'
    --gen 'h1>h3:proto=roce,flows=8,rate=40G,count=15000')
same failover "${fo[@]}"
same failover_workers2 "${fo[@]}" --workers 2

# E1's fabric (2 leaves x 4 spines, emulated NICs), E-ECMP with a seed of its own
sed 's/^defaults:/defaults:\n  switch: {profile: eecmp, seed: 7}/' \
  "$SRC/experiments/clos-2x4x4-emulated.yaml" > "$tmp/e1.yaml"
coll='op=allreduce,sizes=1M,data=on,model=nccl,NCCL_IB_QPS_PER_CONNECTION=4,NCCL_IB_SPLIT_DATA_ON_QPS=1,NCCL_MIN_NCHANNELS=2,NCCL_MAX_NCHANNELS=2,hosts=h0+h4+h1+h5+h2+h6+h3+h7'
same e1 --topology "$tmp/e1.yaml" --coll "$coll"
check "e1: the nccl-tests line is there" "grep -q '^ *1048576 ' $tmp/e1.p.txt"
same e1_workers2 --topology "$tmp/e1.yaml" --coll "$coll" --workers 2
check "e1 --workers 2: as one worker" "cmp -s $tmp/e1.c.cmp $tmp/e1_workers2.p.cmp"
# under mpirun -np 2 (Open MPI in a network namespace of its own, as
# tests/dataplane/test_partitions_mpi.sh runs it): where there is one, and root
if command -v mpirun > /dev/null && [ "$(id -u)" -eq 0 ]; then
  timeout 300 unshare --net -- bash -c 'ip link set lo up; exec "$@"' mpi \
    timeout 240 mpirun --oversubscribe --allow-run-as-root --mca btl self,vader -np 2 \
    "$DP" --clock virtual --name "rl-swxdp$$-mpi" --topology "$tmp/e1.yaml" --coll "$coll" \
    --pipeline "$P4/ecmp.spec" > "$tmp/e1_mpi.txt" 2> "$tmp/e1_mpi.err"
  check "e1 under mpirun -np 2 with --pipeline: prints what the C pipeline prints" \
    "cmp -s <(strip_wall $tmp/e1_mpi.txt) $tmp/e1.c.cmp"
else
  echo "ok - e1 under mpirun -np 2: skipped (needs mpirun and root)"
fi

# the topology's pipeline: key, relative to the topology's folder: for every
# switch (defaults: switch:) as --pipeline; per role (defaults: ctsw: or rtsw:)
mkdir "$tmp/topo"
cp "$P4/ecmp.spec" "$tmp/topo/prog.spec"
sed 's/^defaults:/defaults:\n  switch: {profile: eecmp, seed: 7, pipeline: prog.spec}/' \
  "$SRC/experiments/clos-2x4x4-emulated.yaml" > "$tmp/topo/all.yaml"
dp --topology "$tmp/topo/all.yaml" --coll "$coll" > "$tmp/key_all.txt" 2> "$tmp/key_all.err"
check "pipeline: prog.spec for every switch prints what --pipeline prints" \
  "cmp -s <(strip_wall $tmp/key_all.txt) $tmp/e1.p.cmp"
# per role: p4/default.spec (no ECMP) on the spines, which have one way down
# to each leaf, changes nothing; on the leaves, all goes up through spine0
cp "$P4/default.spec" "$tmp/nohash.spec"
for role in ctsw rtsw; do
  sed "s/^defaults:/defaults:\\n  $role: {pipeline: ..\\/nohash.spec}\\n  switch: {profile: eecmp, seed: 7}/" \
    "$SRC/experiments/clos-2x4x4-emulated.yaml" > "$tmp/topo/$role.yaml"
  dp --topology "$tmp/topo/$role.yaml" --coll "$coll" > "$tmp/key_$role.txt" 2> "$tmp/key_$role.err"
done
check "pipeline: per role, the spines: prints what the C pipeline prints" \
  "cmp -s <(strip_wall $tmp/key_ctsw.txt) $tmp/e1.c.cmp"
check "pipeline: per role, the leaves: leaf0 sends on spine0 only" \
  "grep -q '^rocelab-dp: ran' $tmp/key_rtsw.txt && [ \$(awk '\$1 ~ /^leaf0>spine[123]\$/ { s += \$3 } END { print s + 0 }' $tmp/key_rtsw.txt) = 0 ]"
sed 's/^defaults:/defaults:\n  ctsw: {pipeline: nothere.spec}/' \
  "$SRC/experiments/clos-2x4x4-emulated.yaml" > "$tmp/topo/missing.yaml"
dp --topology "$tmp/topo/missing.yaml" --coll "$coll" > "$tmp/key_missing.txt" 2>&1
echo $? > "$tmp/key_missing.rc"
check "pipeline: a file that is not there: exit 2 at the topology's FILE:LINE" \
  "[ \$(cat $tmp/key_missing.rc) = 2 ] && grep -q 'missing.yaml:7: pipeline: .*topo/nothere.spec' $tmp/key_missing.txt"
sed 's/^defaults:/defaults:\n  ctsw: {pipeline: ..\/unknown.spec}/' \
  "$SRC/experiments/clos-2x4x4-emulated.yaml" > "$tmp/topo/bad.yaml"

# p4/default.spec has no ECMP: the first uplink up carries everything, so the output changes
dp --topology "$tmp/e1.yaml" --coll "$coll" --pipeline "$P4/default.spec" > "$tmp/nohash.txt" 2>&1
check "p4/default.spec (no ECMP): runs, and its tables differ from the C pipeline's" \
  "grep -q '^rocelab-dp: ran' $tmp/nohash.txt && ! cmp -s <(strip_wall $tmp/nohash.txt) $tmp/e1.c.cmp"
check "p4/default.spec: leaf0 sends on spine0 only" \
  "[ \$(awk '\$1 ~ /^leaf0>spine[123]\$/ { s += \$3 } END { print s + 0 }' $tmp/nohash.txt) = 0 ]"

# the program's drops (its TTL check) are counted with their own reason
dp --topology "$SRC/topologies/default.yaml" --gen 'h1>h5:ttl=1,count=10' \
  --pipeline "$P4/ecmp.spec" > "$tmp/ttl.txt" 2>&1
check "a drop of the program counts as p4" "awk '\$1 == \"leaf0\"' $tmp/ttl.txt | grep -q 'p4=10'"

# the ingress port as the program's m.port_in: p4/ecmp.spec dropping what
# arrives on port 0 (leaf0's port 0 is h0's): h0's frames are dropped at
# leaf0, h1's to h0 (in on port 1, out on port 0) arrive
sed 's/^\trx m.port_in$/\trx m.port_in\n\tjmpeq DROP m.port_in 0x0/' "$P4/ecmp.spec" > "$tmp/port0.spec"
dp --topology "$SRC/topologies/default.yaml" --gen 'h0>h4:count=10' --gen 'h1>h0:count=7' \
  --pipeline "$tmp/port0.spec" > "$tmp/port0.txt" 2>&1
check "m.port_in is the ingress port: leaf0 drops h0's 10 frames (p4), h0 receives h1's 7" \
  "grep -q 'jmpeq DROP m.port_in' $tmp/port0.spec && awk '\$1 == \"leaf0\"' $tmp/port0.txt | grep -q 'p4=10' && [ \$(awk '\$1 == \"h0\" && NF == 5 { print \$4 }' $tmp/port0.txt) = 7 ]"

# bad programs: FILE:LINE, exit 2
printf 'struct m_t {\n\tbit<32> port\n}\nmetadata instanceof m_t\napply {\n\trx m.port\n\tfrob m.port\n\ttx m.port\n}\n' \
  > "$tmp/unknown.spec"
dp --topology "$SRC/topologies/default.yaml" --pipeline "$tmp/unknown.spec" > "$tmp/bad.txt" 2>&1
echo $? > "$tmp/bad.rc"
check "an unknown instruction: exit 2 with FILE:LINE" \
  "[ \$(cat $tmp/bad.rc) = 2 ] && grep -q 'unknown.spec:7:' $tmp/bad.txt"
check "an unknown instruction: refused before DPDK starts" "! grep -q '^EAL\\|TELEMETRY' $tmp/bad.txt"
dp --topology "$tmp/topo/bad.yaml" > "$tmp/bad_key.txt" 2>&1
check "an unknown instruction in a topology's pipeline: exit 2 with the program's FILE:LINE" \
  "[ $? = 2 ] && grep -q 'unknown.spec:7:' $tmp/bad_key.txt"
sed 's/^table route {/table routes {/; s/^\ttable route$/\ttable routes/' "$P4/default.spec" > "$tmp/noroute.spec"
dp --topology "$SRC/topologies/default.yaml" --pipeline "$tmp/noroute.spec" > "$tmp/noroute.txt" 2>&1
echo $? > "$tmp/noroute.rc"
check "a program without table route: exit 2 saying so" \
  "[ \$(cat $tmp/noroute.rc) = 2 ] && grep -q \"noroute.spec:[0-9]*: .*no table 'route'\" $tmp/noroute.txt"
dp --topology "$SRC/topologies/default.yaml" --pipeline "$tmp/missing.spec" > "$tmp/missing.txt" 2>&1
check "a program that is not there: exit 2" "[ $? = 2 ] && grep -q 'missing.spec' $tmp/missing.txt"
check "--help names --pipeline" "\"$DP\" --help | grep -q -- '--pipeline FILE.spec'"
tap_done
