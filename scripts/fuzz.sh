#!/usr/bin/env bash
# Fuzz every input rocelab reads from outside with libFuzzer under ASan+UBSan:
#   parse     packets (hashing/ parser, ICRC, hash profiles)
#   topology  topology files (the YAML loader and validator)
#   nic_rx    frames to an emulated NIC (ne_nic_rx on a connected pair)
#   pfc_mmu   PFC frames and packets into the switch buffer model (pfc/)
#   ctl       telemetry command parameters (dataplane/ctl/dp_ctl_parse)
#   peer      rocelab-nic's out-of-band address message (nic_emul/ne_peer)
#   flow      flow-engine scripts: links, flow starts, clock steps (flow/)
#   swx_spec  DPDK SWX pipeline programs (.spec: swx/swx_spec, parser and checks)
#   nc_tune   NCCL_ALGO / NCCL_PROTO lists and the tuning model (nccl/nc_tune)
#   wl_chakra Chakra execution traces into the job graph, and its check (workload/)
#   wl_astra  ASTRA-sim text workloads (workload/wl_astra)
#   wl_jobs   job files and their placement by the scheduler (workload/wl_jobs, wl_sched)
# Seeds: the real rxe frames and the topologies of the repository, and the small
# hand-made files of tests/fuzz/seeds/TARGET/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   each target for SECONDS (default 30), all by default
#   FUZZ_RUNS=N scripts/fuzz.sh 0 [TARGET...]   each target for N executions instead
#   FUZZ_SEED=S scripts/fuzz.sh ...        libFuzzer's seed (default 1): a run repeats
#                                          itself, so a finding reproduces from its line
# One target at a time (the machine may be shared). Exit 0 when no target found
# anything; crash inputs land in build-fuzz/crashes/TARGET/. Prints each target's
# execution count.
set -euo pipefail
. "$(dirname "$0")/lib/cli.sh"
cli_plain "$0" "$@"
cd "$(dirname "$0")/.."
secs=${1:-30}
shift || true
all=(parse topology nic_rx pfc_mmu ctl peer flow swx_spec nc_tune wl_chakra wl_astra wl_jobs)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
dir=build-fuzz
if [ ! -f "$dir/build.ninja" ]; then
  # fuzzer-no-link: the libraries under test carry coverage counters too, so the
  # fuzzer is guided through them, not only through the small target files
  CC=clang meson setup "$dir" -Dfuzz=true -Ddpdk=disabled -Dc_args=-fsanitize=fuzzer-no-link \
    -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
mapfile -t exes < <(printf 'tests/fuzz/fuzz_%s\n' "${targets[@]}")
ninja -C "$dir" -j2 "${exes[@]}" >/dev/null || { ninja -C "$dir" -j1 "${exes[@]}" | tail -30; echo "fuzz.sh: building the fuzz targets failed" >&2; exit 1; }

# Generated seeds: every frame of the golden capture (for parse, and as nic_rx records:
# the whole frame, and its BTH onwards on NIC 1's headers), every topology file.
seed_dir() { echo "$dir/corpus/$1"; }
for t in "${all[@]}"; do mkdir -p "$(seed_dir "$t")" "$dir/crashes/$t"; done
python3 - tests/testdata/rxe-rc-ud.pcap "$(seed_dir parse)" "$(seed_dir nic_rx)" <<'PY'
import os, struct, sys
d = open(sys.argv[1], 'rb').read()
off, i = 24, 0
while off + 16 <= len(d):
    incl = struct.unpack_from('<I', d, off + 8)[0]
    f = d[off + 16:off + 16 + incl]
    open(os.path.join(sys.argv[2], 'rxe-%03d' % i), 'wb').write(f)
    rec = bytes([0x05]) + struct.pack('>H', len(f)) + f + bytes([0x06]) + struct.pack('>H', len(f) - 42) + f[42:]
    open(os.path.join(sys.argv[3], 'rxe-%03d' % i), 'wb').write(rec)
    off += 16 + incl; i += 1
PY
cp topologies/*.yaml tests/dataplane/data/*.yaml tests/bench/*.yaml "$(seed_dir topology)/"
for t in "${all[@]}"; do
  [ -d "tests/fuzz/seeds/$t" ] && cp tests/fuzz/seeds/"$t"/* "$(seed_dir "$t")/"
done

# a leak inside libfyaml itself is not ours (tests/fuzz/lsan.supp says which)
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0"
fails=0
log=""
trap 'rm -f "$log"' EXIT   # a run cut short leaves no log behind
for t in "${targets[@]}"; do
  if [ -n "${FUZZ_RUNS:-}" ]; then limit=(-runs="$FUZZ_RUNS"); bound=$((24 * 3600))
  else limit=(-max_total_time="$secs"); bound=$((secs + 120)); fi
  log=$(mktemp /tmp/rl-fuzz-log.XXXXXX)
  # -timeout: an input that takes seconds is a finding (a hang), as are leaks and crashes
  rc=0
  timeout "$bound" "$dir/tests/fuzz/fuzz_$t" "${limit[@]}" -seed="${FUZZ_SEED:-1}" -timeout=10 -max_len=9100 \
    -artifact_prefix="$dir/crashes/$t/" -print_final_stats=1 "$(seed_dir "$t")" > "$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if [ "$rc" -eq 0 ]; then
    echo "fuzz_$t: ${runs:-?} executions, nothing found"
  else
    fails=$((fails + 1))
    echo "fuzz_$t: FOUND something (exit $rc) after ${runs:-?} executions, seed ${FUZZ_SEED:-1}; inputs in $dir/crashes/$t/"
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -5
  fi
  rm -f "$log"
done
[ "$fails" -eq 0 ]
