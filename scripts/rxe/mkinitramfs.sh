#!/usr/bin/env bash
# Build (or reuse) the soft-RoCE guest: an uncompressed kernel and an initramfs made
# from this machine's Debian packages, nothing downloaded.
#
#   mkinitramfs.sh [--kver KVER] [--cache DIR] [--force] [--labserver]
#
# Prints two lines on stdout: `kernel PATH` and `initrd PATH`. The result is cached
# under DIR (default $ROCELAB_RXE_CACHE or /var/tmp/rocelab-rxe) by a key made of the
# kernel version, the package versions and this folder's guest scripts, so a rebuild
# happens only when one of them changes. Building takes a few seconds.
#
# Content: linux-image-amd64's modules virtio_pci virtio_net crc32_generic rdma_rxe ib_uverbs
# rdma_ucm with their dependencies (modprobe --show-depends, depmod -b),
# busybox-static, rdma-core/ibverbs-utils/perftest/iproute2 binaries with their ldd
# libraries, the rxe verbs provider and its driver file, libgcc_s.so.1, and the
# guest's /init (guest-init.sh) and test runner (rxe-tests.sh).
#
# --labserver builds the lab-server guest instead (labserver.sh): only busybox, the
# virtio/9p modules and labserver-init.sh as /init; everything else (rdma_rxe, the
# tools, rocelab-dp) comes from this machine's root, shared read-only over 9p.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "mkinitramfs.sh: $*" >&2; exit 2; }

kver="" cache=${ROCELAB_RXE_CACHE:-/var/tmp/rocelab-rxe} force=0 labserver=0
while [ $# -gt 0 ]; do
  case $1 in
    --kver) kver=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --force) force=1; shift ;;
    --labserver) labserver=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) die "unknown argument $1; see --help" ;;
  esac
done

MODULES="virtio_pci virtio_net crc32_generic rdma_rxe ib_uverbs rdma_ucm"  # rxe needs the crc32 shash
BINARIES="ibv_rc_pingpong ibv_devices ibv_devinfo ib_write_bw ib_read_bw ib_send_bw
          ib_write_lat ib_read_lat ib_send_lat rdma"
PACKAGES="busybox-static rdma-core ibverbs-utils ibverbs-providers perftest iproute2 libc6"
MULTIARCH=x86_64-linux-gnu
if [ "$labserver" = 1 ]; then
  MODULES="virtio_pci 9pnet_virtio 9p" BINARIES="" PACKAGES="busybox-static"
fi

