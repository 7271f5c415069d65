#!/usr/bin/env bash
# Leftover check for a whole test run (scripts/test.sh): what our programs and
# tests leave behind. Other people may run tests on the same machine at the
# same time, so it compares against a baseline taken before the run and looks
# only at rocelab names (the prefixes our tests and scripts use), and at
# processes that carry the run's marker in their environment.
#
#   test_leftovers_suite.sh baseline FILE   record the state before the run
#   test_leftovers_suite.sh check FILE      list what is new since; exit 1 if anything
#
# Looked at: DPDK runtime directories (/var/run/dpdk, /run/dpdk), /tmp entries,
# named network namespaces (ip netns), links in this namespace (ip link), and
# processes whose environment holds ROCELAB_SUITE_RUN=<the value at baseline>
# (scripts/test.sh exports it, every process of the run inherits it).
set -u
mode=${1:-} file=${2:-}
[ -n "$mode" ] && [ -n "$file" ] || { echo "usage: $0 baseline|check FILE" >&2; exit 2; }

# Names our tests and scripts give: DPDK prefixes rocelab-*, rl-*;
# /tmp/rocelab-*, /tmp/rl-*; veths rl-*; namespaces rocelab*/rl-*.
ours='^(rocelab|rl-|rl_)'

# A DPDK runtime directory that a live process has open is in use (someone's
# run in progress), not left behind.
dir_in_use() {
  local d=$1 fd
  for fd in /proc/[0-9]*/fd/*; do
    case "$(readlink "$fd" 2>/dev/null)" in "$d"/*) return 0 ;; esac
  done
  return 1
}

state() {
  local d e
  for d in /var/run/dpdk /run/dpdk; do
    [ -d "$d" ] || continue
    for e in "$d"/*; do
      [ -e "$e" ] || continue
      basename "$e" | grep -Eq "$ours" && echo "dpdk $(realpath "$e")"
    done
  done | sort -u
  for e in /tmp/*; do
    [ -e "$e" ] || continue
    basename "$e" | grep -Eq "$ours" && echo "tmp $e"
  done
  ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "$ours" | sed 's/^/netns /'
  ip -o link 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | grep -E "$ours" | sed 's/^/link /'
}

# Processes of this run: the marker in /proc/PID/environ, not us or our ancestors.
run_procs() {
  local marker=$1 p self=$$ anc=" "
  p=$self
  while [ "$p" -gt 1 ] 2>/dev/null; do
    anc="$anc$p "
    p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 1)
  done
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    case "$anc" in *" $p "*) continue ;; esac
    [ "$p" = "$BASHPID" ] && continue
    if tr '\0' '\n' 2>/dev/null < "/proc/$p/environ" | grep -qx "ROCELAB_SUITE_RUN=$marker"; then
      echo "process $p $(tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline" | cut -c1-120)"
    fi
  done
}

case "$mode" in
baseline)
  state > "$file"
  ;;
check)
  [ -f "$file" ] || { echo "test_leftovers_suite.sh: no baseline $file" >&2; exit 2; }
  new=$(comm -13 "$file" <(state))
  left=""
  while read -r kind what; do
    [ -n "$kind" ] || continue
    if [ "$kind" = dpdk ] && dir_in_use "$what"; then
      echo "# in use by a running process (not ours to judge): $what"
      continue
    fi
    left="$left$kind $what"$'\n'
  done <<< "$new"
  [ -n "${ROCELAB_SUITE_RUN:-}" ] && left="$left$(run_procs "$ROCELAB_SUITE_RUN")"
  if [ -n "${left//$'\n'/}" ]; then
    echo "not ok - leftovers after the run:"
    printf '%s\n' "$left" | sed '/^$/d; s/^/#   /'
    exit 1
  fi
  echo "ok - nothing left behind (DPDK runtime directories, /tmp, netns, links, processes)"
  ;;
*) echo "usage: $0 baseline|check FILE" >&2; exit 2 ;;
esac
