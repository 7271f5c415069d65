#!/usr/bin/env bash
# Boot a qemu VM that plays a user's lab server and run one command in it.
#
#   labserver.sh [options] -- COMMAND [ARGS...]
#
#   --rw DIR        a writable directory shared with the guest at the same path (results,
#                   captures, logs); default: a temporary one, removed at the end
#   --ro DIR        one more directory shared read-only at its own path (a build
#                   directory outside the checkout)
#   --timeout S     bound on the whole VM (default 900); the guest powers itself off
#                   30 s before it
#   --smp N         vCPUs (default 2)        --mem MB    guest memory (default 2048)
#   --modules LIST  modules the guest loads before COMMAND (comma list; default
#                   veth,bridge,crc32_generic,rdma_rxe,ib_uverbs,rdma_ucm)
#   --kernel F --initrd F   boot these instead of mkinitramfs.sh --labserver's
#   --serial FILE   keep the guest's console log here
#
# The guest runs Debian's kernel (linux-image-amd64) under TCG with `-cpu max` (DPDK
# builds for corei7: SSE4.2, POPCNT, which the default qemu64 CPU lacks); its root is this
# machine's root shared read-only over 9p, with its own tmpfs on /tmp, /run, /var/tmp
# and /dev/shm (inode numbers of its several file systems remapped so they cannot
# collide in the guest), so COMMAND sees the installed tools and this checkout (shared at its
# own path) but changes nothing here except in --rw DIR. COMMAND runs as root with bash,
# in the guest's initial network namespace, from the top of the checkout; its output
# is printed when the VM has powered off.
# Exit status: COMMAND's; 2 bad usage; 3 the VM failed (did not boot, no result).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
QEMU=${QEMU:-qemu-system-x86_64}
ME=labserver.sh
die() { echo "$ME: error: $*" >&2; exit "${2:-2}"; }

rw="" ro="" timeout=900 smp=2 mem=2048 kernel="" initrd="" serial=""
modules="veth,bridge,crc32_generic,rdma_rxe,ib_uverbs,rdma_ucm"  # rxe cannot add a device without crc32_generic
while [ $# -gt 0 ]; do
  case $1 in
    --rw) rw=$2; shift 2 ;;
    --ro) ro=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --smp) smp=$2; shift 2 ;;
    --mem) mem=$2; shift 2 ;;
    --modules) modules=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;;
    --initrd) initrd=$2; shift 2 ;;
    --serial) serial=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[ $# -ge 1 ] || die "no COMMAND (labserver.sh [options] -- COMMAND ...)"
[[ $timeout =~ ^[0-9]+$ ]] && [ "$timeout" -ge 90 ] || die "--timeout: seconds, at least 90"
[[ $smp =~ ^[1-8]$ ]] || die "--smp: 1 to 8"
[[ $mem =~ ^[0-9]+$ ]] && [ "$mem" -ge 512 ] || die "--mem: megabytes, at least 512"
[[ $modules =~ ^[A-Za-z0-9_,-]*$ ]] || die "--modules: a comma list of module names"
[ "$(id -u)" = 0 ] || die "needs root (qemu shares / with the guest)"
command -v "$QEMU" >/dev/null || die "$QEMU not found (install qemu-system-x86)" 3
if [ -z "$kernel" ] || [ -z "$initrd" ]; then
  built=$("$here/mkinitramfs.sh" --labserver) || die "building the lab-server initramfs failed" 3
  [ -n "$kernel" ] || kernel=$(awk '$1 == "kernel" { print $2 }' <<<"$built")
  [ -n "$initrd" ] || initrd=$(awk '$1 == "initrd" { print $2 }' <<<"$built")
fi
[ -r "$kernel" ] || die "cannot read kernel '$kernel'" 3
[ -r "$initrd" ] || die "cannot read initrd '$initrd'" 3

own_rw=0
if [ -z "$rw" ]; then rw=$(mktemp -d /tmp/rocelab-labserver.XXXXXX); own_rw=1; fi
mkdir -p "$rw" || die "cannot create $rw"
rw=$(realpath "$rw")
case $rw in *[[:space:],]*) die "--rw: no spaces or commas in the path ($rw)" ;; esac
case $top in *[[:space:],]*) die "the checkout's path has spaces or commas ($top)" ;; esac
ro_opts=()
if [ -n "$ro" ]; then
  [ -d "$ro" ] || die "--ro: no directory $ro"
  ro=$(realpath "$ro")
  case $ro in *[[:space:],]*) die "--ro: no spaces or commas in the path ($ro)" ;; esac
  ro_opts=(-virtfs "local,path=$ro,mount_tag=rlro,security_model=none,readonly=on,id=rlro")
fi
qpid=""
cleanup() {
  trap - EXIT INT TERM
  if [ -n "$qpid" ]; then
    kill -TERM "$qpid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null
  fi
  rm -f "$rw/labserver.cmd" "$rw/labserver.serial"
  [ "$own_rw" = 1 ] && rm -rf "$rw"
}
trap cleanup EXIT
trap 'echo "$ME: interrupted" >&2; exit 3' INT TERM

rm -f "$rw/labserver.rc" "$rw/labserver.log"
{ echo "cd $(printf '%q' "$top") || exit 3"; printf 'exec'; printf ' %q' "$@"; echo; } > "$rw/labserver.cmd"
con=$rw/labserver.serial; [ -n "$serial" ] && con=$(realpath -m "$serial")
: > "$con"
append="console=ttyS0 quiet loglevel=3 panic=-1 rocelab.wd=$((timeout - 30)) rocelab.top=$top rocelab.rw=$rw rocelab.modules=$modules"
[ -n "$ro" ] && append+=" rocelab.ro=$ro"
started=$(date +%s)
timeout --signal=TERM --kill-after=10 "$timeout" "$QEMU" -machine pc,accel=tcg -cpu max -smp "$smp" -m "$mem" \
  -nodefaults -display none -no-reboot -monitor none -serial "file:$con" \
  -kernel "$kernel" -initrd "$initrd" -append "$append" \
  -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap,id=hostroot" \
  -virtfs "local,path=$top,mount_tag=rltop,security_model=none,readonly=on,id=rltop" \
  -virtfs "local,path=$rw,mount_tag=rlrw,security_model=none,id=rlrw" "${ro_opts[@]}" \
  > "$rw/labserver.qemu" 2>&1 &
qpid=$!
echo "$ME: booted the lab-server VM (TCG, $smp vCPU, ${mem} MB, $(basename "$kernel")); running: $*" >&2
wait "$qpid"; qrc=$?; qpid=""
echo "$ME: VM off after $(( $(date +%s) - started )) s (qemu rc $qrc)" >&2
[ -f "$rw/labserver.log" ] && cat "$rw/labserver.log"
if [ ! -f "$rw/labserver.rc" ]; then
  echo "$ME: error: the VM gave no result (qemu rc $qrc); console tail:" >&2
  grep -v '^\s*$' "$con" | tail -25 >&2
  tail -5 "$rw/labserver.qemu" >&2
  rm -f "$rw/labserver.qemu"
  exit 3
fi
rm -f "$rw/labserver.qemu"
rc=$(cat "$rw/labserver.rc")
[[ $rc =~ ^[0-9]+$ ]] || rc=3
exit "$rc"
