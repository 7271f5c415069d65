#!/usr/bin/env bash
# Bring a rocelab topology up with real Linux hosts in network namespaces,
# run commands on them, and tear everything down again.
#
#   fabric.sh up   NAME (--topology FILE | --clos S,L,H) [--veth af_packet|af_xdp]
#                  [--timeout SECONDS] [--processes N] [-- rocelab-dp options]
#                  --processes N: one fabric over N rocelab-dp processes (--process K/N,
#                  the topology's partition keys or the default cut), a memif between
#                  each two (sockets in the state directory); process K>0 is fabric
#                  NAME-pK for tel, its log NAME's dp-K.log; the options go to every one,
#                  --first-args "ARGS" (split at spaces) to process 0 alone (e.g. a --coll)
#   fabric.sh exec NAME HOST COMMAND...   run COMMAND in HOST's namespace
#   fabric.sh pid  NAME HOST              PID holding HOST's namespace (for nsenter)
#   fabric.sh tel  NAME COMMAND[,PARAMS]  one DPDK telemetry query (JSON)
#   fabric.sh tel-all NAME COMMAND[,PARAMS]  the query to every process of NAME, in order
#   fabric.sh down NAME                   stop rocelab-dp (its tables go to NAME's log),
#                                         kill the hosts, remove the veths
#   fabric.sh demo                        the README's main job, in a private network
#                                         namespace: default topology, pings, iperf3, tables
#
# Each host's namespace is held by a `sleep` process made with `unshare --net`;
# everything is tracked and cleaned up by PID (state in /tmp/rocelab-NAME), so
# nothing is looked up or killed by name machine-wide. Needs root.
set -euo pipefail
# here: the checkout, or PREFIX/share/rocelab when installed (bin/rocelab-fabric is a
# link to share/rocelab/scripts/fabric.sh, hence readlink -f); rocelab-dp is then the
# installed one: PREFIX/bin, else PATH.
here=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
if [ -n "${ROCELAB_DP:-}" ] || [ -f "$here/meson.build" ]; then
  DP=${ROCELAB_DP:-$here/build/dataplane/rocelab-dp}
elif [ -x "$here/../../bin/rocelab-dp" ]; then
  DP=$(cd "$here/../../bin" && pwd)/rocelab-dp
else
  DP=$(command -v rocelab-dp || echo rocelab-dp)
fi

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
  local topo_args=() veth=af_packet timeout=0 extra=() procs=1 first=()
  while [ $# -gt 0 ]; do
    case $1 in
      --topology|--clos) topo_args=("$1" "$2"); shift 2 ;;
      --veth) veth=$2; shift 2 ;;
      --timeout) timeout=$2; shift 2 ;;
      --first-args) read -r -a first <<< "$2"; shift 2 ;;
      --processes) procs=$2; shift 2
                   [[ $procs =~ ^[0-9]+$ ]] && [ "$procs" -ge 1 ] && [ "$procs" -le 16 ] || die "up: --processes 1..16" ;;
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

  local k pa
  for ((k = 0; k < procs; k++)); do
    mapfile -t pa < <(peer_args "$sd" "$k" "$procs")
    [ "$k" -eq 0 ] && pa+=("${first[@]}")
    local run=("$DP" "${topo_args[@]}" --veth "$veth" --name "rocelab-$(proc_name "$name" "$k")"
               "${pa[@]}" "${extra[@]}")
    if [ "$timeout" != 0 ]; then run=(timeout --signal=TERM "$timeout" "${run[@]}"); fi
    "${run[@]}" > "$sd/$(proc_file "$k" log)" 2>&1 &
    echo $! > "$sd/$(proc_file "$k" pid)"
    disown $!
    # the next process is the client of this one's memif servers: wait for their sockets
    for _ in $(seq 100); do
      [ "$k" -eq $((procs - 1)) ] || [ -S "$sd/memif-$k-$((k + 1)).sock" ] && break
      sleep 0.1
    done
  done
  # up when every banner is printed (EAL init, and the peers' links, take a fraction of a second)
  for ((k = 0; k < procs; k++)); do
    local log; log=$sd/$(proc_file "$k" log)
    for _ in $(seq 300); do
      grep -q "^rocelab-dp: .*telemetry" "$log" 2>/dev/null && break
      if ! kill -0 "$(cat "$sd/$(proc_file "$k" pid)")" 2>/dev/null; then
        echo "fabric.sh: rocelab-dp (process $k) exited during start:" >&2; tail -20 "$log" >&2
        cmd_down "$name" >/dev/null 2>&1 || true
        exit 1
      fi
      sleep 0.1
    done
    grep -q "^rocelab-dp: .*telemetry" "$log" || { echo "fabric.sh: rocelab-dp (process $k) did not start" >&2; cmd_down "$name"; exit 1; }
  done
  echo "fabric $name up: $(grep -c . "$sd/hosts") hosts, $procs process(es); log $sd/dp.log"
}

