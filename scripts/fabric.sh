#!/usr/bin/env bash
# Bring a rocelab topology up with real Linux hosts in network namespaces,
# run commands on them, and tear everything down again.
#
#   fabric.sh up   NAME (--topology FILE | --clos S,L,H) [--veth af_packet|af_xdp]
#                  [--timeout SECONDS] [-- rocelab-dp options]
#   fabric.sh exec NAME HOST COMMAND...   run COMMAND in HOST's namespace
#   fabric.sh pid  NAME HOST              PID holding HOST's namespace (for nsenter)
#   fabric.sh tel  NAME COMMAND[,PARAMS]  one DPDK telemetry query (JSON)
#   fabric.sh down NAME                   stop rocelab-dp (its tables go to NAME's log),
#                                         kill the hosts, remove the veths
#   fabric.sh demo                        the README's main job, in a private network
#                                         namespace: default topology, pings, iperf3, tables
#
# Each host's namespace is held by a `sleep` process made with `unshare --net`;
# everything is tracked and cleaned up by PID (state in /tmp/rocelab-NAME), so
# nothing is looked up or killed by name machine-wide. Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
DP=${ROCELAB_DP:-$here/build/dataplane/rocelab-dp}

die() { echo "fabric.sh: $*" >&2; exit 2; }
state_dir() { echo "/tmp/rocelab-$1"; }
host_pid() { # NAME HOST
  local f; f="$(state_dir "$1")/host-$2.pid"
  [ -f "$f" ] || die "no host $2 in fabric $1"
  cat "$f"
}

offloads_off() { # run ethtool -K in the current namespace for IF
  ethtool -K "$1" tx off tso off gso off gro off rx off >/dev/null 2>&1 || true
}

