#!/usr/bin/env bash
# shellcheck disable=SC2317  # the predicates are called through check()
# Mininet integration tests of topologies/rocelab_mininet.py, each run inside
# the sandbox of scripts/mininet.sh (own network, PID and mount namespaces,
# private /tmp), so nothing reaches the machine's network or processes.
#
#   test_mininet.sh CASE ROCELAB_DP ROCELAB_TOPO [ARG]
#
#   pingall-mn S,L,H      `mn --custom ... --test pingall` on clos,S,L,H: 0% loss,
#                         every pair answered, the pings went through rocelab-dp
#                         (its switch-forward count), nothing left after mn exits
#   pingall-script S,L,H  the same through the module run as a script (exit status)
#   iperf3                iperf3 TCP h0 -> h3 (leaf0 -> leaf1) through the fabric,
#                         started by hand; rate > 0 and the frames were forwarded
#   killed                kill -9 the Mininet python while the fabric runs, then
#                         `mn -c --custom MODULE` (round 1) and `MODULE --clean`
#                         (round 2): no rocelab-dp, no veth, no state left
#   bridge                Linux-bridge comparison: tree,2,2 with --switch bridge,
#                         pingall 0% loss and iperf3 h1 -> h4
#
# Prints `ok - ...` / `not ok - ...`, ends with `N passed, N failed`, exits 1 on
# any failure. Needs root. Every process has a timeout; the sandbox's end kills
# whatever is left in it.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
self="$here/tests/mininet/test_mininet.sh"
module="$here/topologies/rocelab_mininet.py"
wrapper="$here/scripts/mininet.sh"

pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }
check() { # DESCRIPTION COMMAND...: ok when COMMAND succeeds
  local d=$1; shift
  if "$@"; then ok "$d"; else notok "$d"; fi
}
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; }

# --- helpers for inside the sandbox (process checks only look, never kill) ---
live_pids_named() { # COMM: PIDs (not zombies) whose comm is COMM
  local d s
  for d in /proc/[0-9]*; do
    [ "$(cat "$d/comm" 2>/dev/null)" = "$1" ] || continue
    s=$(sed 's/.*) //' "$d/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$s" ] && [ "$s" != Z ] && echo "${d#/proc/}"
  done
}
no_rocelab_dp() { [ -z "$(live_pids_named rocelab-dp)" ]; }
n_veths() { ip -o link show type veth 2>/dev/null | grep -c . || true; }
no_veths() { [ "$(n_veths)" -eq 0 ]; }
no_state() { [ -z "$(ls -A /tmp/rocelab-mininet 2>/dev/null)" ]; }
no_mn_shells() { # Mininet's node shells are `bash ... -is mininet:NODE`
  local d
  for d in /proc/[0-9]*; do
    [ "$(cat "$d/comm" 2>/dev/null)" = bash ] || continue
    case "$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null)" in *" mininet:"*) return 1 ;; esac
  done
  return 0
}
lacks() { ! grep -q -- "$1" "$2"; } # PATTERN FILE
no_dpdk_runtime() { [ -n "$1" ] && [ ! -e "/var/run/dpdk/$1" ]; } # NAME
no_veth_no_bridge() { [ -z "$(ip -o link show type veth; ip -o link show type bridge)" ]; }
forwards_at_least() { # LOG N: rocelab-dp's stop line counted >= N switch forwards
  local n
  n=$(grep -o '[0-9]* switch forwards' "$1" | tail -1 | cut -d' ' -f1)
  [ -n "$n" ] && [ "$n" -ge "$2" ]
}
pingall_complete() { # LOG N: Mininet printed 0% dropped (N/N received)
  grep -q "Results: 0% dropped ($2/$2 received)" "$1"
}

pairs() { # S,L,H -> number of ordered host pairs
  local h l
  IFS=, read -r _ l h <<< "$1"
  echo $(( (l * h) * (l * h - 1) ))
}