# Process K of a fabric: its telemetry name (NAME, NAME-pK) and its state file (dp.EXT, dp-K.EXT).
proc_name() { if [ "$2" -eq 0 ]; then echo "$1"; else echo "$1-p$2"; fi; }
proc_file() { if [ "$1" -eq 0 ]; then echo "dp.$2"; else echo "dp-$1.$2"; fi; }

# rocelab-dp's --process and --peer options for process K of N: a memif between each two,
# the lower one the server, socket memif-LOW-HIGH.sock in the state directory. Buffers hold
# a whole 9000-MTU frame (net_memif 22.11 splits larger frames into pieces its receiver
# takes for frames of their own); 4096 of them each way (rsize=12, 84 MB of shared memory):
# on a loaded machine the processes take turns on the cores, and the sender runs on through
# the receiver's turn only as far as the ring reaches (scripts/bench-twoproc.sh: 1024 slots
# carried a third of what 4096 did).
peer_args() { # STATE_DIR K N
  local sd=$1 k=$2 n=$3 j
  [ "$n" -gt 1 ] || return 0
  printf '%s\n' --process "$k/$n"
  for ((j = 0; j < n; j++)); do
    [ "$j" -eq "$k" ] && continue
    local lo=$((j < k ? j : k)) hi=$((j < k ? k : j)) role=client
    [ "$k" -eq "$lo" ] && role=server
    printf '%s\n' --peer "net_memif$j,role=$role,socket=$sd/memif-$lo-$hi.sock,socket-abstract=no,bsize=10240,rsize=12"
  done
}

cmd_down() {
  local name=$1 sd; sd=$(state_dir "$name")
  [ -d "$sd" ] || die "no fabric $name"
  local f
  for f in "$sd"/dp.pid "$sd"/dp-*.pid; do # every process first, then wait for each
    [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null || true
  done
  for f in "$sd"/dp.pid "$sd"/dp-*.pid; do
    [ -f "$f" ] || continue
    local p; p=$(cat "$f")
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  for f in "$sd"/host-*.pid; do
    [ -f "$f" ] || continue
    kill -KILL "$(cat "$f")" 2>/dev/null || true
  done
  # the veths die with their namespaces; remove any that are left
  if [ -f "$sd/veths" ]; then
    while read -r v; do ip link del "$v" 2>/dev/null || true; done < "$sd/veths"
  fi
  [ -f "$sd/dp.log" ] && cat "$sd/dp.log"
  for f in "$sd"/dp-*.log; do
    [ -f "$f" ] && { f=${f##*/dp-}; echo "== process ${f%.log}"; cat "$sd/dp-$f"; }
  done
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

[ $# -ge 1 ] || { sed -n '2,23p' "$0"; exit 2; }
case $1 in
  up) shift; [ $# -ge 1 ] || die "up NAME ..."; cmd_up "$@" ;;
  down) [ $# -eq 2 ] || die "down NAME"; cmd_down "$2" ;;
  exec) [ $# -ge 4 ] || die "exec NAME HOST COMMAND..."; shift; cmd_exec "$@" ;;
  pid) [ $# -eq 3 ] || die "pid NAME HOST"; host_pid "$2" "$3" ;;
  tel) [ $# -eq 3 ] || die "tel NAME QUERY"; cmd_tel "$2" "$3" ;;
  tel-all) [ $# -eq 3 ] || die "tel-all NAME QUERY"
           cmd_tel "$2" "$3"
           for f in "$(state_dir "$2")"/dp-*.pid; do
             [ -f "$f" ] || continue; f=${f##*/dp-}; cmd_tel "$2-p${f%.pid}" "$3"
           done ;;
  demo) [ "$(id -u)" -eq 0 ] || die "demo needs root (network namespaces)"
        exec unshare --net --mount -- bash "$0" _demo ;;
  _demo) ip link set lo up; demo_inner ;;
  -h|--help) sed -n '2,23p' "$0" ;;
  *) die "unknown command $1 (see --help)" ;;
esac
