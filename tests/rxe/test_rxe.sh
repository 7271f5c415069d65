#!/usr/bin/env bash
# Real soft-RoCE (rdma_rxe) endpoints through rocelab-dp: two qemu VMs (TCG) on
# different leaves of the default Clos, attached over vhost-user.
#
#   test_rxe.sh fabric ROCELAB_DP ROCELAB_LB   tools complete; capture and counters check
#   test_rxe.sh bad    ROCELAB_DP ROCELAB_LB   failures are clean and leave nothing behind
#   test_rxe.sh labserver ROCELAB_DP ROCELAB_LB the lab-server mode (kernel rxe in the
#                      initial namespace, veths, policy routing) in one VM with Debian's
#                      kernel: the four tools pass; capture and clean-up checks
#
# Needs root, qemu-system-x86, linux-image-amd64, busybox-static, rdma-core,
# ibverbs-utils, ibverbs-providers, perftest (scripts/install-deps.sh); skips (77)
# without them. Prints `ok - ...` / `not ok - ...` and `N passed, N failed`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
what=${1:-}; DP=${2:-$top/build/dataplane/rocelab-dp}; LB=${3:-$top/build/tools/rocelab-lb}
DP=$(realpath -m "$DP"); LB=$(realpath -m "$LB")
RUN=$top/scripts/rxe/run.sh
export ROCELAB_DP=$DP

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
for c in qemu-system-x86_64 busybox ibv_rc_pingpong ib_write_bw cpio depmod; do
  command -v "$c" >/dev/null || unavailable "$c not installed (scripts/install-deps.sh)"
done
ls /boot/vmlinuz-* >/dev/null 2>&1 || unavailable "no kernel image (linux-image-amd64)"
[ -x "$DP" ] && [ -x "$LB" ] || unavailable "rocelab-dp / rocelab-lb not built"

work=$(mktemp -d /tmp/rocelab-rxe-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

# what a run may leave behind: our processes, DPDK run dirs, work dirs, TAPs, bridges
procs() { # PIDs of run.sh's qemu and rocelab-dp processes, told by their command line
  local p c      # (read only: other sessions' rocelab-dp processes are not ours)
  for p in /proc/[0-9]*; do
    c=$(tr '\0' ' ' 2>/dev/null < "$p/cmdline") || continue # (stderr first: a process gone in between is silent)
    case $c in
      *qemu-system-x86_64*rocelab.role=*|*qemu-system-x86_64*rocelab.rw=*|*rocelab-dp*--name\ rocelab-rxe*) echo "${p#/proc/}" ;;
    esac
  done | sort
}
leftovers() {
  local n=0 p
  for p in $(comm -13 <(echo "$before") <(procs)); do echo "# left running: $p $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-100)"; n=$((n + 1)); done
  for p in /var/run/dpdk/rocelab-rxe* /run/dpdk/rocelab-rxe* /tmp/rocelab-rxe.* /tmp/rocelab-labserver.*; do
    [ -e "$p" ] && { echo "# left behind: $p"; n=$((n + 1)); }
  done
  ip -o link show 2>/dev/null | grep -E ' (rxtap|rxbr)[0-9]' && n=$((n + 1))
  [ "$n" = 0 ]
}
before=$(procs)

