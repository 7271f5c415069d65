#!/bin/sh
# /init of the rocelab soft-RoCE guest (see mkinitramfs.sh). Everything it needs comes
# on the kernel command line:
#   rocelab.role=server|client  rocelab.ip=A.B.C.D/P  rocelab.gw=A.B.C.D
#   rocelab.peer=A.B.C.D        rocelab.tests=NAME[:SIZE[:QPS[:ITERS]]],...
#   rocelab.mtu=9000            rocelab.iters=N   rocelab.wd=SECONDS (watchdog)
#   rocelab.tool_timeout=S      rocelab.sync_timeout=S
# It loads the modules, brings eth0 up, adds rxe0 on it, runs rxe-tests.sh, prints the
# results on the console (ttyS0) between @@RL markers and powers off. The watchdog
# powers off after rocelab.wd seconds whatever happens.
# --help and bad options off the VM (scripts/lib/cli.sh is not in the initramfs)
if [ $$ -ne 1 ] && [ -f "$(dirname "$0")/../lib/cli.sh" ]; then
  . "$(dirname "$0")/../lib/cli.sh"
  cli_plain "$0" "$@"
fi
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu
export HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
M="@@RL"

die() {
  echo "$M ERROR $*"
  echo "$M DIAG modules: $(lsmod 2>/dev/null | awk 'NR > 1 { printf "%s ", $1 }')"
  dmesg 2>/dev/null | tail -15 | sed "s/^/$M DIAG /"
  echo "$M DONE role=${RL_ROLE:-?} passed=0 failed=1"
  sync; poweroff -f; sleep 5; echo o > /proc/sysrq-trigger
}

RL_ROLE="" RL_IPCIDR="" RL_GW="" RL_PEER="" RL_TESTS="pingpong" RL_MTU=9000 RL_WD=600
for w in $(cat /proc/cmdline); do
  case $w in
    rocelab.role=*) RL_ROLE=${w#*=} ;;
    rocelab.ip=*) RL_IPCIDR=${w#*=} ;;
    rocelab.gw=*) RL_GW=${w#*=} ;;
    rocelab.peer=*) RL_PEER=${w#*=} ;;
    rocelab.tests=*) RL_TESTS=${w#*=} ;;
    rocelab.mtu=*) RL_MTU=${w#*=} ;;
    rocelab.iters=*) export RL_ITERS=${w#*=} ;;
    rocelab.wd=*) RL_WD=${w#*=} ;;
    rocelab.tool_timeout=*) export RL_TOOL_TIMEOUT=${w#*=} ;;
    rocelab.sync_timeout=*) export RL_SYNC_TIMEOUT=${w#*=} ;;
  esac
done
echo "$M BOOT kernel=$(uname -r) role=$RL_ROLE ip=$RL_IPCIDR gw=$RL_GW peer=$RL_PEER mtu=$RL_MTU tests=$RL_TESTS wd=${RL_WD}s"

# watchdog: power off whatever happens
( sleep "$RL_WD"; echo "$M WATCHDOG fired after ${RL_WD}s"; echo "$M DONE role=$RL_ROLE passed=0 failed=1 watchdog=1"
  sync; poweroff -f; sleep 5; echo o > /proc/sysrq-trigger ) &

[ -n "$RL_ROLE" ] && [ -n "$RL_IPCIDR" ] && [ -n "$RL_PEER" ] || die "rocelab.role, rocelab.ip and rocelab.peer are needed"

while read -r ko; do
  insmod "$ko" || echo "$M WARN insmod $ko failed"
done < /etc/rocelab-modules
for i in $(seq 100); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
[ -e /sys/class/net/eth0 ] || die "no eth0 (virtio_net did not find a NIC)"

sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
ip link set lo up
ip link set eth0 mtu "$RL_MTU" || die "cannot set MTU $RL_MTU on eth0"
ip addr add "$RL_IPCIDR" dev eth0
ip link set eth0 up
[ -n "$RL_GW" ] && ip route add default via "$RL_GW"
echo "$M NET $(ip -o addr show dev eth0 | awk '{ print $4 }' | head -1) mac=$(cat /sys/class/net/eth0/address) mtu=$(cat /sys/class/net/eth0/mtu)"

rdma link add rxe0 type rxe netdev eth0 || die "rdma link add rxe0 failed"
for i in $(seq 50); do [ -e /sys/class/infiniband/rxe0/ports/1/gids/1 ] && break; sleep 0.1; done
rdma link show 2>&1

export RL_ROLE RL_PEER RL_TESTS RL_DEV=rxe0 RL_IP=${RL_IPCIDR%/*}
/bin/rxe-tests.sh
echo "$M EXIT rc=$?"
sync
poweroff -f
sleep 5
echo o > /proc/sysrq-trigger
