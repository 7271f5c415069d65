#!/usr/bin/env bash
# Soft-RoCE through rocelab-dp versus through a plain Linux bridge, in the same run.
#
#   bench.sh [--mode vm|host] [--configs LIST] [--rounds N] [--write SIZE:QPS:ITERS]
#            [--pingpong SIZE:ITERS] [--events] [--no-tap] [--logs DIR]
#
# Each round runs the same two tools between the same two endpoints and prints
# ib_write_bw's average bandwidth and ibv_rc_pingpong's round trip per configuration
# (the median over rounds), the ratios to the bridge of the same mode, and the share of
# one CPU rocelab-dp used over the run (dp CPU %: user + system time / wall time).
# Configurations:
#   vm mode (qemu VMs under TCG; the absolute figures are the emulator's):
#     dp-vhost   rocelab-dp, default Clos, VMs over vhost-user (h0 on leaf0, h4 on leaf1)
#     dp-tap     rocelab-dp, same topology, VMs on TAPs opened with af_packet
#     bridge     a Linux bridge with the two TAPs, in a private network namespace
#   host mode (the lab-server mode of run.sh: kernel rxe here, veths, policy routing;
#   run it on a lab server or in labserver.sh's VM):
#     dp-host    rocelab-dp, default Clos, the endpoints' veths opened with af_packet
#     bridge-host  the same veths on a Linux bridge
#   any dp-* name with -busy appended: the same with rocelab-dp --busy-poll (it never
#   naps when idle), or with -napN: run.sh --dp-idle-nap Nus (rocelab-dp's longest idle
#   nap; run.sh's default 200us, rocelab-dp's own 20us): where the round trip goes
#   --events: ibv_rc_pingpong -e (it sleeps on completion events instead of spinning on
#   its CQ, so the fabric gets the CPU the spinning tools would take).
#   --configs picks and orders them (default: dp-vhost,dp-tap,bridge in vm mode,
#   dp-host,bridge-host in host mode).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=1 write="65536:4:100" pp="64:300" tap=1 logs="" mode=vm configs="" ppname=pingpong
while [ $# -gt 0 ]; do
  case $1 in
    --mode) mode=$2; shift 2 ;;
    --configs) configs=$(tr ',' ' ' <<<"$2"); shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --write) write=$2; shift 2 ;;
    --pingpong) pp=$2; shift 2 ;;
    --no-tap) tap=0; shift ;;
    --events) ppname=pingpong_ev; shift ;;
    --logs) logs=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1; see --help" >&2; exit 2 ;;
  esac
done
case $mode in vm|host) ;; *) echo "bench.sh: --mode: vm or host" >&2; exit 2 ;; esac
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: --rounds: a positive number" >&2; exit 2; }
if [ -z "$configs" ]; then
  if [ "$mode" = host ]; then configs="dp-host bridge-host"
  else configs="dp-vhost"; [ "$tap" = 1 ] && configs+=" dp-tap"; configs+=" bridge"; fi
fi
variant() { # CONFIG -> the configuration without its -busy / -napN suffix
  sed -E 's/-(busy|nap[0-9]+)$//' <<<"$1"
}
for c in $configs; do
  case $(variant "$c") in
    dp-vhost|dp-tap|bridge) [ "$mode" = vm ] || { echo "bench.sh: $c is a vm-mode configuration" >&2; exit 2; } ;;
    dp-host|bridge-host) [ "$mode" = host ] || { echo "bench.sh: $c is a host-mode configuration" >&2; exit 2; } ;;
    *) echo "bench.sh: unknown configuration $c" >&2; exit 2 ;;
  esac
  case $c in bridge*-busy|bridge*-nap*) echo "bench.sh: $c: -busy and -napN are for rocelab-dp configurations" >&2; exit 2 ;; esac