# what a run of the four tools must show: TESTS LOGS RC S0 S1 (the two leaf0 uplink captures)
check_run() {
  local tests=$1 logs=$2 rc=$3 s0=$4 s1=$5 t line size qps iters s_rc c_rc secs res l h
  check "run.sh exits 0 (rc=$rc)" [ "$rc" = 0 ]
  for t in $(tr ',' '\n' <<<"$tests" | cut -d: -f1); do
    line=$(awk -F'\t' -v t="$t" '$3 == t' "$logs/summary.tsv" 2>/dev/null)
    IFS=$'\t' read -r _ _ _ size qps iters s_rc c_rc secs res <<<"$line"
    check "$t ${size:-?} B x ${qps:-?} QP: server and client tools exit 0 (server ${s_rc:-none}, client ${c_rc:-none}; ${res:-no result})" \
      [ "${s_rc:-x}" = 0 -a "${c_rc:-x}" = 0 ]
  done
  # the tools' own result lines
  grep -hE 'bytes in .* Mbit/sec|iters in .* usec/iter' "$logs/h4.serial" 2>/dev/null | sed 's/^/# pingpong: /'
  grep -hA1 '^ *#bytes' "$logs/h4.serial" 2>/dev/null | grep -E '^ *[0-9]' | sed 's/^/# perftest: /'
  # rxe's own counters, printed (retransmits under TCG are expected, not hidden)
  for h in h0 h4; do
    l=$(sed -n '/^@@RL STATS BEGIN/,/^@@RL STATS END/p' "$logs/$h.serial" 2>/dev/null | grep '^link ')
    echo "# $h rdma statistic: ${l:-none}"
    check "$h: rdma statistic read back (sent_pkts, rcvd_pkts, retransmit counters)" \
      grep -q 'sent_pkts [0-9]* rcvd_pkts [0-9]*.*completer_retry_err [0-9]*' <<<"$l"
  done
  # the spine links: ICRC valid after TTL decrement; each QP on the spine rocelab-lb predicts
  if [ -s "$s0" ] || [ -s "$s1" ]; then
    python3 "$top/scripts/rxe/check-capture.py" --lb "$LB" --uplink "0=$s0" --uplink "1=$s1" \
      --leaf 10.0.0.0/24=eecmp,crc32,0x1234 --leaf 10.0.1.0/24=5tuple,crc32c,0xbeef \
      --min-packets 100 > "$work/cap" 2>&1
    grep -v '^ok - \|^not ok - ' "$work/cap" | sed 's/^/# /'
    while read -r l; do
      case $l in "ok - "*) ok "capture: ${l#ok - }" ;; "not ok - "*) nok "capture: ${l#not ok - }" ;; esac
    done < "$work/cap"
  else
    nok "captures of leaf0-spine0 / leaf0-spine1 written"
  fi
}


case $what in
fabric)
  tests="pingpong:4096:1:50,write_bw:65536:4:20,read_bw:65536:1:20,send_bw:65536:1:20"
  s0=$work/leaf0-spine0.pcap s1=$work/leaf0-spine1.pcap
  echo "# run.sh --tests $tests (two VMs, TCG, through rocelab-dp over vhost-user)"
  timeout 400 "$RUN" --mode vm --net vhost --tests "$tests" --timeout 300 --logs "$work/logs" \
    --capture "leaf0-spine0=$s0" --capture "leaf0-spine1=$s1" > "$work/out" 2>&1
  rc=$?
  sed 's/^/# /' "$work/out"
  check_run "$tests" "$work/logs" "$rc" "$s0" "$s1"
  check "nothing left behind (qemu, rocelab-dp, DPDK run dir, work dir, TAP)" leftovers
  ;;
labserver)
  # the lab-server mode (run.sh --mode host) in a VM booted with Debian's kernel, whose
  # rxe listens in the initial namespace only: every endpoint there, on its own veth
  tests="pingpong:4096:1:50,write_bw:4096:16:20,read_bw:65536:1:20,send_bw:65536:1:20"
  s0=$work/leaf0-spine0.pcap s1=$work/leaf0-spine1.pcap
  build=$(dirname "$(dirname "$DP")")
  cat > "$work/in-vm.sh" <<EOF
echo "detect: \$(scripts/rxe/run.sh --detect 2>/dev/null)" > $work/detect
ROCELAB_DP=$DP scripts/rxe/run.sh --mode host --tests $tests --timeout 600 --logs $work/logs \\
  --capture leaf0-spine0=$s0 --capture leaf0-spine1=$s1
