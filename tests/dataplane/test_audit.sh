#!/usr/bin/env bash
# The frame-conservation audit at rocelab-dp's exit (dataplane/fabric/dp_audit.h):
# clean runs balance (one worker, --workers, MPI ranks, the live clock, a link
# failure, a PFC storm, a pool run dry); a frame removed on purpose
# (ROCELAB_AUDIT_STEAL, test only) is named with its place and the count 1,
# exit status 1 under ROCELAB_AUDIT=fatal, a warning and status 0 under warn;
# the packet pool balances at teardown (mbufs in use = frames the fabric
# holds), and an mbuf leaked on purpose (ROCELAB_AUDIT_LEAK, test only) is
# named with the count; bad values of the variables are refused with exit 2.
# usage: test_audit.sh ROCELAB_DP DATA_DIR [MPIRUN]   (live and MPI parts: root)
set -u
DP=$1 DATA=$2 MPIRUN=${3:-}
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done
# (meson's test setup sets both for every test: here each run says its own mode,
# and the frames stolen on purpose stay out of the tests' record of mismatches)
unset ROCELAB_AUDIT ROCELAB_AUDIT_LOG

n=0
dp() { # ENV-ASSIGNMENTS... -- ARGS...: one run, unique --name, a timeout; stdout in $tmp/out.$n, stderr in $tmp/err.$n
  n=$((n + 1))
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" timeout 120 "$DP" --name "rl-au$$-$n" "$@" > "$tmp/out.$n" 2> "$tmp/err.$n"
}
audit_lines() { grep -c "^rocelab-dp: AUDIT:" "$tmp/err.$n"; }
# balances RC WHAT [CONDITION]: the last run ended (status 0, its tables) with no AUDIT line
balances() {
  check "$2: the audit balances (rc $1, $(audit_lines) AUDIT lines)" \
    "[ $1 -eq 0 ] && [ $(audit_lines) -eq 0 ] && grep -q '^rocelab-dp: ran' $tmp/out.$n ${3:+&& $3}"
}
# named RC WHAT LINK: the last run (fatal) ended with status 1, naming LINK with the count 1
named() {
  check "$2: a frame stolen on $3 is named (rc $1)" \
    "[ $1 -eq 1 ] && grep -q '^rocelab-dp: AUDIT: link $3: 1 frame(s) unaccounted' $tmp/err.$n"
}

# leaked RC WHAT [N]: the last run (fatal) ended with status 1, naming the packet pool with the count N (1)
leaked() {
  check "$2: ${3:-1} mbuf(s) leaked are named (rc $1)" \
    "[ $1 -eq 1 ] && grep -q '^rocelab-dp: AUDIT: packet pool[ (a-z0-9)]*: ${3:-1} mbuf(s) unaccounted' $tmp/err.$n"
}

V=(--clock virtual --topology "$DATA/failover.yaml")
G=(--gen 'h0>h4:flows=16,rate=10G,count=6000' --gen 'h5>h1:proto=roce,flows=4,rate=20G,count=3000')

# 1. Balances on a clean run (with a link failure and recovery: failover.yaml's events).
dp ROCELAB_AUDIT=fatal -- "${V[@]}" "${G[@]}"
balances $? "virtual, one worker, link failure"

# 2. One frame stolen on leaf1>spine1 is named, with the count 1; fatal: exit 1.
dp ROCELAB_AUDIT=fatal ROCELAB_AUDIT_STEAL='leaf1>spine1' -- "${V[@]}" "${G[@]}"
rc=$?
named $rc "virtual, one worker, fatal" 'leaf1>spine1'
check "the stolen frame: its link's line and the warning, nothing else ($(audit_lines) AUDIT lines)" "[ $(audit_lines) -eq 2 ]"

