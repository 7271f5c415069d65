#!/bin/sh
# /init of the lab-server guest (mkinitramfs.sh --labserver, booted by labserver.sh).
# The guest plays a user's lab server: Debian's kernel, and as its root this machine's
# own root, shared read-only over 9p, with fresh tmpfs on /tmp, /run, /var/tmp and
# /dev/shm. Kernel command line:
#   rocelab.wd=SECONDS     power off after this long whatever happens
#   rocelab.top=PATH       the checkout, shared read-only (tag rltop) at its own path
#   rocelab.ro=PATH        one more directory shared read-only (tag rlro) at its own path
#   rocelab.rw=PATH        a writable directory (tag rlrw) at its own path; it holds
#                          labserver.cmd (run with bash in the chroot), and receives
#                          labserver.log (its output) and labserver.rc (its exit status)
#   rocelab.modules=A,B    modules to load in the chroot (modprobe; module autoload does
#                          not reach into a chroot)
# Console markers: @@LS BOOT, @@LS RUN, @@LS EXIT rc=N, @@LS ERROR ..., @@LS WATCHDOG.
# --help and bad options off the VM (scripts/lib/cli.sh is not in the initramfs)
if [ $$ -ne 1 ] && [ -f "$(dirname "$0")/../lib/cli.sh" ]; then
  . "$(dirname "$0")/../lib/cli.sh"
  cli_plain "$0" "$@"
fi
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
M="@@LS"
R=/mnt
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

off() { sync; poweroff -f; sleep 5; echo o > /proc/sysrq-trigger; }
die() { echo "$M ERROR $*"; dmesg | tail -10 | sed "s/^/$M DIAG /"; off; }

WD=600 TOP="" RW="" RO="" MODS=""
for w in $(cat /proc/cmdline); do
  case $w in
    rocelab.wd=*) WD=${w#*=} ;;
    rocelab.top=*) TOP=${w#*=} ;;
    rocelab.rw=*) RW=${w#*=} ;;
    rocelab.ro=*) RO=${w#*=} ;;
    rocelab.modules=*) MODS=$(echo "${w#*=}" | tr ',' ' ') ;;
  esac
done
echo "$M BOOT kernel=$(uname -r) top=$TOP rw=$RW wd=${WD}s"
( sleep "$WD"; echo "$M WATCHDOG fired after ${WD}s"; off ) &

while read -r ko; do
  insmod "$ko" || echo "$M WARN insmod $ko failed"
done < /etc/rocelab-modules

p9="trans=virtio,version=9p2000.L,msize=512000"
mkdir -p $R
mount -t 9p -o "$p9,ro,cache=loose" hostroot $R || die "cannot mount the host's root (9p tag hostroot)"
mount -t proc proc $R/proc && mount -t sysfs sysfs $R/sys && mount -t devtmpfs devtmpfs $R/dev \
  || die "cannot mount /proc, /sys, /dev in the chroot"
for d in tmp run var/tmp dev/shm; do
  mkdir -p "$R/$d" 2>/dev/null
  mount -t tmpfs -o mode=1777 tmpfs "$R/$d" || die "cannot mount a tmpfs on /$d"
done
mkdir -p $R/dev/pts && mount -t devpts devpts $R/dev/pts
# the checkout and the writable directory at their own paths (they may lie under the
# host's /tmp, which the tmpfs above hides)
if [ -n "$TOP" ]; then
  mkdir -p "$R$TOP" 2>/dev/null
  mount -t 9p -o "$p9,ro" rltop "$R$TOP" || die "cannot mount the checkout $TOP (9p tag rltop)"
fi
if [ -n "$RO" ]; then
  mkdir -p "$R$RO" 2>/dev/null
  mount -t 9p -o "$p9,ro" rlro "$R$RO" || die "cannot mount $RO (9p tag rlro)"
fi
[ -n "$RW" ] || die "rocelab.rw is needed"
mkdir -p "$R$RW" 2>/dev/null
mount -t 9p -o "$p9" rlrw "$R$RW" || die "cannot mount $RW (9p tag rlrw)"
[ -r "$R$RW/labserver.cmd" ] || die "no $RW/labserver.cmd"

ip link set lo up 2>/dev/null || chroot $R ip link set lo up
for m in $MODS; do
  chroot $R /sbin/modprobe "$m" || echo "$M WARN modprobe $m failed"
done
echo "$M RUN modules: $(awk '{ printf "%s ", $1 }' /proc/modules)"
chroot $R /usr/bin/env -i HOME=/tmp TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  /bin/bash "$RW/labserver.cmd" > "$R$RW/labserver.log" 2>&1
rc=$?
echo "$rc" > "$R$RW/labserver.rc"
echo "$M EXIT rc=$rc"
sync
umount "$R$RW" 2>/dev/null
off
