#!/usr/bin/env bash
# rocelab-dp leaves nothing behind: after a normal exit, SIGINT, SIGTERM and
# each kind of failure after DPDK started, its DPDK runtime directory
# (/var/run/dpdk/NAME) is gone and no process of it is left; a failed start
# does not remove the directory of another live process with the same name.
# usage: test_leftovers.sh ROCELAB_DP TOPOLOGY_DIR   (root; runs in its own network namespace)
set -u
if [ "${ROCELAB_IN_NETNS:-}" != 1 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "test_leftovers.sh: needs root"; echo "0 passed, 1 failed"; exit 1; }
  ROCELAB_IN_NETNS=1 exec timeout 300 unshare --net -- bash "$0" "$@"
fi
DP=$(realpath "$1") TOPO=$(realpath "$2")
NULL="$TOPO/../tests/bench/null-2x2.yaml"
ip link set lo up
pass=0 fail=0 n=0
ok()  { pass=$((pass + 1)); echo "ok - $1"; }
nok() { fail=$((fail + 1)); echo "not ok - $1"; }
rundir() { echo "/var/run/dpdk/$1"; }

# case TITLE WANT_STATUS ARGS...: run rocelab-dp to its end with a fresh name
case_exit() {
  local title=$1 want=$2 name; shift 2
  n=$((n + 1)); name=rl-lo$$-$n
  timeout 60 "$DP" --name "$name" --quiet "$@" > /dev/null 2>&1
  local rc=$?
  if [ "$rc" -eq "$want" ] && [ ! -e "$(rundir "$name")" ]; then ok "$title: exit $rc, nothing left"
  else nok "$title: exit $rc (want $want), $(rundir "$name") $([ -e "$(rundir "$name")" ] && echo left || echo gone)"; fi
}

# signal SIG: a live run stopped by SIG exits 0 and removes its directory
case_signal() {
  local sig=$1 name
  n=$((n + 1)); name=rl-lo$$-$n
  timeout 60 "$DP" --name "$name" --quiet --topology "$NULL" --gen 'h0>h4:size=64,rate=1G,count=100000000' \
    > /dev/null 2>&1 & local pid=$!
  for _ in $(seq 100); do [ -S "$(rundir "$name")/dpdk_telemetry.v2" ] && break; sleep 0.1; done
  local up=no; [ -e "$(rundir "$name")" ] && up=yes
  kill -"$sig" "$pid" 2>/dev/null
  # timeout passes the signal on; wait for both
  wait "$pid"; local rc=$?
  if [ "$up" = yes ] && [ "$rc" -eq 0 ] && [ ! -e "$(rundir "$name")" ] && ! pgrep -f -- "--name $name " > /dev/null
  then ok "SIG$sig: exit 0, nothing left (directory was there while running)"
  else nok "SIG$sig: up=$up exit $rc, $(rundir "$name") $([ -e "$(rundir "$name")" ] && echo left || echo gone)"; fi
}

# a reader that went away: stdout is a pipe whose reader exits (as a killed
# parent script's), then SIGTERM: the tables cannot be written (EPIPE, not a
# SIGPIPE death), so exit 1 with a message, and the directory is removed
case_gone_reader() {
  local name; n=$((n + 1)); name=rl-lo$$-$n
  local err; err=$(mktemp); local fifo; fifo=$(mktemp -u); mkfifo "$fifo"
  timeout 60 "$DP" --name "$name" --topology "$NULL" --gen 'h0>h4:size=64,rate=1G,count=100000000' \
    > "$fifo" 2> "$err" & local pid=$!
  exec 7< "$fifo"   # the reader: open, then closed before the report
  for _ in $(seq 100); do [ -S "$(rundir "$name")/dpdk_telemetry.v2" ] && break; sleep 0.1; done
  local up=no; [ -e "$(rundir "$name")" ] && up=yes
  exec 7<&-
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"; local rc=$?
  if [ "$up" = yes ] && [ "$rc" -eq 1 ] && [ ! -e "$(rundir "$name")" ] && grep -q 'writing the report to stdout failed' "$err"
  then ok "reader gone, then SIGTERM: exit 1 with a message, nothing left"
  else nok "reader gone: up=$up exit $rc (want 1), $(rundir "$name") $([ -e "$(rundir "$name")" ] && echo left || echo gone); $(tail -1 "$err")"; fi
  rm -f "$err" "$fifo"
}

case_exit "virtual clock, normal end" 0 --clos 2,2,2 --clock virtual --gen 'h0>h3:count=100'
case_exit "live clock, --duration" 0 --topology "$NULL" --duration 300ms --gen 'h0>h4:count=1000'
case_signal INT
case_signal TERM
case_gone_reader
case_exit "error after EAL start: --gen size larger than the frames" 2 --topology "$NULL" --gen 'h0>h4:size=9000'
case_exit "error after EAL start: --te without --coll" 2 --clos 2,2,2 --clock virtual --te
case_exit "error after EAL start: --capture to an unwritable file" 2 --clos 2,2,2 --clock virtual \
  --capture 'leaf0-spine0=/nonexistent-dir/x.pcap'
case_exit "EAL start fails (a veth host without its interface)" 1 --topology "$TOPO/default.yaml" --duration 1s

# Same name as a live process: EAL refuses to start; the other's directory stays.
name=rl-lo$$-same
timeout 30 "$DP" --name "$name" --quiet --topology "$NULL" --duration 20s > /dev/null 2>&1 & other=$!
for _ in $(seq 100); do [ -S "$(rundir "$name")/dpdk_telemetry.v2" ] && break; sleep 0.1; done
timeout 30 "$DP" --name "$name" --quiet --topology "$NULL" --duration 1s > /dev/null 2>&1; rc=$?
if [ "$rc" -eq 1 ] && [ -e "$(rundir "$name")/config" ] && kill -0 "$other" 2>/dev/null
then ok "a second process with a live process's name fails (exit 1) and leaves the other's directory"
else nok "same name: exit $rc, other's directory $([ -e "$(rundir "$name")/config" ] && echo kept || echo removed)"; fi
kill -TERM "$other" 2>/dev/null; wait "$other"
if [ ! -e "$(rundir "$name")" ]; then ok "the first process removed its directory at SIGTERM"
else nok "the first process left $(rundir "$name")"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