cmd_up() {
  local name=$1; shift
  local topo_args=() veth=af_packet timeout=0 extra=()
  while [ $# -gt 0 ]; do
    case $1 in
      --topology|--clos) topo_args=("$1" "$2"); shift 2 ;;
      --veth) veth=$2; shift 2 ;;
      --timeout) timeout=$2; shift 2 ;;
      --) shift; extra=("$@"); break ;;
      *) die "up: unknown argument $1" ;;
    esac
  done
  [ ${#topo_args[@]} -eq 2 ] || die "up: --topology FILE or --clos S,L,H is needed"
  [ -x "$DP" ] || die "rocelab-dp not built at $DP (run: meson setup build && ninja -C build)"
  local sd; sd=$(state_dir "$name")
  [ -e "$sd" ] && die "fabric $name is already up ($sd exists; fabric.sh down $name)"
  mkdir -p "$sd"
  "$DP" --list-hosts "${topo_args[@]}" > "$sd/hosts" || { rm -rf "$sd"; exit 2; }

  local hname attach ifname cidr gw mac mtu cidr6 gw6 pid
  while read -r hname attach ifname cidr gw mac mtu cidr6 gw6; do
    [ "$attach" = veth ] || continue
    unshare --net sleep infinity &
    pid=$!
    disown "$pid"  # killed by PID in down; no job-control noise
    echo "$pid" > "$sd/host-$hname.pid"
    # wait until the sleep runs in its own namespace
    for _ in $(seq 50); do
      [ "$(readlink /proc/$pid/ns/net 2>/dev/null)" != "$(readlink /proc/self/ns/net)" ] && break
      sleep 0.02
    done
    ip link add "$ifname" mtu 9500 type veth peer name eth0 netns "$pid"
    echo "$ifname" >> "$sd/veths"
    sysctl -qw "net.ipv6.conf.$ifname.disable_ipv6=1" 2>/dev/null || true
    ip link set "$ifname" up
    offloads_off "$ifname"
    # IPv4 and IPv6 (no router advertisements or DAD: the leaf answers ND by proxy)
    nsenter -t "$pid" -n sh -c "
      sysctl -qw net.ipv6.conf.default.accept_ra=0 net.ipv6.conf.default.accept_dad=0 2>/dev/null
      ip link set lo up
      ip link set eth0 address $mac mtu $mtu
      sysctl -qw net.ipv6.conf.eth0.accept_ra=0 net.ipv6.conf.eth0.accept_dad=0 2>/dev/null
      ethtool -K eth0 tx off tso off gso off gro off rx off >/dev/null 2>&1 || true
      ip addr add $cidr dev eth0
      ip -6 addr add $cidr6 dev eth0 nodad
      ip link set eth0 up
      ip route add default via $gw
      ip -6 route add default via $gw6"
  done < "$sd/hosts"

  local run=("$DP" "${topo_args[@]}" --veth "$veth" --name "rocelab-$name" "${extra[@]}")
  if [ "$timeout" != 0 ]; then run=(timeout --signal=TERM "$timeout" "${run[@]}"); fi
  "${run[@]}" > "$sd/dp.log" 2>&1 &
  echo $! > "$sd/dp.pid"
  disown $!
  # up when the banner is printed (EAL init takes a fraction of a second)
  for _ in $(seq 100); do
    grep -q "^rocelab-dp: .*telemetry" "$sd/dp.log" 2>/dev/null && break
    if ! kill -0 "$(cat "$sd/dp.pid")" 2>/dev/null; then
      echo "fabric.sh: rocelab-dp exited during start:" >&2; tail -20 "$sd/dp.log" >&2
      cmd_down "$name" >/dev/null 2>&1 || true
      exit 1
    fi
    sleep 0.1
  done
  grep -q "^rocelab-dp: .*telemetry" "$sd/dp.log" || { echo "fabric.sh: rocelab-dp did not start" >&2; cmd_down "$name"; exit 1; }
  echo "fabric $name up: $(grep -c . "$sd/hosts") hosts; log $sd/dp.log"
}

cmd_down() {
  local name=$1 sd; sd=$(state_dir "$name")
  [ -d "$sd" ] || die "no fabric $name"
  if [ -f "$sd/dp.pid" ]; then
    local p; p=$(cat "$sd/dp.pid")
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  fi
  for f in "$sd"/host-*.pid; do
    [ -f "$f" ] || continue
    kill -KILL "$(cat "$f")" 2>/dev/null || true
  done
  # the veths die with their namespaces; remove any that are left
  if [ -f "$sd/veths" ]; then
    while read -r v; do ip link del "$v" 2>/dev/null || true; done < "$sd/veths"
  fi
  [ -f "$sd/dp.log" ] && cat "$sd/dp.log"
  rm -rf "$sd"
}

cmd_tel() { # NAME QUERY: query the telemetry socket of fabric NAME
  local sock="/var/run/dpdk/rocelab-$1/dpdk_telemetry.v2"
  [ -S "$sock" ] || sock="/run/dpdk/rocelab-$1/dpdk_telemetry.v2"
  [ -S "$sock" ] || die "no telemetry socket for fabric $1"
  python3 - "$sock" "$2" <<'PY'
import socket, sys, json
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(5)
s.connect(sys.argv[1])
s.recv(65536)  # the greeting
s.send(sys.argv[2].encode())
print(s.recv(1 << 20).decode())
PY
}

demo_inner() {
  local name=demo$$
  trap 'cmd_down '"$name"' >/dev/null 2>&1 || true' EXIT
  cmd_up "$name" --topology "$here/topologies/default.yaml" --timeout 120
  local ip
  echo "== ping: h0 to every other host (through leaf0, a spine, leaf1)"
  while read -r h _ _ cidr _ _ _ _; do
    [ "$h" = h0 ] && continue
    ip=${cidr%/*}
    printf '%-4s %-12s ' "$h" "$ip"
    cmd_exec "$name" h0 ping -c 3 -i 0.2 -W 2 -q "$ip" | grep -E 'packet loss' || echo "no reply"
  done < "$(state_dir "$name")/hosts"
  echo "== iperf3 TCP h0 -> h4 (across leaves), 3 s"
  cmd_exec "$name" h4 timeout 20 iperf3 -s -1 -D --logfile /dev/null
  sleep 0.5
  cmd_exec "$name" h0 timeout 20 iperf3 -c 10.0.1.1 -t 3 -f m | grep -E 'sender|receiver' || true
  echo "== the fabric's tables"
  trap - EXIT
  cmd_down "$name" | sed -n '/^rocelab-dp: ran/,$p'
}

cmd_exec() { local name=$1 host=$2; shift 2; nsenter -t "$(host_pid "$name" "$host")" -n "$@"; }

[ $# -ge 1 ] || { sed -n '2,18p' "$0"; exit 2; }
case $1 in
  up) shift; [ $# -ge 1 ] || die "up NAME ..."; cmd_up "$@" ;;
  down) [ $# -eq 2 ] || die "down NAME"; cmd_down "$2" ;;
  exec) [ $# -ge 4 ] || die "exec NAME HOST COMMAND..."; shift; cmd_exec "$@" ;;
  pid) [ $# -eq 3 ] || die "pid NAME HOST"; host_pid "$2" "$3" ;;
  tel) [ $# -eq 3 ] || die "tel NAME QUERY"; cmd_tel "$2" "$3" ;;
  demo) [ "$(id -u)" -eq 0 ] || die "demo needs root (network namespaces)"
        exec unshare --net --mount -- bash "$0" _demo ;;
  _demo) ip link set lo up; demo_inner ;;
  -h|--help) sed -n '2,18p' "$0" ;;
  *) die "unknown command $1 (see --help)" ;;
esac
