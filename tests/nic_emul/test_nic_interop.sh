#!/usr/bin/env bash
# Interop: rocelab-nic (emulated NIC, namespace on a veth host) against the real
# ibv_rc_pingpong of Linux soft-RoCE in a qemu VM (TCG), through rocelab-dp, in both
# roles (scripts/rxe/nic-interop.sh does the run; this checks what it left).
#
#   test_nic_interop.sh ROCELAB_DP ROCELAB_NIC ROCELAB_LB
#
# Needs root, qemu-system-x86, busybox-static, a kernel with rdma_rxe and rdma-core's
# tools (scripts/install-deps.sh); skips (77) without them, fails in CI. Prints `ok - ...` /
# `not ok - ...` and `N passed, N failed`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
DP=$(realpath -m "${1:-$top/build/dataplane/rocelab-dp}")
NIC=$(realpath -m "${2:-$top/build/nic_emul/rocelab-nic}")
LB=$(realpath -m "${3:-$top/build/tools/rocelab-lb}")
SIZE=8192 ITERS=50

pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
nok() { echo "not ok - $*"; fail=$((fail + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
# What the test needs is missing: skip (77) on a developer's machine, fail in CI,
# where scripts/install-deps.sh must have provided it.
unavailable() {
  if [ "${CI:-}" = true ]; then echo "not ok - $*"; echo "0 passed, 1 failed"; exit 1; fi
  echo "skip - $*"; exit 77
}

[ "$(id -u)" = 0 ] || unavailable "needs root"
for c in qemu-system-x86_64 busybox ibv_rc_pingpong cpio depmod unshare nsenter; do
  command -v "$c" >/dev/null || unavailable "$c not installed (scripts/install-deps.sh)"
done
ls /boot/vmlinuz-* >/dev/null 2>&1 || unavailable "no kernel image (linux-image-amd64)"
[ -x "$DP" ] && [ -x "$NIC" ] && [ -x "$LB" ] || unavailable "rocelab-dp / rocelab-nic / rocelab-lb not built"

work=$(mktemp -d /tmp/rocelab-nicx-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
procs() { # our qemu / rocelab-dp / rocelab-nic processes, told by their command line
  local p c
  for p in /proc/[0-9]*; do
    c=$(tr '\0' ' ' 2>/dev/null < "$p/cmdline") || continue # (stderr first: a process gone in between is silent)
    case $c in
      *qemu-system-x86_64*rocelab.role=*|*rocelab-dp*--name\ rocelab-nicx*|*rocelab-nic\ pingpong*) echo "${p#/proc/}" ;;
    esac
  done | sort
}
before=$(procs)

logs=$work/logs
echo "# nic-interop.sh --size $SIZE --iters $ITERS (one VM boot per role, TCG)"
ROCELAB_DP=$DP timeout 560 "$top/scripts/rxe/nic-interop.sh" --nic "$NIC" --size "$SIZE" \
  --iters "$ITERS" --timeout 480 --logs "$logs" > "$work/out" 2>&1
rc=$?
sed 's/^/# /' "$work/out"
check "nic-interop.sh exits 0 (rc=$rc)" [ "$rc" = 0 ]

for role in client server; do
  vm_role=server; [ $role = server ] && vm_role=client
  IFS=$'\t' read -r _ nrc vrc _ <<<"$(awk -F'\t' -v r=$role '$1 == r' "$logs/summary.tsv" 2>/dev/null)"
  out=$logs/nic-$role.out serial=$logs/h4-$role.serial
  check "rocelab-nic as $role exits 0, ibv_rc_pingpong $vm_role in the VM exits 0 (nic ${nrc:-none}, vm ${vrc:-none})" \
    [ "${nrc:-x}" = 0 -a "${vrc:-x}" = 0 ]
  check "rocelab-nic as $role prints ibv_rc_pingpong's result lines" \
    grep -qE "^$((SIZE * ITERS * 2)) bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec" "$out"
  grep -hE 'bytes in|iters in|NIC counters' "$out" 2>/dev/null | sed "s/^/# nic $role: /"
  grep -hE 'bytes in .* Mbit/sec|iters in .* usec/iter' "$serial" 2>/dev/null | sed "s/^/# vm $vm_role: /"
  check "rocelab-nic as $role: $ITERS sends and receives, no ICRC/malformed/sequence drops" \
    bash -c "grep -q 'rdma_sends=$ITERS rdma_recvs=$ITERS' '$out' && ! grep -qE 'icrc_err=|rcv_malformed=|out_of_seq_request=|rcvd_seq_err=' '$out'"
  l=$(sed -n '/^@@RL STATS BEGIN/,/^@@RL STATS END/p' "$serial" 2>/dev/null | grep '^link .*sent_pkts')
  echo "# vm $vm_role rdma statistic: ${l:-none}"
  check "the VM's rxe ($vm_role) counted no sequence errors (out_of_seq_request, rcvd_seq_err 0) and $ITERS sends/recvs" \
    bash -c "grep -q 'out_of_seq_request 0 ' <<<'$l' && grep -q 'rcvd_seq_err 0 ' <<<'$l' && grep -q 'rdma_sends $ITERS rdma_recvs $ITERS' <<<'$l'"

  # the capture of h0-leaf0: every RoCE frame parses and its ICRC verifies, both ways
  cap=$logs/cap-$role.pcap
  "$LB" --pcap "$cap" --fields > "$work/f-$role" 2>&1
  sum=$(grep '^summary:' "$work/f-$role")
  echo "# capture h0-leaf0 ($role): $sum"
  roce=$(sed -n 's/.*roce=\([0-9]*\).*/\1/p' <<<"$sum"); bad=$(sed -n 's/.*icrc_bad=\([0-9]*\).*/\1/p' <<<"$sum")
  # per iteration each side sends SEND_FIRST + SEND_LAST (8192 B at MTU 4096) and one ACK
  check "capture ($role): >= $((6 * ITERS)) RoCE frames, all ICRCs valid (roce=${roce:-0} bad=${bad:-?})" \
    [ "${roce:-0}" -ge $((6 * ITERS)) -a "${bad:-1}" = 0 ]
  check "capture ($role): SEND_FIRST, SEND_LAST and ACK in both directions" bash -c "
    for d in 10.0.0.1,10.0.1.1 10.0.1.1,10.0.0.1; do
      for op in 0 2 17; do grep -q \"^[0-9]*,\$d,[0-9]*,4791,\$op,\" '$work/f-$role' || exit 1; done
    done"
done
after=$(procs)
check "no qemu, rocelab-dp or rocelab-nic left running" [ "$(comm -13 <(echo "$before") <(echo "$after"))" = "" ]
check "no work directory left behind" bash -c '! ls -d /tmp/rocelab-nicx.* >/dev/null 2>&1'

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
