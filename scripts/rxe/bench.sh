#!/usr/bin/env bash
# Soft-RoCE through rocelab-dp versus through a plain Linux bridge, in the same run.
#
#   bench.sh [--rounds N] [--write SIZE:QPS:ITERS] [--pingpong SIZE:ITERS] [--no-tap]
#            [--logs DIR]
#
# Each round runs the same two tools between the same two VMs (qemu under TCG, so the
# absolute figures are the emulator's; the ratio is what matters):
#   dp-vhost  rocelab-dp, default Clos, VMs over vhost-user (h0 on leaf0, h4 on leaf1)
#   dp-tap    rocelab-dp, same topology, VMs on TAPs opened with af_packet
#   bridge    a Linux bridge with the two TAPs, in a private network namespace
# and prints ib_write_bw's average bandwidth and ibv_rc_pingpong's round trip per
# configuration (the median over rounds) and the ratios to the bridge.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=1 write="65536:4:100" pp="64:300" tap=1 logs=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --write) write=$2; shift 2 ;;
    --pingpong) pp=$2; shift 2 ;;
    --no-tap) tap=0; shift ;;
    --logs) logs=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d /tmp/rocelab-rxe-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -n "$logs" ] && mkdir -p "$logs"
tests="write_bw:$write,pingpong:${pp%%:*}:1:${pp##*:}"
configs="dp-vhost"; [ "$tap" = 1 ] && configs+=" dp-tap"; configs+=" bridge"

: > "$work/all.tsv"
for r in $(seq "$rounds"); do
  for c in $configs; do
    case $c in
      dp-vhost) a=(--fabric dp --net vhost) ;;
      dp-tap) a=(--fabric dp --net tap) ;;
      bridge) a=(--fabric bridge) ;;
    esac
    d=$work/$c-$r
    echo "bench.sh: round $r/$rounds: $c ..." >&2
    if ! "$here/run.sh" --mode vm "${a[@]}" --tests "$tests" --timeout 400 --logs "$d" > "$d.out" 2>&1; then
      echo "bench.sh: $c failed:" >&2; tail -30 "$d.out" >&2
      continue
    fi
    # write_bw: "X Gb/s avg ..."; pingpong: "A Mbit/s B us/iter"
    awk -F'\t' -v c="$c" '
      $3 == "write_bw" { split($10, w, " "); bw = w[1] }
      $3 == "pingpong" { n = split($10, p, " "); for (i = 1; i <= n; i++) if (p[i] == "us/iter") us = p[i-1] }
      END { printf "%s\t%s\t%s\n", c, bw, us }' "$d/summary.tsv" >> "$work/all.tsv"
    [ -n "$logs" ] && cp -r "$d" "$logs/"
  done
done

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo
echo "soft-RoCE (rxe in qemu TCG) ib_write_bw ${write%%:*} B x $(cut -d: -f2 <<<"$write") QPs x $(cut -d: -f3 <<<"$write") iters; ibv_rc_pingpong ${pp%%:*} B x ${pp##*:} iters; $rounds round(s), median"
printf '%-10s %16s %18s %14s %14s\n' config "write_bw Gb/s" "pingpong us/iter" "bw vs bridge" "rtt vs bridge"
bbw=$(awk -F'\t' '$1 == "bridge" { print $2 }' "$work/all.tsv" | median)
brt=$(awk -F'\t' '$1 == "bridge" { print $3 }' "$work/all.tsv" | median)
for c in $configs; do
  bw=$(awk -F'\t' -v c="$c" '$1 == c { print $2 }' "$work/all.tsv" | median)
  rt=$(awk -F'\t' -v c="$c" '$1 == c { print $3 }' "$work/all.tsv" | median)
  rbw=$(awk -v a="$bw" -v b="$bbw" 'BEGIN { if (a != "" && b > 0) printf "%.2fx", a / b; else print "-" }')
  rrt=$(awk -v a="$rt" -v b="$brt" 'BEGIN { if (a != "" && b > 0) printf "%.2fx", a / b; else print "-" }')
  printf '%-10s %16s %18s %14s %14s\n' "$c" "${bw:--}" "${rt:--}" "$rbw" "$rrt"
done
