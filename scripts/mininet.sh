#!/usr/bin/env bash
# Run Mininet with rocelab inside a sandbox of its own: new network, PID and
# mount namespaces (unshare --net --pid --mount --fork --mount-proc), a private
# /tmp, /run/dpdk (tmpfs) and /sys. Mininet's clean-up (`mn -c`, and mn's error path)
# kills processes by name (killall, pkill -f) and deletes every `*-ethN` link
# machine-wide; in the sandbox it only sees the sandbox. When the sandbox's
# first process exits, the kernel kills everything left inside it and the
# network namespace takes its veths with it; DPDK's runtime files go with
# the private /run/dpdk (query telemetry from inside: mn's `sh` command,
# `mininet.sh --run`, or nsenter -t PID -a with the PID of a process inside).
#
#   mininet.sh [--timeout S] [mn options]     mn --custom topologies/rocelab_mininet.py
#                                             --switch rocelab --host rocelab
#                                             --controller none [mn options]
#       e.g. mininet.sh --topo clos,2,2,2                    (the CLI)
#            mininet.sh --topo clos,4,4,4 --test pingall
#            mininet.sh --topo rocelab,topologies/default.yaml
#            mininet.sh --topo tree,2,2 --switch bridge     (Linux bridges, no rocelab)
#   mininet.sh [--timeout S] --python FILE [args]   a Mininet Python script, with
#                                             /usr/bin/python3 (e.g. --python
#                                             topologies/rocelab_mininet.py --topo clos,2,2,2)
#   mininet.sh [--timeout S] --run CMD [args]  any command in the sandbox (tests)
#   mininet.sh -h | --help
#
# --timeout S bounds the whole sandbox (timeout --foreground; default none).
# rocelab-dp: $ROCELAB_DP or build/dataplane/rocelab-dp (rocelab-topo: $ROCELAB_TOPO, or
# build/topology/ beside it).
# Needs root and /usr/bin/python3 with Debian's mininet (scripts/install-deps.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
self="$here/scripts/mininet.sh"
module="$here/topologies/rocelab_mininet.py"

die() { echo "mininet.sh: $*" >&2; exit 2; }
usage() { sed -n '2,27p' "$self" | sed 's/^# \{0,1\}//'; }

case "$here/" in
  /tmp/*) die "the checkout ($here) is under /tmp, which the sandbox replaces with its own: clone it elsewhere" ;;
esac

if [ "${1:-}" = _inner ]; then
  # PID 1 of the new namespaces: private /tmp and /sys, loopback up, then the job.
  shift
  mount -t tmpfs -o mode=1777,size=256m rocelab-mn-tmp /tmp
  mkdir -p /run/dpdk && mount -t tmpfs -o mode=0700,size=64m rocelab-mn-dpdk /run/dpdk
  mount -t sysfs sysfs /sys 2>/dev/null || true
  ip link set lo up
  # Stay PID 1 (a PID 1 ignores signals it has no handler for); the job is a child.
  rc=0
  "$@" || rc=$?
  exit "$rc"
fi

timeout_s=0
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
esac
if [ "${1:-}" = --timeout ]; then
  [ $# -ge 2 ] || die "--timeout needs seconds"
  timeout_s=$2; shift 2
fi

# mn's options, from its own --help: a typo is refused here, in one line, before the
# sandbox is built (mn would refuse it inside, with two lines of usage)
mn_check() {
  local opts a
  opts=$(/usr/bin/python3 /usr/bin/mn --help 2>/dev/null | grep -oE -- '--?[A-Za-z][-A-Za-z0-9]*') || return 0
  for a in "$@"; do
    case $a in
      -?*) grep -qxF -- "${a%%=*}" <<< "$opts" || die "unknown option $a; see --help (and mn --help)" ;;
    esac
  done
}
case "${1:-}" in --python|--run) ;; *) mn_check "$@" ;; esac
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
if ! /usr/bin/python3 -c 'import mininet' 2>/dev/null; then
  die "/usr/bin/python3 cannot import mininet (run scripts/install-deps.sh)"
fi
DP=${ROCELAB_DP:-$here/build/dataplane/rocelab-dp}
[ -x "$DP" ] || die "rocelab-dp not built at $DP (run: meson setup build && ninja -C build)"
DP=$(cd "$(dirname "$DP")" && pwd)/$(basename "$DP")
export ROCELAB_DP=$DP
# rocelab-topo: built in topology/ beside dataplane/ (or installed next to rocelab-dp)
for t in "$(dirname "$DP")/../topology/rocelab-topo" "$(dirname "$DP")/rocelab-topo"; do
  if [ -z "${ROCELAB_TOPO:-}" ] && [ -x "$t" ]; then
    ROCELAB_TOPO=$(cd "$(dirname "$t")" && pwd)/rocelab-topo
    export ROCELAB_TOPO
  fi
done

case "${1:-}" in
  --python)
    [ $# -ge 2 ] || die "--python FILE [args]"
    shift; job=(/usr/bin/python3 "$@") ;;
  --run)
    [ $# -ge 2 ] || die "--run CMD [args]"
    shift; job=("$@") ;;
  *)
    job=(/usr/bin/python3 /usr/bin/mn --custom "$module" --switch rocelab --host rocelab
         --controller none "$@") ;;
esac
if [ "$timeout_s" != 0 ]; then
  job=(timeout --foreground --kill-after=10 "$timeout_s" "${job[@]}")
fi
exec unshare --net --pid --mount --fork --mount-proc --propagation private -- \
  bash "$self" _inner "${job[@]}"
