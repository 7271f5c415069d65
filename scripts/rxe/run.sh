#!/usr/bin/env bash
# Real Linux soft-RoCE (rdma_rxe) endpoints talking through rocelab-dp, with
# rdma-core's and perftest's own tools.
#
#   run.sh [options]
#
#   --tests LIST        comma list NAME[:SIZE[:QPS[:ITERS]]]; NAME is pingpong (ibv_rc_pingpong),
#                       pingpong_ev (ibv_rc_pingpong -e: sleeps on completion events),
#                       write_bw, read_bw, send_bw, write_lat, read_lat, send_lat
#                       (default: pingpong,write_bw:65536:4,read_bw,send_bw)
#   --iters N           default iteration count of every test (default: 200 pingpong/lat, 100 bw)
#   --topology FILE     topology with (at least) two hosts of `attach: vhost`; default: the
#                       default Clos (2 leaves x 2 spines x 4 hosts) with h0 and h4 as vhost
#                       hosts (MTU 9000) and the other six emulated (idle)
#   --server H --client H   the two endpoints (default: the first two vhost hosts)
#   --mode auto|vm|ns|host
#                       vm: two qemu VMs under TCG (rxe in each guest)
#                       ns: kernel rxe in one network namespace per endpoint; needs a
#                           kernel whose rxe opens its UDP socket per namespace
#                       host: the lab-server mode: every rxe device in this machine's
#                           initial namespace, each on its own veth into rocelab-dp, with
#                           per-endpoint policy routing (kernels whose rxe is initial-
#                           namespace only, such as Debian 12's 6.1); see host_up below
#                       auto: with rdma_rxe (modprobe -n), ns when a probe shows
#                           per-namespace rxe sockets, else host; without it, vm
#   --net auto|vhost|tap    vm mode: how the VMs attach to rocelab-dp (auto: vhost-user,
#                       then TAP + af_packet if vhost-user fails)
#   --fabric dp|bridge  dp: rocelab-dp (default); bridge: a plain Linux bridge (benchmark
#                       baseline, no rocelab-dp; vm mode: TAPs; host mode: the veths)
#   --detect            print the mode auto would pick (vm, ns or host) and exit
#   --capture LINK=FILE pcap of a fabric link (rocelab-dp --capture; repeatable)
#   --mtu N             endpoint MTU (default 9000: rxe path MTU 4096)
#   --timeout S         bound on the whole run (default 600); the guest watchdog fires
#                       20 s before it
#   --logs DIR          keep serial logs, rocelab-dp log, topology and summary.tsv in DIR
#   --kernel F --initrd F   boot these instead of mkinitramfs.sh's
#   --dp-args "ARGS"    extra rocelab-dp arguments
#   --dp-nice N         run rocelab-dp at nice N (default -10; 0: as the VMs)
#   --dp-idle-nap TIME  rocelab-dp --idle-nap (default 200us; rocelab-dp's own default is
#                       20us): how long the fabric naps when idle. On a few shared cores
#                       the endpoints (TCG vCPUs, rxe, the tools) need the CPU a 20us
#                       poll loop takes: measured with bench.sh, 200us cut rocelab-dp's
#                       CPU time 8x and made rxe faster through it (docs/howto/rxe-and-real-nics.md)
#   -v, --verbose       print the serial logs and rocelab-dp's tables at the end
#
# Everything runs inside a private network, PID and mount namespace (unshare), so
# TAPs, bridges and namespaces vanish with it and no traffic leaves it; qemu and
# rocelab-dp are started under `timeout` and stopped by PID.
# Exit status: 0 all tests passed, 1 a test failed, 2 bad usage, 3 a VM, the fabric or
# the setup failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
DP=${ROCELAB_DP:-$top/build/dataplane/rocelab-dp}
QEMU=${QEMU:-qemu-system-x86_64}
ME="run.sh"
say() { echo "$ME: $*"; }
die() { echo "$ME: error: $*" >&2; exit "${2:-2}"; }

tests="pingpong,write_bw:65536:4,read_bw,send_bw" iters="" topo="" server="" client=""
mode=auto net=auto fabric=dp captures=() mtu=9000 timeout=600 logs="" kernel="" initrd=""
dp_args="" verbose=0 dp_nice=-10 detect=0 dp_nap=200us
args=("$@")
while [ $# -gt 0 ]; do
  case $1 in
    --tests) tests=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --topology) topo=$2; shift 2 ;;
    --server) server=$2; shift 2 ;;
    --client) client=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --detect) detect=1; mode=auto; shift ;;
    --net) net=$2; shift 2 ;;
    --fabric) fabric=$2; shift 2 ;;
    --capture) captures+=("$2"); shift 2 ;;
    --mtu) mtu=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;;
    --initrd) initrd=$2; shift 2 ;;
    --dp-args) dp_args=$2; shift 2 ;;
    --dp-nice) dp_nice=$2; shift 2 ;;
    --dp-idle-nap) dp_nap=$2; shift 2 ;;
    -v|--verbose) verbose=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