# 3. Warn (the default): the same loud warning, the exit status as without it.
dp ROCELAB_AUDIT_STEAL='leaf1>spine1' -- "${V[@]}" "${G[@]}"
rc=$?
check "stolen frame, default (warn): exit 0 and a WARNING line (rc $rc)" \
  "[ $rc -eq 0 ] && grep -q '^rocelab-dp: AUDIT: WARNING: 1 place' $tmp/err.$n"

# 4. --workers 2: a frame stolen on a link the cut crosses is named; clean runs balance.
dp ROCELAB_AUDIT=fatal -- "${V[@]}" "${G[@]}" --workers 2
balances $? "virtual, --workers 2"
for l in 'spine0>leaf1' 'h5>leaf1'; do
  dp ROCELAB_AUDIT=fatal ROCELAB_AUDIT_STEAL="$l" -- "${V[@]}" "${G[@]}" --workers 2
  named $? "virtual, --workers 2" "$l"
done

# 5. A PFC storm with the watchdog draining queues, and the packet pool run dry.
dp ROCELAB_AUDIT=fatal -- --clock virtual --topology "$DATA/incast-pfc-on.yaml" \
   --gen 'h0>h2:dscp=26,rate=10G,count=20000' --gen 'h2>h0:proto=pfc,rate=10M,count=200' \
   --pfc-watchdog=detect=1ms,restore=1ms,poll=500us
balances $? "PFC storm drained by the watchdog" "grep -q 'pfc_storm=[1-9]' $tmp/out.$n"
dp ROCELAB_AUDIT=fatal -- "${V[@]}" "${G[@]}" --mbufs 1024 \
   --gen 'h1>h4:flows=4,rate=100G,count=20000' --gen 'h0>h5:flows=4,rate=100G,count=20000'
balances $? "pool run dry (--mbufs 1024, two 100G senders more)" "grep -q 'packet pool ran dry' $tmp/err.$n"

# 6. A run stopped by its duration, frames still in queues and on wires: held, not lost.
dp ROCELAB_AUDIT=fatal -- "${V[@]}" "${G[@]}" --duration 700us
balances $? "stopped at 700 us with frames in flight"

# 6b. The packet pool: mbufs leaked on purpose are named, with the frames the fabric still holds
# (the run stopped with frames in flight: the pool's check counts them as held, not lost).
dp ROCELAB_AUDIT=fatal ROCELAB_AUDIT_LEAK=3 -- "${V[@]}" "${G[@]}" --duration 700us
rc=$?
leaked $rc "virtual, stopped at 700 us" 3
read -r use held <<< "$(sed -n 's/.*packet pool: 3 mbuf(s) unaccounted (in use \([0-9]*\) = held in the fabric \([0-9]*\))/\1 \2/p' "$tmp/err.$n")"
check "the leak: the frames still held count (in use ${use:-?} = held ${held:-?} + 3), the pool's line and warning alone" \
  "[ -n '${held:-}' ] && [ ${held:-0} -gt 0 ] && [ ${use:-0} -eq $((${held:-0} + 3)) ] && [ $(audit_lines) -eq 2 ]"
dp ROCELAB_AUDIT=fatal ROCELAB_AUDIT_LEAK=1 -- "${V[@]}" "${G[@]}" --workers 2
leaked $? "virtual, --workers 2"
dp ROCELAB_AUDIT_LEAK=1 -- "${V[@]}" "${G[@]}"
rc=$?
check "leaked mbuf, default (warn): exit 0 and the pool's WARNING line (rc $rc)" \
  "[ $rc -eq 0 ] && grep -q '^rocelab-dp: AUDIT: WARNING: the packet pool' $tmp/err.$n"