done
base=bridge; [ "$mode" = host ] && base=bridge-host
work=$(mktemp -d /tmp/rocelab-rxe-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -n "$logs" ] && mkdir -p "$logs"
tests="write_bw:$write,$ppname:${pp%%:*}:1:${pp##*:}"

: > "$work/all.tsv"
for r in $(seq "$rounds"); do
  for c in $configs; do
    case $(variant "$c") in
      dp-vhost) a=(--mode vm --fabric dp --net vhost) ;;
      dp-tap) a=(--mode vm --fabric dp --net tap) ;;
      bridge) a=(--mode vm --fabric bridge) ;;
      dp-host) a=(--mode host --fabric dp) ;;
      bridge-host) a=(--mode host --fabric bridge) ;;
    esac
    case $c in
      *-busy) a+=(--dp-args --busy-poll) ;;
      *-nap[0-9]*) a+=(--dp-idle-nap "${c##*-nap}us") ;;
    esac
    d=$work/$c-$r
    echo "bench.sh: round $r/$rounds: $c ..." >&2
    if ! "$here/run.sh" "${a[@]}" --tests "$tests" --timeout 400 --logs "$d" > "$d.out" 2>&1; then
      echo "bench.sh: $c failed:" >&2; tail -30 "$d.out" >&2
      continue
    fi
    # write_bw: "X Gb/s avg ..."; pingpong: "A Mbit/s B us/iter"
    awk -F'\t' -v c="$c" '
      $3 == "write_bw" { split($10, w, " "); bw = w[1] }
      $3 ~ /^pingpong/ { n = split($10, p, " "); for (i = 1; i <= n; i++) if (p[i] == "us/iter") us = p[i-1] }
      END { printf "%s\t%s\t%s\t", c, bw, us }' "$d/summary.tsv" >> "$work/all.tsv"
    # rocelab-dp's share of the CPU over the run (none for a bridge)
    awk '{ if ($2 > 0) printf "%.0f", 100 * $1 / $2 }' "$d/dp.cpu" 2>/dev/null >> "$work/all.tsv"
    echo >> "$work/all.tsv"
    [ -n "$logs" ] && cp -r "$d" "$logs/"
  done
done

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo
echo "soft-RoCE ($( [ "$mode" = vm ] && echo 'rxe in qemu TCG VMs' || echo 'lab-server mode: kernel rxe on veths')) ib_write_bw ${write%%:*} B x $(cut -d: -f2 <<<"$write") QPs x $(cut -d: -f3 <<<"$write") iters; ibv_rc_pingpong$( [ "$ppname" = pingpong_ev ] && echo ' -e') ${pp%%:*} B x ${pp##*:} iters; $rounds round(s), median"
printf '%-14s %14s %17s %13s %13s %12s\n' config "write_bw Gb/s" "pingpong us/iter" "bw vs bridge" "rtt vs bridge" "dp CPU %"
bbw=$(awk -F'\t' -v b="$base" '$1 == b { print $2 }' "$work/all.tsv" | median)
brt=$(awk -F'\t' -v b="$base" '$1 == b { print $3 }' "$work/all.tsv" | median)
for c in $configs; do
  bw=$(awk -F'\t' -v c="$c" '$1 == c { print $2 }' "$work/all.tsv" | median)
  rt=$(awk -F'\t' -v c="$c" '$1 == c { print $3 }' "$work/all.tsv" | median)
  rbw=$(awk -v a="$bw" -v b="$bbw" 'BEGIN { if (a != "" && b > 0) printf "%.2fx", a / b; else print "-" }')
  rrt=$(awk -v a="$rt" -v b="$brt" 'BEGIN { if (a != "" && b > 0) printf "%.2fx", a / b; else print "-" }')
  cpu=$(awk -F'\t' -v c="$c" '$1 == c && $4 != "" { print $4 }' "$work/all.tsv" | median)
  printf '%-14s %14s %17s %13s %13s %12s\n' "$c" "${bw:--}" "${rt:--}" "$rbw" "$rrt" "${cpu:--}"
done
