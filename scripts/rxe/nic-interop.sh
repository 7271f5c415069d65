#!/usr/bin/env bash
# rocelab-nic (the emulated NIC, in a network namespace on a veth host) against the real
# ibv_rc_pingpong of Linux soft-RoCE (rdma_rxe) in a qemu VM, through rocelab-dp.
#
#   nic-interop.sh [options]
#
#   --roles LIST      rocelab-nic's roles, in order: client (the VM serves), server (the VM
#                     connects); default client,server. One VM boot per role.
#   --size N          message size (default 8192: two packets at path MTU 4096)
#   --iters N         ping-pong iterations (default 50)
#   --logs DIR        keep everything here: topology, rocelab-dp log, serial logs
#                     (h4-ROLE.serial), rocelab-nic output (nic-ROLE.out), captures of the
#                     link h0-leaf0 (cap-ROLE.pcap), rocelab-dp logs (dp-ROLE.log), summary.tsv
#   --timeout S       bound on the whole run (default 400)
#   --nic PATH        rocelab-nic (default build/nic_emul/rocelab-nic)
#   --kernel F --initrd F   boot these instead of mkinitramfs.sh's
#
# Topology: two leaves x two spines; h0 (leaf0, attach veth, 10.0.0.1) is a namespace
# where rocelab-nic runs on eth0; h4 (leaf1, attach vhost, 10.0.1.1) is the VM. The peer
# is off-subnet, so rocelab-nic ARPs for the gateway (the leaf's proxy ARP).
# The guest is scripts/rxe's (guest-init.sh, rxe-tests.sh, unchanged): as server it
# starts ibv_rc_pingpong on TCP port 18516 and answers `ready 1` on port 7001; as client
# it waits for `ready 1` on our port 7001, which this script serves once rocelab-nic
# listens.
# Everything runs in a private network, PID and mount namespace; every process is
# under `timeout` and stopped by PID.
# summary.tsv: ROLE NIC_RC VM_TOOL_RC NIC_RESULT
# Exit status: 0 all roles passed, 1 a role failed, 2 bad usage, 3 setup failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ME=nic-interop.sh
DP=${ROCELAB_DP:-$top/build/dataplane/rocelab-dp}
NIC=$top/build/nic_emul/rocelab-nic
QEMU=${QEMU:-qemu-system-x86_64}
roles=client,server size=8192 iters=50 logs="" timeout=400 kernel="" initrd=""
die() { echo "$ME: error: $1" >&2; exit "${2:-2}"; }
say() { echo "$ME: $*"; }

args=("$@")
while [ $# -gt 0 ]; do
  case $1 in
    --roles) roles=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --nic) NIC=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;;
    --initrd) initrd=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