if [ -z "$kver" ]; then # the newest installed kernel that has rxe and a vmlinuz
  for d in $(ls -d /lib/modules/*/ 2>/dev/null | sort -V -r); do
    k=$(basename "$d")
    if [ -f "/boot/vmlinuz-$k" ] && [ -n "$(find "$d" -name 'rdma_rxe.ko*' -print -quit)" ]; then
      kver=$k; break
    fi
  done
  [ -n "$kver" ] || die "no kernel with rdma_rxe and /boot/vmlinuz-* (install linux-image-amd64)"
fi
[ -f "/boot/vmlinuz-$kver" ] || die "no /boot/vmlinuz-$kver"
command -v busybox >/dev/null || die "busybox not found (install busybox-static)"
for b in $BINARIES; do command -v "$b" >/dev/null || die "$b not found (install rdma-core ibverbs-utils perftest iproute2)"; done
provider=/usr/lib/$MULTIARCH/libibverbs/librxe-rdmav34.so
[ -f "$provider" ] || provider=$(ls /usr/lib/$MULTIARCH/libibverbs/librxe-rdmav*.so 2>/dev/null | head -1)
if [ "$labserver" = 0 ]; then
  [ -f "$provider" ] || die "rxe verbs provider not found (install ibverbs-providers)"
  [ -f /etc/libibverbs.d/rxe.driver ] || die "/etc/libibverbs.d/rxe.driver not found (install ibverbs-providers)"
fi

key=$( {
  echo "$kver labserver=$labserver"
  dpkg-query -W -f '${Package} ${Version}\n' $PACKAGES "linux-image-$kver" 2>/dev/null || true
  cat "$0" "$here/guest-init.sh" "$here/rxe-tests.sh" "$here/labserver-init.sh"
} | sha256sum | cut -c1-12)
out="$cache/$kver-$key"; [ "$labserver" = 1 ] && out="$cache/labserver-$kver-$key"
if [ "$force" = 0 ] && [ -f "$out/initramfs.cpio.gz" ] && [ -f "$out/kernel" ]; then
  echo "kernel $out/kernel"; echo "initrd $out/initramfs.cpio.gz"; exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,lib64,usr/bin,usr/sbin}
mkdir -p "$root/lib/$MULTIARCH" "$root/usr/lib/$MULTIARCH/libibverbs" "$root/etc/libibverbs.d"

# the kernel: extract the ELF vmlinux from the xz-compressed bzImage (qemu boots it
# through its PVH note, which saves the decompression under TCG); fall back to bzImage
vz=/boot/vmlinuz-$kver
off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vz" 2>/dev/null | head -1 | cut -d: -f1 || true)
if [ -n "$off" ]; then
  tail -c +"$((off + 1))" "$vz" | xz -dc > "$tmp/kernel" 2>/dev/null || true
fi
if [ ! -s "$tmp/kernel" ] || [ "$(head -c 4 "$tmp/kernel" | od -An -tx1 | tr -d ' ')" != 7f454c46 ]; then
  cp "$vz" "$tmp/kernel"
fi

# modules, in load order (each module's --show-depends list, first occurrence wins)
: > "$root/etc/rocelab-modules"
for m in $MODULES; do
  modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
  mkdir -p "$root$(dirname "$ko")"
  cp "$ko" "$root$ko"
  echo "$ko" >> "$root/etc/rocelab-modules"
done
[ -s "$root/etc/rocelab-modules" ] || die "modprobe found none of: $MODULES"
for f in modules.order modules.builtin modules.builtin.modinfo; do
  [ -f "/lib/modules/$kver/$f" ] && cp "/lib/modules/$kver/$f" "$root/lib/modules/$kver/"
done
depmod -b "$root" "$kver"

# busybox and its applets
cp "$(command -v busybox)" "$root/bin/busybox"
for a in $(busybox --list); do
  case $a in busybox) continue ;; esac
  [ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
done

# RDMA binaries (they replace busybox applets of the same name) and their libraries
copy_lib() { # PATH: copy a library keeping its path (and the file a symlink names)
  local p=$1 real
  [ -e "$root$p" ] && return 0
  mkdir -p "$root$(dirname "$p")"
  real=$(readlink -f "$p")
  cp "$real" "$root$p"
}
libs_of() { ldd "$1" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }'; }
for b in $BINARIES; do
  p=$(command -v "$b")
  rm -f "$root/bin/$b"
  cp "$p" "$root/bin/$b"
  for l in $(libs_of "$p"); do copy_lib "$l"; done
done
if [ "$labserver" = 0 ]; then
  cp "$provider" "$root/usr/lib/$MULTIARCH/libibverbs/"
  for l in $(libs_of "$provider"); do copy_lib "$l"; done
  cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
fi
gcc_s=$(ls /lib/$MULTIARCH/libgcc_s.so.1 /usr/lib/$MULTIARCH/libgcc_s.so.1 2>/dev/null | head -1)
[ -n "$gcc_s" ] && copy_lib "$gcc_s"
copy_lib /lib64/ld-linux-x86-64.so.2
printf '/lib/%s\n/usr/lib/%s\n' "$MULTIARCH" "$MULTIARCH" > "$root/etc/ld.so.conf"
echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
echo 'root:x:0:' > "$root/etc/group"
printf '127.0.0.1 localhost\n' > "$root/etc/hosts"

if [ "$labserver" = 1 ]; then
  cp "$here/labserver-init.sh" "$root/init"
else
  cp "$here/guest-init.sh" "$root/init"
  cp "$here/rxe-tests.sh" "$root/bin/rxe-tests.sh"
  chmod 755 "$root/bin/rxe-tests.sh"
fi
chmod 755 "$root/init"
mknod -m 600 "$root/dev/console" c 5 1
mknod -m 666 "$root/dev/null" c 1 3

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$tmp/initramfs.cpio.gz"
mkdir -p "$out.new"
mv "$tmp/kernel" "$tmp/initramfs.cpio.gz" "$out.new/"
rm -rf "$out"; mv "$out.new" "$out"
echo "mkinitramfs.sh: built $out ($(du -h "$out/initramfs.cpio.gz" | cut -f1) initramfs, kernel $kver)" >&2
echo "kernel $out/kernel"; echo "initrd $out/initramfs.cpio.gz"