in_pingall() { # MODE S,L,H  (inside the sandbox)
  local mode=$1 clos=$2 log=/tmp/out.txt rc=0 n
  n=$(pairs "$clos")
  if [ "$mode" = mn ]; then
    timeout 240 /usr/bin/python3 /usr/bin/mn --custom "$module" --topo "clos,$clos" \
      --switch rocelab --host rocelab --controller none --test pingall > "$log" 2>&1 || rc=$?
    check "mn --test pingall on clos,$clos exits 0" [ "$rc" -eq 0 ]
  else
    timeout 240 /usr/bin/python3 "$module" --topo "clos,$clos" --pingall > "$log" 2>&1 || rc=$?
    check "rocelab_mininet.py --pingall on clos,$clos exits 0 (0% loss)" [ "$rc" -eq 0 ]
  fi
  check "rocelab-dp started with all switches of clos,$clos in one process" \
    grep -q "^\*\*\* rocelab-dp: clos-${clos//,/x}: .* telemetry" "$log"
  check "pingall: 0% dropped, $n/$n received" pingall_complete "$log" "$n"
  check "the pings crossed rocelab-dp (>= $((2 * n)) switch forwards)" \
    forwards_at_least "$log" $((2 * n))
  check "after the run: no rocelab-dp process" no_rocelab_dp
  check "after the run: no veth left" no_veths
  check "after the run: no fabric state left in /tmp/rocelab-mininet" no_state
  if [ "$fail" -ne 0 ]; then echo "--- output"; tail -40 "$log"; fi
}

in_iperf3() {
  local log=/tmp/out.txt rc=0 mbit
  timeout 120 /usr/bin/python3 "$module" --topo clos,2,2,2 --iperf3 h0,h3 --time 3 \
    -v info > "$log" 2>&1 || rc=$?
  check "iperf3 h0 -> h3 through the fabric exits 0" [ "$rc" -eq 0 ]
  mbit=$(sed -n 's/^rocelab_mininet: iperf3 h0 -> h3: \([0-9.]*\) Mbit.*/\1/p' "$log")
  echo "# iperf3 h0 -> h3: ${mbit:-?} Mbit/s"
  check "iperf3 received more than 10 Mbit/s" \
    awk -v m="${mbit:-0}" 'BEGIN { exit !(m > 10) }'
  # 3 s at >= 10 Mbit/s of 1500-byte frames is >= 2500 data frames, each
  # forwarded by leaf0, a spine and leaf1
  check "the iperf3 frames crossed rocelab-dp (>= 7500 switch forwards)" \
    forwards_at_least "$log" 7500
  check "after the run: no rocelab-dp process" no_rocelab_dp
  check "after the run: no veth left" no_veths
  if [ "$fail" -ne 0 ]; then echo "--- output"; tail -40 "$log"; fi
}