for r in ${roles//,/ }; do case $r in client|server) ;; *) die "--roles: client and/or server" ;; esac; done
[[ $size =~ ^[0-9]+$ ]] || die "--size: a number"
[[ $iters =~ ^[0-9]+$ ]] && [ "$iters" -ge 1 ] || die "--iters: a positive number"
[[ $timeout =~ ^[0-9]+$ ]] && [ "$timeout" -ge 60 ] || die "--timeout: seconds, at least 60"
[ "$(id -u)" = 0 ] || die "needs root (namespaces, DPDK)"
NIC=$(realpath -m "$NIC"); DP=$(realpath -m "$DP")
[ -x "$NIC" ] || die "rocelab-nic not built at $NIC" 3
[ -x "$DP" ] || die "rocelab-dp not built at $DP" 3
[ -n "$logs" ] && { mkdir -p "$logs" || die "cannot create $logs"; logs=$(realpath "$logs"); }

# ---------------------------------------------------------------- outer: build, isolate
if [ -z "${RL_NICX_INNER:-}" ]; then
  command -v "$QEMU" >/dev/null || die "$QEMU not found (install qemu-system-x86)" 3
  if [ -z "$kernel" ] || [ -z "$initrd" ]; then
    built=$("$here/mkinitramfs.sh") || die "building the initramfs failed" 3
    [ -n "$kernel" ] || kernel=$(awk '$1 == "kernel" { print $2 }' <<<"$built")
    [ -n "$initrd" ] || initrd=$(awk '$1 == "initrd" { print $2 }' <<<"$built")
  fi
  export RL_NICX_INNER=1 RL_KERNEL=$kernel RL_INITRD=$initrd ROCELAB_DP=$DP
  exec timeout --signal=TERM --kill-after=10 "$((timeout + 30))" \
    unshare --net --pid --mount --fork --mount-proc --kill-child=SIGTERM -- \
    bash "$0" "${args[@]}"
fi

# ---------------------------------------------------------------- inner: PID 1 of the namespaces
kernel=$RL_KERNEL initrd=$RL_INITRD
[ -r "$kernel" ] && [ -r "$initrd" ] || die "cannot read kernel/initrd '$kernel' '$initrd'" 3
ip link set lo up
work=$(mktemp -d /tmp/rocelab-nicx.XXXXXX)
[ -n "$logs" ] || logs=$work
name="nicx$$-$(basename "$work" | cut -d. -f2)"
dp_pid="" vm_pid="" ns_pid="" bg_pids=()
started=$(date +%s)
left() { echo $(( timeout - ($(date +%s) - started) )); }

stop_pid() { # PID [tries of 0.1 s before KILL]
  local p=$1 n=${2:-50}
  [ -n "$p" ] || return 0
  kill -TERM "$p" 2>/dev/null
  for _ in $(seq "$n"); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null
}
cleanup() {
  local p
  trap - EXIT INT TERM
  for p in "${bg_pids[@]}"; do stop_pid "$p" 10; done
  stop_pid "$vm_pid" 30
  stop_pid "$dp_pid" 100
  stop_pid "$ns_pid" 1
  rm -rf /var/run/dpdk/rocelab-"$name"-* /run/dpdk/rocelab-"$name"-* 2>/dev/null
  rm -rf "$work"   # with --logs only the vhost socket lives here
}
trap cleanup EXIT
trap 'say "interrupted"; exit 3' INT TERM

topo=$logs/topology.yaml
cat > "$topo" <<EOF
# generated by scripts/rxe/nic-interop.sh: h0 = rocelab-nic in a namespace (veth),
# h4 = a soft-RoCE VM (vhost-user)
name: nicx
switches:
  - {name: leaf0, role: rtsw}
  - {name: leaf1, role: rtsw}
  - {name: spine0, role: ctsw}
  - {name: spine1, role: ctsw}
hosts:
  - {name: h0, leaf: leaf0, attach: veth, mtu: 9000, ifname: nxh0}
  - {name: h4, leaf: leaf1, attach: vhost, mtu: 9000, socket: $work/h4.sock}
links:
  - [leaf0, spine0]
  - [leaf0, spine1]
  - [leaf1, spine0]
  - [leaf1, spine1]
EOF
hosts=$("$DP" --list-hosts --topology "$topo" 2>&1) || { echo "$hosts" >&2; exit 3; }
read -r _ _ _ n_cidr n_gw n_mac _ <<<"$(awk '$1 == "h0"' <<<"$hosts")"
read -r _ _ _ v_cidr v_gw v_mac _ <<<"$(awk '$1 == "h4"' <<<"$hosts")"
n_ip=${n_cidr%/*} v_ip=${v_cidr%/*}
say "rocelab-nic on h0 $n_cidr ($n_mac) <-> soft-RoCE VM h4 $v_cidr ($v_mac) through rocelab-dp"

# the namespace of h0 and its veth
unshare --net sleep "$((timeout + 30))" & ns_pid=$!
for _ in $(seq 50); do
  [ "$(readlink /proc/$ns_pid/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.02
done
ip link add nxh0 mtu 9500 type veth peer name eth0 netns "$ns_pid" || exit 3
ip link set nxh0 up
ethtool -K nxh0 tx off tso off gso off gro off rx off >/dev/null 2>&1 || true
nsenter -t "$ns_pid" -n sh -c "
  ip link set lo up; ip link set eth0 address $n_mac mtu 9000
  ethtool -K eth0 tx off tso off gso off gro off rx off >/dev/null 2>&1 || true
  ip addr add $n_cidr dev eth0; ip link set eth0 up; ip route add default via $n_gw" || exit 3
inns() { nsenter -t "$ns_pid" -n "$@"; }

start_dp() { # ROLE: one rocelab-dp per VM boot (its own name, log and capture)
  local log=$logs/dp-$1.log try
  for try in 1 2; do
    rm -f "$work/h4.sock"
    timeout --signal=TERM --kill-after=5 "$(left)" nice -n -10 "$DP" --topology "$topo" \
      --name "rocelab-$name-$1-$try" --veth af_packet --capture "h0-leaf0=$logs/cap-$1.pcap" \
      > "$log" 2>&1 &
    dp_pid=$!
    for _ in $(seq 150); do
      grep -q '^rocelab-dp: .*telemetry' "$log" 2>/dev/null && break
      kill -0 "$dp_pid" 2>/dev/null || break
      sleep 0.1
    done
    if grep -q '^rocelab-dp: .*telemetry' "$log" 2>/dev/null; then
      for _ in $(seq 50); do [ -S "$work/h4.sock" ] && return 0; sleep 0.1; done
    fi
    echo "$ME: warning: rocelab-dp did not start (try $try):" >&2; tail -20 "$log" >&2
    stop_pid "$dp_pid" 30; dp_pid=""
  done
  echo "$ME: error: rocelab-dp did not start" >&2; return 1
}

vm_start() { # ROLE BUDGET_S SERIAL
  local role=$1 wd=$2
  local append="console=ttyS0 quiet loglevel=3 panic=-1 rocelab.role=$role rocelab.ip=$v_cidr"
  append+=" rocelab.gw=$v_gw rocelab.peer=$n_ip rocelab.tests=pingpong:$size:1:$iters"
  append+=" rocelab.mtu=9000 rocelab.wd=$wd rocelab.sync_timeout=$((wd / 2)) rocelab.tool_timeout=$((wd / 2))"
  : > "$3"
  timeout --signal=TERM --kill-after=5 "$((wd + 20))" "$QEMU" -machine pc,accel=tcg,memory-backend=mem \
    -object memory-backend-memfd,id=mem,size=512M,share=on -m 512M -smp 1 \
    -nodefaults -display none -no-reboot -monitor none -serial "file:$3" \
    -kernel "$kernel" -initrd "$initrd" -append "$append" \
    -chardev "socket,id=chr0,path=$work/h4.sock" -netdev vhost-user,id=net0,chardev=chr0,queues=1 \
    -device "virtio-net-pci,netdev=net0,mac=$v_mac,vectors=0" > "${3%.serial}.qemu" 2>&1 &
  vm_pid=$!
}

nic_cmd=("$NIC" pingpong -I eth0 -p 18516 -s "$size" -n "$iters" -m 4096 --check)
: > "$logs/summary.tsv"
status=0
for role in ${roles//,/ }; do
  serial=$logs/h4-$role.serial out=$logs/nic-$role.out cap=$logs/cap-$role.pcap
  budget=$(( $(left) - 20 )); [ "$budget" -gt 200 ] && budget=200
  [ "$budget" -ge 40 ] || { say "no time left for role $role"; status=1; break; }
  start_dp "$role" || exit 3
  nic_rc=""
  if [ "$role" = client ]; then
    vm_start server "$budget" "$serial"
    say "rocelab-nic client -> ibv_rc_pingpong server in the VM (booting, TCG)"
    t0=$(date +%s) ready=0
    while [ $(( $(date +%s) - t0 )) -lt $((budget - 10)) ] && kill -0 "$vm_pid" 2>/dev/null; do
      r=$(inns timeout 5 bash -c "exec 3<>/dev/tcp/$v_ip/7001 && read -r -t 4 l <&3 && echo \"\$l\"" 2>/dev/null)
      [ "$r" = "ready 1" ] && { ready=1; break; }
      sleep 1
    done
    if [ $ready = 1 ]; then
      inns timeout "$((budget / 2))" "${nic_cmd[@]}" --timeout "$((budget / 2 - 5))" "$v_ip" > "$out" 2>&1
      nic_rc=$?
    else
      echo "the VM's ibv_rc_pingpong server never got ready" > "$out"; nic_rc=97
    fi
  else
    vm_start client "$budget" "$serial"
    say "ibv_rc_pingpong client in the VM -> rocelab-nic server (booting, TCG)"
    inns timeout "$((budget - 10))" "${nic_cmd[@]}" --timeout "$((budget - 15))" > "$out" 2>&1 &
    nic_pid=$!; bg_pids+=("$nic_pid")
    for _ in $(seq 100); do grep -q 'waiting for' "$out" 2>/dev/null && break; sleep 0.1; done
    # the guest's client waits for `ready 1` on our port 7001 (rxe-tests.sh's protocol)
    (echo "ready 1" | inns timeout "$((budget - 10))" busybox nc -l -p 7001 > /dev/null 2>&1) &
    nc_pid=$!; bg_pids+=("$nc_pid")
    wait "$nic_pid"; nic_rc=$?
    stop_pid "$nc_pid" 5
  fi
  # the guest powers off after its tool and the statistics
  for _ in $(seq $((budget * 10))); do kill -0 "$vm_pid" 2>/dev/null || break; sleep 0.1; done
  stop_pid "$vm_pid" 30; vm_pid=""
  stop_pid "$dp_pid" 100; dp_pid=""
  vm_rc=$(sed -n 's/^@@RL END k=1 test=pingpong rc=\([0-9]*\).*/\1/p' "$serial" | head -1)
  res=$(grep -E 'iters in .* usec/iter' "$out" | head -1)
  printf '%s\t%s\t%s\t%s\n' "$role" "$nic_rc" "${vm_rc:-none}" "${res:--}" >> "$logs/summary.tsv"
  say "role $role: rocelab-nic rc=$nic_rc, VM ibv_rc_pingpong rc=${vm_rc:-none}; ${res:-no result}"
  if [ "$nic_rc" != 0 ] || [ "${vm_rc:-x}" != 0 ]; then
    status=1
    echo "---- rocelab-nic ($role)"; tail -15 "$out"
    echo "---- tail of the VM's serial log"; tail -25 "$serial"
  fi
done
exit $status