case $mode in auto|vm|ns|host) ;; *) die "--mode: auto, vm, ns or host" ;; esac
case $net in auto|vhost|tap) ;; *) die "--net: auto, vhost or tap" ;; esac
case $fabric in dp|bridge) ;; *) die "--fabric: dp or bridge" ;; esac
[[ $timeout =~ ^[0-9]+$ ]] && [ "$timeout" -ge 60 ] || die "--timeout: seconds, at least 60"
[[ $mtu =~ ^[0-9]+$ ]] || die "--mtu: a number"
[[ $dp_nap =~ ^[0-9]+(ns|us|ms)$ ]] || die "--dp-idle-nap: a time such as 200us (got '$dp_nap')"
[ "$(id -u)" = 0 ] || die "needs root (namespaces, TAPs, DPDK)"
[ -n "$topo" ] && [ ! -r "$topo" ] && die "cannot read topology $topo"
[ -n "$topo" ] && topo=$(realpath "$topo")
[ -n "$logs" ] && { mkdir -p "$logs" || die "cannot create $logs"; logs=$(realpath "$logs"); }
for i in "${!captures[@]}"; do
  c=${captures[$i]}; [[ $c == *=* ]] || die "--capture LINK=FILE"
  f=${c#*=}; captures[$i]="${c%%=*}=$(realpath -m "$f")"
done

# Does this kernel's rxe work inside a network namespace? Older kernels (Debian 12's
# 6.1 among them) open rxe's UDP port 4791 in the initial namespace only, so a device
# in another namespace sends but never receives. Probe: an rxe device on a veth in a
# fresh namespace, and a look for port 4791 (0x12B7) in that namespace's UDP table.
rxe_netns_probe() {
  modprobe rdma_rxe 2>/dev/null; modprobe veth 2>/dev/null
  timeout 30 unshare --net sh -c '
    ip link add name rlprobe0 type veth peer name rlprobe1 || exit 3
    ip link set rlprobe0 up
    rdma link add rlprobe type rxe netdev rlprobe0 2>/dev/null || exit 3
    grep -qi ":12B7 " /proc/net/udp; r=$?
    rdma link delete rlprobe 2>/dev/null
    exit $r' >/dev/null 2>&1
}

# ---------------------------------------------------------------- outer: choose, build, isolate
if [ -z "${RL_RXE_INNER:-}" ]; then
  if [ "$mode" = auto ]; then
    if ! modprobe -n rdma_rxe >/dev/null 2>&1; then
      mode=vm; why="no rdma_rxe in this kernel: qemu VMs under TCG"
    elif rxe_netns_probe; then
      mode=ns; why="rxe opens its socket per network namespace: namespace hosts"
    else
      mode=host; why="rxe listens in the initial namespace only: lab-server mode (veths, policy routing)"
    fi
    [ "$detect" = 1 ] && { echo "$mode"; say "$why" >&2; exit 0; }
    say "mode $mode ($why)"
  fi
  if [ "$fabric" = dp ] && [ ! -x "$DP" ]; then die "rocelab-dp not built at $DP (ninja -C build)" 3; fi
  if [ "$mode" = vm ]; then
    command -v "$QEMU" >/dev/null || die "$QEMU not found (install qemu-system-x86)" 3
    if [ -z "$kernel" ] || [ -z "$initrd" ]; then
      built=$("$here/mkinitramfs.sh") || die "building the initramfs failed" 3
      [ -n "$kernel" ] || kernel=$(awk '$1 == "kernel" { print $2 }' <<<"$built")
      [ -n "$initrd" ] || initrd=$(awk '$1 == "initrd" { print $2 }' <<<"$built")
    fi
  fi
  export RL_RXE_INNER=1 RL_MODE=$mode RL_KERNEL=$kernel RL_INITRD=$initrd
  # a private network, PID and mount namespace: when it ends, everything in it ends;
  # the lab-server mode needs the initial network namespace (rxe listens only there)
  netns=(--net); [ "$mode" = host ] && netns=()
  exec timeout --signal=TERM --kill-after=10 "$((timeout + 30))" \
    unshare "${netns[@]}" --pid --mount --fork --mount-proc --kill-child=SIGTERM -- \
    bash "$0" "${args[@]}"
fi

# ---------------------------------------------------------------- inner: PID 1 of the namespaces
mode=$RL_MODE kernel=$RL_KERNEL initrd=$RL_INITRD
ip link set lo up
work=$(mktemp -d /tmp/rocelab-rxe.XXXXXX)
name="rxe$$-$(basename "$work" | cut -d. -f2)"
dp_pid="" dp_t0="" vm_pids=() ns_pids=() rxe_devs=() status=0
[ -n "$logs" ] || logs=$work

cleanup() {
  local p
  trap - EXIT INT TERM
  for p in "${vm_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${vm_pids[@]}"; do
    for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null
  done
  stop_dp
  for d in "${rxe_devs[@]}"; do rdma link delete "$d" 2>/dev/null; done
  for p in "${ns_pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  declare -F host_down >/dev/null && host_down  # defined below; cleanup may run first
  rm -rf "/var/run/dpdk/rocelab-$name" "/run/dpdk/rocelab-$name" 2>/dev/null
  rm -rf "$work"
}
# rocelab-dp's CPU time and wall time so far ("CPU_S WALL_S" into $logs/dp.cpu): how
# much of the machine the fabric takes from the endpoints (under TCG the VMs' speed is
# the CPU they get). rocelab-dp is the child of the `timeout` whose PID we hold.
dp_cpu_note() {
  local p c="" hz
  for p in /proc/[0-9]*; do
    [ "$(awk '{ sub(/.*\) /, ""); print $2 }' "$p/stat" 2>/dev/null)" = "$dp_pid" ] && { c=${p#/proc/}; break; }
  done
  [ -n "$c" ] || return 0
  hz=$(getconf CLK_TCK)
  awk -v hz="$hz" -v t0="$dp_t0" -v now="$(date +%s.%N)" \
    '{ sub(/.*\) /, ""); printf "%.2f %.2f\n", ($12 + $13) / hz, now - t0 }' "/proc/$c/stat" > "$logs/dp.cpu"
}
stop_dp() {
  [ -n "$dp_pid" ] || return 0
  dp_cpu_note
  kill -TERM "$dp_pid" 2>/dev/null
  for _ in $(seq 300); do kill -0 "$dp_pid" 2>/dev/null || break; sleep 0.1; done  # tables: slow under TCG
  kill -KILL "$dp_pid" 2>/dev/null; wait "$dp_pid" 2>/dev/null
  dp_pid=""
}
trap 'cleanup' EXIT
trap 'say "interrupted"; exit 3' INT TERM

# the topology
if [ -z "$topo" ]; then
  topo=$work/topology.yaml
  attach=vhost; [ "$net" = tap ] && attach=veth
  cat > "$topo" <<EOF
# generated by scripts/rxe/run.sh: topologies/default.yaml with h0 and h4 as soft-RoCE
# endpoints; the other hosts are emulated and idle. Each leaf's ECMP hash is written
# out so a capture can be checked against rocelab-lb.
name: rxe
switches:
  - {name: leaf0, role: rtsw, profile: eecmp, algo: crc32, seed: 0x1234}
  - {name: leaf1, role: rtsw, profile: 5tuple, algo: crc32c, seed: 0xbeef}
  - {name: spine0, role: ctsw}
  - {name: spine1, role: ctsw}
hosts:
  - {name: h0, leaf: leaf0, attach: $attach, mtu: $mtu, @H0@}
  - {name: h1, leaf: leaf0, attach: emulated}
  - {name: h2, leaf: leaf0, attach: emulated}
  - {name: h3, leaf: leaf0, attach: emulated}
  - {name: h4, leaf: leaf1, attach: $attach, mtu: $mtu, @H4@}
  - {name: h5, leaf: leaf1, attach: emulated}
  - {name: h6, leaf: leaf1, attach: emulated}
  - {name: h7, leaf: leaf1, attach: emulated}
links:            # leaf ports 0-3 face the hosts, 4-5 the spines in spine order
  - [leaf0, spine0]
  - [leaf0, spine1]
  - [leaf1, spine0]
  - [leaf1, spine1]
EOF
  if [ "$attach" = vhost ]; then
    sed -i "s|@H0@|socket: $work/h0.sock|; s|@H4@|socket: $work/h4.sock|" "$topo"
  else
    sed -i "s|@H0@|ifname: rxtap0|; s|@H4@|ifname: rxtap4|" "$topo"
  fi
  [ "$mode" = ns ] || [ "$mode" = host ] && sed -i "s|attach: $attach, mtu: $mtu, [^}]*}|attach: veth, mtu: $mtu}|" "$topo"
  [ "$logs" != "$work" ] && cp "$topo" "$logs/topology.yaml"
fi
hosts=$("$DP" --list-hosts --topology "$topo" 2>&1) || { echo "$hosts" >&2; exit 2; }
pick() { # pick the endpoints: ATTACH...
  awk -v want="$1" '$2 ~ want { print $1 }' <<<"$hosts"
}
cands=$(pick '^(vhost|veth)$')
[ -n "$server" ] || server=$(sed -n 1p <<<"$cands")
[ -n "$client" ] || client=$(sed -n 2p <<<"$cands")
[ -n "$server" ] && [ -n "$client" ] && [ "$server" != "$client" ] \
  || die "need two endpoint hosts (attach vhost or veth) in $topo"
hinfo() { awk -v h="$1" '$1 == h' <<<"$hosts"; }
read -r _ s_attach s_if s_cidr s_gw s_mac s_mtu <<<"$(hinfo "$server")"
read -r _ c_attach c_if c_cidr c_gw c_mac c_mtu <<<"$(hinfo "$client")"
[ -n "$s_cidr" ] || die "no host $server in $topo"
[ -n "$c_cidr" ] || die "no host $client in $topo"
socket_of() { # the vhost socket path of host H from the topology file
  grep -E "name: *$1[,} ]" "$topo" | grep -o 'socket: *[^,}]*' | sed 's/socket: *//' | head -1
}
if [ "$fabric" = bridge ]; then # one L2 segment: both endpoints on one /16, no gateway
  s_cidr="${s_cidr%/*}/16" c_cidr="${c_cidr%/*}/16" s_gw="" c_gw=""
fi
say "fabric $fabric, mode $mode; server $server ${s_cidr} ($s_mac) <-> client $client ${c_cidr} ($c_mac); tests $tests"

start_dp() { # TOPOLOGY [extra args]
  local t=$1 c; shift
  local cmd=("$DP" --topology "$t" --name "rocelab-$name" --idle-nap "$dp_nap")
  for c in "${captures[@]}"; do cmd+=(--capture "$c"); done
  # shellcheck disable=SC2206
  [ -n "$dp_args" ] && cmd+=($dp_args)
  cmd+=("$@")
  # on 2 cores the TCG vCPU threads (rc_pingpong busy-polls its CQ) starve a plain
  # priority rocelab-dp of the CPU for milliseconds; it sleeps when idle, so a
  # higher priority costs the VMs nothing (64 B ibv_rc_pingpong: 8.9 -> 3.5 ms/iter)
  [ "$dp_nice" != 0 ] && cmd=(nice -n "$dp_nice" "${cmd[@]}")
  # (timeout arms --kill-after on any signal it forwards: leave stop_dp time to print tables)
  timeout --signal=TERM --kill-after=40 "$((timeout + 10))" "${cmd[@]}" > "$logs/dp.log" 2>&1 &
  dp_pid=$! dp_t0=$(date +%s.%N)
  for _ in $(seq 150); do
    grep -q '^rocelab-dp: .*telemetry' "$logs/dp.log" 2>/dev/null && return 0
    kill -0 "$dp_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$ME: error: rocelab-dp did not start:" >&2; tail -20 "$logs/dp.log" >&2
  return 1
}

tap_up() { # NAME
  ip tuntap add dev "$1" mode tap || return 1
  sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1" 2>/dev/null  # no RS/MLD from the host side
  ip link set "$1" mtu 9500 up
  ethtool -K "$1" tx off tso off gso off gro off rx off >/dev/null 2>&1 || true
}

vm_start() { # NAME ROLE CIDR GW PEER MAC NETKIND NETARG
  local n=$1 role=$2 cidr=$3 gw=$4 peer=$5 mac=$6 kind=$7 arg=$8 netopts
  local wd=$((timeout - 20))
  local append="console=ttyS0 quiet loglevel=3 panic=-1 rocelab.role=$role rocelab.ip=$cidr"
  [ -n "$gw" ] && append+=" rocelab.gw=$gw"
  append+=" rocelab.peer=$peer rocelab.tests=$tests rocelab.mtu=$mtu rocelab.wd=$wd"
  append+=" rocelab.sync_timeout=$((wd / 2)) rocelab.tool_timeout=$((wd / 2))"
  [ -n "$iters" ] && append+=" rocelab.iters=$iters"
  if [ "$kind" = vhost ]; then
    netopts=(-chardev "socket,id=chr0,path=$arg"
             -netdev vhost-user,id=net0,chardev=chr0,queues=1
             -device "virtio-net-pci,netdev=net0,mac=$mac,vectors=0")
  else
    netopts=(-netdev "tap,id=net0,ifname=$arg,script=no,downscript=no,vhost=off"
             -device "virtio-net-pci,netdev=net0,mac=$mac,csum=off,guest_csum=off,gso=off,host_tso4=off,host_tso6=off,host_ecn=off,host_ufo=off,guest_tso4=off,guest_tso6=off,guest_ecn=off,guest_ufo=off")
  fi
  : > "$logs/$n.serial"
  timeout --signal=TERM --kill-after=5 "$timeout" "$QEMU" -machine pc,accel=tcg,memory-backend=mem \
    -object memory-backend-memfd,id=mem,size=512M,share=on -m 512M -smp 1 \
    -nodefaults -display none -no-reboot -monitor none -serial "file:$logs/$n.serial" \
    -kernel "$kernel" -initrd "$initrd" -append "$append" "${netopts[@]}" \
    > "$logs/$n.qemu" 2>&1 &
  vm_pids+=($!)
}

# wait for the VMs; 0 when both powered off by themselves
wait_vms() {
  local p rc all=0 i=0
  vm_rc=()
  for p in "${vm_pids[@]}"; do
    wait "$p"; rc=$?
    vm_rc+=("$rc")
    [ "$rc" = 0 ] || all=1
    i=$((i + 1))
  done
  vm_pids=()
  return $all
}

run_vms() { # KIND: vhost or tap; returns 0 when both VMs ran to their end
  local kind=$1 s_arg c_arg
  vm_pids=()
  if [ "$kind" = vhost ]; then
    s_arg=$(socket_of "$server"); c_arg=$(socket_of "$client")
    [ -n "$s_arg" ] || s_arg=/tmp/rocelab-$server.sock
    [ -n "$c_arg" ] || c_arg=/tmp/rocelab-$client.sock
    start_dp "$topo" || return 3
    for _ in $(seq 50); do [ -S "$s_arg" ] && [ -S "$c_arg" ] && break; sleep 0.1; done
    [ -S "$s_arg" ] && [ -S "$c_arg" ] || { echo "$ME: error: vhost sockets $s_arg $c_arg not created by rocelab-dp" >&2; return 3; }
  else
    s_arg=rxtap0 c_arg=rxtap1
    tap_up "$s_arg" && tap_up "$c_arg" || { echo "$ME: error: cannot create TAPs" >&2; return 3; }
    if [ "$fabric" = bridge ]; then
      ip link add rxbr0 mtu 9500 type bridge && ip link set rxbr0 up || return 3
      ip link set "$s_arg" master rxbr0 && ip link set "$c_arg" master rxbr0 || return 3
    else
      # the topology's veth hosts become the TAPs
      local t2=$work/topology-tap.yaml
      sed -E "s/(name: *$server[,} ].*)attach: *vhost/\1attach: veth/; s/(name: *$client[,} ].*)attach: *vhost/\1attach: veth/" "$topo" \
        | sed -E "s/(name: *$server[,} ].*)socket: *[^,}]*/\1ifname: $s_arg/; s/(name: *$client[,} ].*)socket: *[^,}]*/\1ifname: $c_arg/" \
        | sed -E "s/(name: *$server[,} ].*)ifname: *[^,}]*/\1ifname: $s_arg/; s/(name: *$client[,} ].*)ifname: *[^,}]*/\1ifname: $c_arg/" > "$t2"
      start_dp "$t2" --veth af_packet || return 3
    fi
  fi
  vm_start "$server" server "$s_cidr" "$s_gw" "${c_cidr%/*}" "$s_mac" "$kind" "$s_arg"
  sleep 1
  vm_start "$client" client "$c_cidr" "$c_gw" "${s_cidr%/*}" "$c_mac" "$kind" "$c_arg"
  say "booted $server and $client ($kind, TCG); serial logs in $logs"
  wait_vms
  local rc=$?
  stop_dp
  return $rc
}

# ------------------------------------------------------------ namespace endpoints (kernel rxe)
run_ns() {
  local pid h ifn cidr gw mac m n
  start_dp "$topo" --veth af_packet || return 3
  for h in "$server" "$client"; do
    read -r _ _ ifn cidr gw mac m _ <<<"$(hinfo "$h")"
    unshare --net sleep "$((timeout + 30))" & pid=$!
    ns_pids+=("$pid")
    for _ in $(seq 50); do
      [ "$(readlink /proc/$pid/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.02
    done
    ip link add "$ifn" mtu 9500 type veth peer name eth0 netns "$pid" || return 3
    ip link set "$ifn" up
    ethtool -K "$ifn" tx off tso off gso off gro off rx off >/dev/null 2>&1 || true
    n="rxe_${name}_$h"; n=${n:0:30}
    nsenter -t "$pid" -n sh -c "
      ip link set lo up; ip link set eth0 address $mac mtu $m
      ethtool -K eth0 tx off tso off gso off gro off rx off >/dev/null 2>&1 || true
      ip addr add $cidr dev eth0; ip link set eth0 up; ip route add default via $gw
      rdma link add $n type rxe netdev eth0" || return 3
    rxe_devs+=("$n")
    eval "ns_$h=$pid dev_$h=$n"
  done
  # rocelab-dp opens the veths at start: restart it now that they exist
  stop_dp; start_dp "$topo" --veth af_packet || return 3
  local sp cp sd cd
  eval "sp=\$ns_$server cp=\$ns_$client sd=\$dev_$server cd=\$dev_$client"
  run_pair "$sd" "$cd" nsenter -t "$sp" -n -- nsenter -t "$cp" -n
}

# rxe-tests.sh on both endpoints, server first: SDEV CDEV [SERVER-PREFIX... -- CLIENT-PREFIX...]
# (a prefix such as `nsenter -t PID -n` runs the side in its namespace)
run_pair() {
  local sd=$1 cd=$2 spre=() cpre=(); shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do spre+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  cpre=("$@")
  "${spre[@]}" env RL_ROLE=server RL_DEV="$sd" RL_IP="${s_cidr%/*}" RL_PEER="${c_cidr%/*}" \
    RL_TESTS="$tests" RL_ITERS="$iters" sh "$here/rxe-tests.sh" > "$logs/$server.serial" 2>&1 &
  local p1=$!
  sleep 1
  "${cpre[@]}" env RL_ROLE=client RL_DEV="$cd" RL_IP="${c_cidr%/*}" RL_PEER="${s_cidr%/*}" \
    RL_TESTS="$tests" RL_ITERS="$iters" sh "$here/rxe-tests.sh" > "$logs/$client.serial" 2>&1
  wait "$p1"
  stop_dp
  return 0
}

# ------------------------------------------------- lab-server mode (kernel rxe, initial namespace)
# Every endpoint is an rxe device on its own veth in this (the initial) namespace: the
# endpoint end EP carries the host's address and MAC, the other end (the topology's
# ifname) is opened by rocelab-dp. All endpoint addresses are local here, so without
# help the kernel would deliver A -> B through its local table and never touch a wire.
# What makes each endpoint's traffic leave by its own veth and come back in by the
# other's:
#  - rule `from A to A lookup local` (pref HOST_RULE_PREF + 2i): a tool's own loopback
#    (perftest's TCP exchange connects to the peer, which is local) stays local;
#  - rule `from A iif lo lookup T_i`, T_i = the subnet and a default route via the
#    leaf's gateway on EP_i: whatever this host originates with source A leaves by EP_i.
#    rxe's route lookup (rxe_find_route4: source = the GID's address, output device =
#    the rxe's netdev) and the RDMA core's destination MAC resolution for the QP's
#    address vector (addr4_resolve, same source and device) both go this way, so the
#    QP's destination MAC is the gateway's and rxe does not take its loopback
#    short-cut (taken when that MAC is the device's own);
#  - the local table's rule moved from pref 0 to HOST_LOCAL_PREF, behind those rules;
#  - on each EP: accept_local=1 (packets from B arrive with a source that is local
#    here), rp_filter=0 (here and in `all`, which is the maximum of both), arp_ignore=1,
#    arp_announce=2, arp_filter=1 (each EP answers and asks ARP only for its own
#    address), no IPv6, no offloads.
# Received RoCE packets then reach rxe's one UDP socket with skb->dev = EP_j, and rxe
# hands them to the device on EP_j (rxe_get_dev_from_net), whose GID table holds B.
HOST_TABLE_BASE=4791000   # routing table ids T_i = HOST_TABLE_BASE + i
HOST_RULE_PREF=100        # first rule preference (two per endpoint)
HOST_LOCAL_PREF=1000      # where the local table's rule goes while the run lasts
HOST_LOCK=/run/rocelab-rxe-host.lock
HOST_BRIDGE=rl-rxe-br     # --fabric bridge: the baseline's bridge
host_links=() host_rules=() host_saved_rp="" host_moved_local=0

ep_name() { local e="${1}-ep"; echo "${e:0:15}"; }

host_up() { # HOST INDEX CIDR GW (GW empty: no default route, one L2 segment)
  local h=$1 i=$2 cidr=$3 gw=$4 ifn mac m ep a t net n
  read -r _ _ ifn _ _ mac m _ <<<"$(hinfo "$h")"
  ep=$(ep_name "$ifn") a=${cidr%/*} t=$((HOST_TABLE_BASE + i))
  ip link add name "$ifn" mtu 9500 type veth peer name "$ep" || return 3
  host_links+=("$ifn")
  for n in "$ifn" "$ep"; do
    sysctl -qw "net.ipv6.conf.$n.disable_ipv6=1" 2>/dev/null
    ethtool -K "$n" tx off tso off gso off gro off rx off >/dev/null 2>&1 || true
  done
  sysctl -qw "net.ipv4.conf.$ep.rp_filter=0" "net.ipv4.conf.$ep.accept_local=1" \
    "net.ipv4.conf.$ep.arp_ignore=1" "net.ipv4.conf.$ep.arp_announce=2" \
    "net.ipv4.conf.$ep.arp_filter=1" "net.ipv4.conf.$ifn.rp_filter=0" || return 3
  ip link set "$ep" address "$mac" mtu "$m" || return 3
  ip link set "$ifn" up && ip link set "$ep" up && ip addr add "$cidr" dev "$ep" || return 3
  net=$(ip -4 -o route show dev "$ep" proto kernel scope link | awk '{ print $1; exit }')
  ip route add "$net" dev "$ep" src "$a" table "$t" || return 3
  if [ -n "$gw" ]; then ip route add default via "$gw" dev "$ep" src "$a" table "$t" || return 3; fi
  host_rules+=("$((HOST_RULE_PREF + 2 * i))" "$((HOST_RULE_PREF + 2 * i + 1))")
  ip rule add pref "$((HOST_RULE_PREF + 2 * i))" from "$a" to "$a" lookup local || return 3
  ip rule add pref "$((HOST_RULE_PREF + 2 * i + 1))" from "$a" iif lo lookup "$t" || return 3
  n="rxe_${name}_$h"; n=${n:0:30}
  rdma link add "$n" type rxe netdev "$ep" || return 3
  rxe_devs+=("$n")
  eval "dev_$h=$n"
}

host_local_behind() { # move the local table's rule behind the endpoint rules
  ip rule show pref 0 | grep -q 'lookup local' || return 0
  # add first, then delete: at no moment is there no local rule
  ip rule add pref "$HOST_LOCAL_PREF" lookup local || return 3
  host_moved_local=1
  ip rule del pref 0 lookup local || return 3
}

host_down() { # undo host_up and host_local_behind (called by cleanup; idempotent)
  local p d i
  for d in "${rxe_devs[@]}"; do rdma link delete "$d" 2>/dev/null; done
  rxe_devs=()
  for p in "${host_rules[@]}"; do ip rule del pref "$p" 2>/dev/null; done
  host_rules=()
  for i in "${!host_links[@]}"; do
    ip route flush table "$((HOST_TABLE_BASE + i))" 2>/dev/null
    ip link del "${host_links[$i]}" 2>/dev/null
  done
  host_links=()
  if [ "$host_moved_local" = 1 ]; then
    ip rule show pref 0 | grep -q 'lookup local' || ip rule add pref 0 lookup local
    ip rule del pref "$HOST_LOCAL_PREF" lookup local 2>/dev/null
    host_moved_local=0
  fi
  if [ -n "$host_saved_rp" ]; then
    sysctl -qw "net.ipv4.conf.all.rp_filter=$host_saved_rp"; host_saved_rp=""
  fi
}

run_host() {
  local h i=0 sd cd
  # one lab-server run at a time: the rules, tables and the local rule are shared
  exec 9> "$HOST_LOCK" && flock -n 9 || { echo "$ME: error: another lab-server run holds $HOST_LOCK" >&2; return 3; }
  modprobe rdma_rxe 2>/dev/null; modprobe veth 2>/dev/null
  [ "$fabric" = bridge ] && modprobe bridge 2>/dev/null
  [ -d /sys/module/rdma_rxe ] || { echo "$ME: error: rdma_rxe is not loaded (modprobe rdma_rxe)" >&2; return 3; }
  for h in "$server" "$client"; do
    ip link show "$(hinfo "$h" | awk '{ print $3 }')" >/dev/null 2>&1 \
      && { echo "$ME: error: interface $(hinfo "$h" | awk '{ print $3 }') of $h exists already" >&2; return 3; }
  done
  host_saved_rp=$(sysctl -n net.ipv4.conf.all.rp_filter) || return 3
  sysctl -qw net.ipv4.conf.all.rp_filter=0 || return 3
  host_up "$server" 0 "$s_cidr" "$s_gw" && host_up "$client" 1 "$c_cidr" "$c_gw" \
    || { echo "$ME: error: setting up the endpoints failed" >&2; return 3; }
  host_local_behind || { echo "$ME: error: cannot move the local table's rule" >&2; return 3; }
  if [ "$fabric" = bridge ]; then # the baseline: the fabric ends of both veths on one bridge
    ip link show "$HOST_BRIDGE" >/dev/null 2>&1 && { echo "$ME: error: $HOST_BRIDGE exists already" >&2; return 3; }
    ip link add name "$HOST_BRIDGE" mtu 9500 type bridge || return 3
    host_links+=("$HOST_BRIDGE")
    sysctl -qw "net.ipv6.conf.$HOST_BRIDGE.disable_ipv6=1" 2>/dev/null
    ip link set "$HOST_BRIDGE" up || return 3
    for h in "$server" "$client"; do
      ip link set "$(hinfo "$h" | awk '{ print $3 }')" master "$HOST_BRIDGE" || return 3
    done
    eval "sd=\$dev_$server cd=\$dev_$client"
    run_pair "$sd" "$cd"
    host_counters > "$logs/host-counters.txt"
    return 0
  fi
  start_dp "$topo" --veth af_packet || return 3
  eval "sd=\$dev_$server cd=\$dev_$client"
  run_pair "$sd" "$cd"
  host_counters > "$logs/host-counters.txt"
}

# where packets went missing between rxe and rocelab-dp: each veth end's counters
# (TX drops on an endpoint end: the peer's backlog was full; RX drops on the fabric end)
# and the per-CPU backlog drops (/proc/net/softnet_stat, 2nd column, hex)
host_counters() {
  local l
  for l in "${host_links[@]}"; do
    ip -s -s link show dev "$l"
    ip -s -s link show dev "$(ep_name "$l")" 2>/dev/null
  done
  echo "softnet_stat (processed dropped squeezed ... per CPU, hex):"
  cat /proc/net/softnet_stat
}

# ------------------------------------------------------------------------------- run
started=$(date +%s) kind=$mode
if [ "$mode" = ns ]; then
  [ "$fabric" = dp ] || die "--fabric bridge is for VMs" 2
  run_ns; status=$?
elif [ "$mode" = host ]; then
  run_host; status=$?
else
  [ -r "$kernel" ] || { echo "$ME: error: cannot read kernel '$kernel'" >&2; exit 3; }
  [ -r "$initrd" ] || { echo "$ME: error: cannot read initrd '$initrd'" >&2; exit 3; }
  kind=$net; [ "$kind" = auto ] && kind=vhost; [ "$fabric" = bridge ] && kind=tap
  run_vms "$kind"; status=$?
  # fall back when a VM never got its NIC up and qemu blamed vhost-user or crashed
  if [ "$status" != 0 ] && [ "$net" = auto ] && [ "$kind" = vhost ] \
     && ! grep -q '^@@RL NET' "$logs/$server.serial" "$logs/$client.serial" 2>/dev/null \
     && { grep -qi 'vhost\|chardev\|socket' "$logs/$server.qemu" "$logs/$client.qemu" 2>/dev/null \
          || [ "${vm_rc[0]:-0}" -ge 128 ] || [ "${vm_rc[1]:-0}" -ge 128 ]; }; then
    say "vhost-user failed (qemu: $(tail -1 "$logs/$server.qemu" 2>/dev/null)); falling back to TAP + af_packet"
    mkdir -p "$logs/vhost-attempt"; mv "$logs"/*.serial "$logs"/*.qemu "$logs/dp.log" "$logs/vhost-attempt/" 2>/dev/null
    kind=tap; run_vms tap; status=$?
  fi
fi
elapsed=$(( $(date +%s) - started ))

# ------------------------------------------------------------------------------- report
# per test: one line from the client's and server's logs
parse() { # LOG -> k test size qps iters rc secs result
  awk '
    /^@@RL BEGIN/ { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                    res = ""; hdr = "" ; next }
    /bytes in .* seconds = .* Mbit\/sec/ { res = res sprintf("%.1f Mbit/s ", $(NF-1)) }
    /iters in .* seconds = .* usec\/iter/ { res = res sprintf("%.0f us/iter", $(NF-1)) }
    /^ *#bytes/ { hdr = $0; next }
    hdr != "" && /^ *[0-9]+ +[0-9]+ +[0-9.]+/ {
      if (hdr ~ /BW average/) res = sprintf("%s Gb/s avg (peak %s), %s Mpps", $4, $3, $5)
      else if (hdr ~ /t_avg/) res = sprintf("t_typ %s us, t_avg %s us", $5, $6)
      hdr = "" }
    /^@@RL END/ { for (i = 3; i <= NF; i++) { split($i, kv, "="); e[kv[1]] = kv[2] }
                  if (res == "") res = (e["error"] != "" ? e["error"] : "-")
                  printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e["k"], e["test"], v["size"], v["qps"], v["iters"], e["rc"], e["secs"], res
                  delete e }
  ' "$1"
}
fail_msgs=()
for h in "$server" "$client"; do
  log=$logs/$h.serial
  if [ ! -s "$log" ] || ! grep -q '^@@RL BOOT\|^@@RL INFO' "$log"; then
    if [ "$mode" = vm ]; then fail_msgs+=("$h did not boot (its init never reported on the serial console; tail below)")
    else fail_msgs+=("$h: its test runner never started (setup failed; see above)"); fi
  elif ! grep -q '^@@RL DONE' "$log"; then
    fail_msgs+=("$h did not finish its tests (no DONE on its serial console)")
  elif grep -q '^@@RL WATCHDOG' "$log"; then
    fail_msgs+=("$h: the in-guest watchdog fired")
  fi
  grep -h '^@@RL ERROR' "$log" 2>/dev/null | sed "s/^/$h: /" | while read -r l; do echo "$ME: $l" >&2; done
done
parse "$logs/$client.serial" > "$work/client.tsv" 2>/dev/null
parse "$logs/$server.serial" > "$work/server.tsv" 2>/dev/null
echo
echo "== soft-RoCE through $( [ "$fabric" = dp ] && echo "rocelab-dp ($kind)" || echo "a Linux bridge ($kind)" ): $server -> $client, ${elapsed}s"
printf '%-3s %-10s %7s %4s %6s %5s %5s %8s  %s\n' k test size qps iters s_rc c_rc secs "client result"
: > "$logs/summary.tsv"
npass=0 nfail=0
while IFS=$'\t' read -r k t size qps it crc secs res; do
  src=$(awk -F'\t' -v k="$k" '$1 == k { print $6 }' "$work/server.tsv")
  [ -n "$src" ] || src="-"
  printf '%-3s %-10s %7s %4s %6s %5s %5s %8s  %s\n' "$k" "$t" "$size" "$qps" "$it" "$src" "$crc" "$secs" "$res"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fabric" "$k" "$t" "$size" "$qps" "$it" "$src" "$crc" "$secs" "$res" >> "$logs/summary.tsv"
  if [ "$crc" = 0 ] && [ "$src" = 0 ]; then npass=$((npass + 1)); else nfail=$((nfail + 1)); fi
done < "$work/client.tsv"
ntests=$(echo "$tests" | tr ',' '\n' | grep -c .)
[ $((npass + nfail)) -lt "$ntests" ] && nfail=$((ntests - npass))
echo "== rxe counters (rdma statistic)"
for h in "$server" "$client"; do
  l=$(sed -n '/^@@RL STATS BEGIN/,/^@@RL STATS END/p' "$logs/$h.serial" 2>/dev/null | grep '^link ')
  echo "$h: ${l:-no counters}"
done
if [ "$fabric" = dp ] && [ -s "$logs/dp.log" ]; then
  echo "== rocelab-dp"
  grep -E '^rocelab-dp: ran' "$logs/dp.log"
  [ -s "$logs/dp.cpu" ] && read -r dcpu dwall < "$logs/dp.cpu" \
    && echo "rocelab-dp used ${dcpu} s of CPU in ${dwall} s"
  awk '/^link \(from>to\)/ || ($1 ~ />spine|^spine.*>/ && $3 > 0) { print }
       /^switch +role/ { s = 1 } s && NF == 0 { s = 0 } s { print }' "$logs/dp.log"
fi
if [ ${#fail_msgs[@]} -gt 0 ]; then
  for m in "${fail_msgs[@]}"; do
    echo "$ME: error: $m" >&2
  done
  for h in "$server" "$client"; do
    echo "---- tail of $h's serial log ($logs/$h.serial)" >&2
    tail -15 "$logs/$h.serial" >&2
    [ -s "$logs/$h.qemu" ] && { echo "---- $h qemu:" >&2; tail -5 "$logs/$h.qemu" >&2; }
  done
  status=3
elif [ "$nfail" -gt 0 ]; then
  echo "$ME: error: $nfail of $ntests tests failed" >&2
  for h in "$server" "$client"; do
    grep -n '^@@RL END' "$logs/$h.serial" | grep -v 'rc=0 ' | sed "s|^|$h: |" >&2
    echo "---- tail of $h's serial log ($logs/$h.serial)" >&2
    grep -v '^hw_counters' "$logs/$h.serial" | tail -15 >&2
  done
  status=1
else
  status=0
fi
[ "$verbose" = 1 ] && for f in "$logs/$server.serial" "$logs/$client.serial" "$logs/dp.log"; do
  echo "==== $f"; cat "$f" 2>/dev/null
done
echo "$ME: $npass passed, $nfail failed$( [ "$logs" != "$work" ] && echo "; logs in $logs")"
exit "$status"
