#!/usr/bin/env bash
# rocelab-lb end to end: its --fields output against Wireshark's view of the
# golden capture, its load table, and its errors on bad input.
# usage: test_lb_tool.sh PATH/TO/rocelab-lb TESTDATA_DIR
set -u
LB=$1
DATA=$2
PCAP=$DATA/rxe-rc-ud.pcap
CSV=$DATA/rxe-rc-ud.fields.csv
# shellcheck source=../common/tap.sh
. "$(dirname "$0")/../common/tap.sh"   # $tmp, ok/nok/check, tap_done

"$LB" --pcap "$PCAP" --fields --profile eecmp --uplinks 4 > "$tmp/out.csv"
check "--fields exits 0" "[ $? -eq 0 ]"
check "--fields header" "[ \"\$(head -1 $tmp/out.csv)\" = 'frame,src,dst,sport,dport,opcode,dqpn,psn,icrc_ok,uplink' ]"
check "--fields summary" "[ \"\$(tail -1 $tmp/out.csv)\" = 'summary: roce=145 icrc_ok=145 icrc_bad=0' ]"
# Join with Wireshark's fields: frame, src, dst, sport, dport, opcode, dqpn (hex there), psn.
python3 - "$CSV" "$tmp/out.csv" <<'PY'
import csv, sys
want = {r['frame.number']: r for r in csv.DictReader(open(sys.argv[1]))}
rows = [l.rstrip('\n').split(',') for l in open(sys.argv[2]) if l[:1].isdigit()]
bad = 0
for f, src, dst, sport, dport, op, dqpn, psn, ok, up in rows:
    w = want[f]
    exp = [w['ip.src'], w['ip.dst'], w['udp.srcport'], w['udp.dstport'],
           w['infiniband.bth.opcode'], str(int(w['infiniband.bth.destqp'], 16)), w['infiniband.bth.psn']]
    if exp != [src, dst, sport, dport, op, dqpn, psn] or ok != '1' or not 0 <= int(up) <= 3:
        print('frame', f, 'want', exp, 'got', [src, dst, sport, dport, op, dqpn, psn, ok, up]); bad += 1
if len(rows) != 145:
    print('rows', len(rows)); bad += 1
sys.exit(bad > 0)
PY
check "--fields rows equal Wireshark's fields for all 145 frames" "[ $? -eq 0 ]"

# Uplinks are what the hash predicts: one flow (same addresses, sport, QP) always one uplink.
awk -F, 'FNR > 1 && $1 ~ /^[0-9]+$/ { k = $2","$3","$4","$7; if (k in u && u[k] != $10) bad++; u[k] = $10 }
         END { exit bad > 0 }' "$tmp/out.csv"
check "a flow keeps one uplink" "[ $? -eq 0 ]"

# --uplinks 1 puts everything on uplink 0; the report's shares add up.
"$LB" --pcap "$PCAP" --uplinks 1 > "$tmp/one.txt"
check "one uplink carries 100%" "grep -q '^0 .* 100.0%' $tmp/one.txt"
"$LB" --pcap "$PCAP" --profile eecmp --algo crc32c --seed 0x1234 --uplinks 8 > "$tmp/rep.txt"
check "report lists 8 uplinks" "[ \$(grep -cE '^[0-7] +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+%' $tmp/rep.txt) -eq 8 ]"
check "report counts 145 RoCE frames" "grep -q '145 RoCEv2 (ICRC ok 145, bad 0)' $tmp/rep.txt"

# A corrupted payload byte shows as an ICRC failure in both outputs.
python3 - "$PCAP" "$tmp/bad.pcap" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
# first record: 24-byte global header + 16-byte record header; flip a payload byte
d[24 + 16 + 60] ^= 0xff
open(sys.argv[2], 'wb').write(d)
PY
check "a flipped byte fails its ICRC" "\"$LB\" --pcap $tmp/bad.pcap --fields | tail -1 | grep -qx 'summary: roce=145 icrc_ok=144 icrc_bad=1'"

# Bad input: one line on stderr, exit 2.
expect_err() { # name, expected-substring, args...
  local name=$1 want=$2; shift 2
  "$LB" "$@" > "$tmp/o" 2> "$tmp/e"; local rc=$?
  if [ $rc -eq 2 ] && [ "$(wc -l < "$tmp/e")" -eq 1 ] && grep -q -- "$want" "$tmp/e"; then ok "$name"
  else nok "$name (rc=$rc: $(cat "$tmp/e"))"; fi
}
expect_err "missing file" "No such file" --pcap "$tmp/nope.pcap"
echo "this is not a capture" > "$tmp/text.pcap"
expect_err "not a pcap" "$tmp/text.pcap" --pcap "$tmp/text.pcap"
head -c 3000 "$PCAP" > "$tmp/trunc.pcap"
expect_err "truncated pcap" "truncated" --pcap "$tmp/trunc.pcap"
expect_err "no --pcap" "--pcap FILE is required"
expect_err "unknown profile" "unknown profile" --pcap "$PCAP" --profile 7tuple
expect_err "unknown algo" "unknown algorithm" --pcap "$PCAP" --algo md5
expect_err "zero uplinks" "bad uplink count" --pcap "$PCAP" --uplinks 0
expect_err "bad seed" "bad seed" --pcap "$PCAP" --seed xyz
check "--help exits 0" "\"$LB\" --help | grep -q '^usage: rocelab-lb'"

tap_done
