#!/usr/bin/env bash
# Fuzz the packet parser (hashing/) with libFuzzer under ASan+UBSan for a
# bounded time, seeded with the real rxe frames of tests/testdata.
#   scripts/fuzz.sh [SECONDS]     (default 30)
# Exit 0 when the fuzzer found nothing; crash inputs land in build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
dir=build-fuzz
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang meson setup "$dir" -Dfuzz=true -Ddpdk=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
ninja -C "$dir" -j2 tests/fuzz/fuzz_parse >/dev/null
corpus=$dir/corpus
mkdir -p "$corpus" "$dir/crashes"
# Seed corpus: every frame of the golden capture, one file each.
python3 - tests/testdata/rxe-rc-ud.pcap "$corpus" <<'PY'
import struct, sys, os
d = open(sys.argv[1], 'rb').read()
off, i = 24, 0
while off + 16 <= len(d):
    incl = struct.unpack_from('<I', d, off + 8)[0]
    open(os.path.join(sys.argv[2], 'rxe-%03d' % i), 'wb').write(d[off + 16:off + 16 + incl])
    off += 16 + incl; i += 1
PY
timeout $((secs + 60)) "$dir/tests/fuzz/fuzz_parse" -max_total_time="$secs" -max_len=9100 \
  -artifact_prefix="$dir/crashes/" -print_final_stats=1 "$corpus" 2>&1 | tail -5