rc=\$?
ip rule show > $work/rules.after; ip -o link show > $work/links.after
exit \$rc
EOF
  echo "# labserver.sh -- run.sh --mode host --tests $tests (one VM, Debian's kernel, TCG)"
  timeout 1000 "$top/scripts/rxe/labserver.sh" --rw "$work" --ro "$build" --timeout 960 \
    -- bash "$work/in-vm.sh" > "$work/out" 2>&1
  rc=$?
  sed 's/^/# /' "$work/out"
  check "the guest runs Debian's kernel with rdma_rxe and run.sh takes the lab-server mode" \
    grep -q '^run.sh: fabric dp, mode host' "$work/out"
  check "run.sh --detect picks the lab-server mode on this kernel ($(cat "$work/detect" 2>/dev/null))" \
    grep -qx 'detect: host' "$work/detect"
  check_run "$tests" "$work/logs" "$rc" "$s0" "$s1"
  check "the guest's rules are restored (local table at pref 0, no endpoint tables)" \
    bash -c "grep -qP '^0:\tfrom all lookup local' '$work/rules.after' && ! grep -q 'lookup 4791' '$work/rules.after'"
  check "the guest's veths are gone" bash -c "[ -s '$work/links.after' ] && ! grep -q ' rl-h[04]' '$work/links.after'"
  check "nothing left behind (qemu, work dirs)" leftovers
  ;;
bad)
  # rocelab-dp --idle-nap (run.sh's fabric naps longer than rocelab-dp's default): a
  # time is accepted, garbage and more than 10 ms are refused with the value named
  out=$("$DP" --idle-nap 200us --list-hosts --clos 2,2,1 2>&1); rc=$?
  check "rocelab-dp --idle-nap 200us is accepted (rc=$rc)" [ "$rc" = 0 ]
  for v in 20ms fast; do
    out=$("$DP" --idle-nap "$v" --list-hosts --clos 2,2,1 2>&1); rc=$?
    check "rocelab-dp --idle-nap $v: exit 2 naming the value (rc=$rc: $out)" \
      bash -c "[ $rc = 2 ] && grep -q \"bad --idle-nap.*'$v'\" <<<\"\$1\"" _ "$out"
  done

  # a tool that fails: an unknown test name next to a good one
  echo "# run.sh --tests pingpong:1024:1:10,bogus"
  timeout 300 "$RUN" --mode vm --net vhost --tests pingpong:1024:1:10,bogus --timeout 150 > "$work/out" 2>&1
  rc=$?
  sed 's/^/# /' "$work/out"
  check "a failing test makes run.sh exit 1 (rc=$rc)" [ "$rc" = 1 ]
  check "the error names the failed test" grep -q 'bogus.*rc=127.*unknown-test\|unknown-test' "$work/out"
  check "the error shows the tail of the serial log" grep -q "^---- tail of h[04]'s serial log" "$work/out"
  check "the good test before it still passed" grep -qE '^1 +pingpong .* 0 +0 ' "$work/out"
  check "nothing left behind after a failing tool" leftovers

  # a VM that cannot boot: a kernel file that is no kernel
  echo "not a kernel" > "$work/bad-kernel"
  echo "# run.sh --kernel (garbage)"
  timeout 120 "$RUN" --mode vm --net auto --tests pingpong --timeout 60 \
    --kernel "$work/bad-kernel" --initrd "$work/bad-kernel" > "$work/out" 2>&1
  rc=$?
  sed 's/^/# /' "$work/out"
  check "a VM that does not boot makes run.sh exit 3 (rc=$rc)" [ "$rc" = 3 ]
  check "the error says the VM did not boot" grep -q 'did not boot' "$work/out"
  check "qemu's own error is shown" grep -qi 'qemu' "$work/out"
  check "no TAP fallback for a boot failure" bash -c "! grep -q 'falling back' '$work/out'"
  check "nothing left behind after a VM that did not boot" leftovers

  # a VM whose kernel boots but has no usable initramfs: a kernel panic on the console
  built=$("$top/scripts/rxe/mkinitramfs.sh" 2>/dev/null)
  kernel=$(awk '$1 == "kernel" { print $2 }' <<<"$built")
  echo "# run.sh --initrd (garbage): kernel panics"
  timeout 150 "$RUN" --mode vm --net auto --tests pingpong --timeout 90 \
    --kernel "$kernel" --initrd "$work/bad-kernel" > "$work/out" 2>&1
  rc=$?
  sed 's/^/# /' "$work/out"
  check "a panicking guest makes run.sh exit 3 (rc=$rc)" [ "$rc" = 3 ]
  check "the tail of the serial log shows the panic" grep -qi 'panic' "$work/out"
  check "nothing left behind after a guest panic" leftovers
  ;;
*) echo "usage: $0 fabric|bad|labserver ROCELAB_DP ROCELAB_LB" >&2; exit 2 ;;
esac

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