in_killed_round() { # ROUND CLEANUP-COMMAND...
  local round=$1; shift
  # not *.log: Mininet's clean-up deletes /tmp/*.log and /tmp/*.out
  local log=/tmp/killed$round.txt pid dp
  ROCELAB_DP_TIMEOUT=120 timeout 180 /usr/bin/python3 "$module" --topo clos,2,2,2 --pingall \
    --wait -v output > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    grep -q '^rocelab_mininet: ready' "$log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  check "round $round: the net came up (pingall 12/12)" pingall_complete "$log" 12
  # the python is timeout's child; kill -9 it, not the timeout
  local py
  py=$(ps -o pid= --ppid "$pid" | tr -d ' ' | head -1)
  check "round $round: found the Mininet python (PID ${py:-none})" [ -n "$py" ]
  dp=$(live_pids_named rocelab-dp)
  check "round $round: before the kill: one rocelab-dp runs" [ "$(echo "$dp" | grep -c .)" -eq 1 ]
  check "round $round: before the kill: 4 host veth pairs" [ "$(n_veths)" -eq 4 ]
  [ -n "$py" ] && kill -9 "$py"
  wait "$pid" 2>/dev/null
  sleep 0.5
  check "round $round: after kill -9: rocelab-dp still runs (clean-up is needed)" \
    [ -n "$(live_pids_named rocelab-dp)" ]
  # (the host shells exit when their pty closes, taking the veths along)
  echo "# round $round: after kill -9: $(n_veths) veths left"
  local name
  name=$(sed -n 's/.*"name": "\(rocelab-mn-[0-9a-f]*\)".*/\1/p' \
    /tmp/rocelab-mininet/*/state.json 2>/dev/null | head -1)
  check "round $round: the fabric's state file names it (${name:-none})" [ -n "$name" ]
  timeout 120 "$@" > "/tmp/clean$round.txt" 2>&1
  check "round $round: clean-up ($*) exits 0" [ $? -eq 0 ]
  sleep 0.2
  check "round $round: after clean-up: no rocelab-dp process" no_rocelab_dp
  check "round $round: after clean-up: no veth" no_veths
  check "round $round: after clean-up: no Mininet host shell" no_mn_shells
  check "round $round: after clean-up: no fabric state in /tmp/rocelab-mininet" no_state
  check "round $round: after clean-up: no /run/dpdk/${name:-?}" no_dpdk_runtime "$name"
  if [ "$fail" -ne 0 ]; then
    echo "--- run"; tail -20 "$log"; echo "--- clean-up"; tail -20 "/tmp/clean$round.txt"
  fi
}

in_killed() {
  in_killed_round 1 /usr/bin/python3 /usr/bin/mn -c --custom "$module"
  in_killed_round 2 /usr/bin/python3 "$module" --clean
}

in_bridge() {
  local log=/tmp/out.txt rc=0
  timeout 120 /usr/bin/python3 "$module" --topo tree,2,2 --switch bridge --pingall \
    --iperf3 h1,h4 --time 2 -v info > "$log" 2>&1 || rc=$?
  check "tree,2,2 with Linux bridges: exit 0" [ "$rc" -eq 0 ]
  check "tree,2,2 with Linux bridges: pingall 0% dropped, 12/12" pingall_complete "$log" 12
  check "tree,2,2 with Linux bridges: no rocelab-dp was started" \
    lacks rocelab-dp "$log"
  check "tree,2,2 with Linux bridges: iperf3 h1 -> h4 reported a rate" \
    grep -q '^rocelab_mininet: iperf3 h1 -> h4: [0-9.]* Mbit' "$log"
  grep '^rocelab_mininet: iperf3' "$log" | sed 's/^/# /'
  check "after the run: no veth left, no bridge left" no_veth_no_bridge
  if [ "$fail" -ne 0 ]; then echo "--- output"; tail -40 "$log"; fi
}

case ${1:-} in
  _in)
    shift; export PATH=/usr/sbin:/usr/bin:/sbin:/bin
    c=$1; shift
    case $c in
      pingall-mn) in_pingall mn "$1" ;;
      pingall-script) in_pingall script "$1" ;;
      iperf3) in_iperf3 ;;
      killed) in_killed ;;
      bridge) in_bridge ;;
      *) notok "unknown case $c" ;;
    esac
    finish; exit ;;
  pingall-mn|pingall-script|iperf3|killed|bridge)
    [ $# -ge 3 ] || { echo "usage: $0 CASE ROCELAB_DP ROCELAB_TOPO [S,L,H]" >&2; exit 2; }
    [ "$(id -u)" -eq 0 ] || { [ "${CI:-}" = true ] && { echo "not ok - needs root"; echo "0 passed, 1 failed"; exit 1; }; echo "1..0 # SKIP needs root"; exit 77; }
    export ROCELAB_DP=$2 ROCELAB_TOPO=$3 ROCELAB_DP_TIMEOUT=${ROCELAB_DP_TIMEOUT:-300}
    timeout --kill-after=10 600 "$wrapper" --run bash "$self" _in "$1" "${4:-}"
    rc=$?
    [ $rc -eq 124 ] && echo "not ok - the sandbox timed out"
    exit $rc ;;
  *) sed -n '3,23p' "$0"; exit 2 ;;
esac