# 7. Bad values: exit 2 with the variable named.
dp ROCELAB_AUDIT=loud -- "${V[@]}" "${G[@]}"
rc=$?
check "ROCELAB_AUDIT=loud is refused (rc $rc)" "[ $rc -eq 2 ] && grep -q 'ROCELAB_AUDIT=loud' $tmp/err.$n"
dp ROCELAB_AUDIT_STEAL='leaf9>spine1' -- "${V[@]}" "${G[@]}"
rc=$?
check "ROCELAB_AUDIT_STEAL of no link is refused (rc $rc)" "[ $rc -eq 2 ] && grep -q 'ROCELAB_AUDIT_STEAL=leaf9>spine1' $tmp/err.$n"
for v in 0 x 1001; do
  dp ROCELAB_AUDIT_LEAK=$v -- "${V[@]}" "${G[@]}"
  rc=$?
  check "ROCELAB_AUDIT_LEAK=$v is refused (rc $rc)" "[ $rc -eq 2 ] && grep -q 'ROCELAB_AUDIT_LEAK=$v: not a count' $tmp/err.$n"
done

# 7b. A fabric of 300 leaves (600 hosts): the route table's tbl8 groups are sized by the
# /24s that hold hosts (dp_fabric.c, lpm_create: 300, above DPDK's 256); every /32 fits,
# the last leaf's host is reached, and the audit balances there too.
dp ROCELAB_AUDIT=fatal -- --clock virtual --clos 2,300,2 --gen 'h0>h599:count=100,rate=1G'
balances $? "300 leaves, one /24 each" "grep -q '^h599 .* 100  *100000$' $tmp/out.$n"

# 8. MPI ranks (summed at rank 0) and the live clock (net_null hosts, two threads): root only.
if [ "$(id -u)" -ne 0 ]; then
  echo "# skip: MPI and live parts need root"
  tap_done; exit
fi
if [ -n "$MPIRUN" ]; then
  mpi() { # ENV... -- ARGS...
    n=$((n + 1))
    local envs=()
    while [ "$1" != -- ]; do envs+=(-x "$1"); shift; done
    shift
    # (Open MPI's own allocations outlive MPI_Finalize: no leak check, as test_partitions_mpi)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
      timeout 300 "$MPIRUN" --oversubscribe --allow-run-as-root --mca btl self,vader -np 2 "${envs[@]}" \
      "$DP" --name "rl-au$$-$n" "$@" > "$tmp/out.$n" 2> "$tmp/err.$n"
  }
  mpi ROCELAB_AUDIT=fatal -- "${V[@]}" "${G[@]}"
  balances $? "mpirun -np 2, the ranks' counters summed"
  mpi ROCELAB_AUDIT=fatal ROCELAB_AUDIT_STEAL='spine0>leaf1' -- "${V[@]}" "${G[@]}"
  named $? "mpirun -np 2" 'spine0>leaf1'
  mpi ROCELAB_AUDIT=fatal ROCELAB_AUDIT_LEAK=1 -- "${V[@]}" "${G[@]}"
  leaked $? "mpirun -np 2, each rank's own pool"
  check "mpirun -np 2: both ranks name their leak" "grep -q 'packet pool (rank 0): 1 mbuf' $tmp/err.$n && grep -q 'packet pool (rank 1): 1 mbuf' $tmp/err.$n"
fi
# (the benchmarks' 2x2 fabric of net_null hosts: tests/bench/null-2x2.yaml)
L=(--clock live --topology "$DATA/../../bench/null-2x2.yaml" --duration 300ms --gen 'h0>h4:flows=16,rate=500M' --gen 'h5>h1:flows=4,rate=500M')
for w in 1 2; do
  dp ROCELAB_AUDIT=fatal -- "${L[@]}" --workers $w
  balances $? "live, --workers $w"
  dp ROCELAB_AUDIT=fatal ROCELAB_AUDIT_STEAL='spine1>leaf1' -- "${L[@]}" --workers $w
  named $? "live, --workers $w" 'spine1>leaf1'
  dp ROCELAB_AUDIT=fatal ROCELAB_AUDIT_LEAK=1 -- "${L[@]}" --workers $w
  leaked $? "live, --workers $w"
done
check "no DPDK runtime directory left" "[ \$(dpdk_left \$(seq -f \"rl-au$$-%g\" 1 $n)) -eq 0 ]"
tap_done
