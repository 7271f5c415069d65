#!/usr/bin/env bash
# rocelab-p4's command line: exit 0 for the programs of p4/, 2 with FILE:LINE
# for each refused construct, 2 for bad options, 0 for --help; --run prints
# each frame's egress port as p4/default.entries (and ecmp, pinning) route it.
# usage: test_swx_cli.sh ROCELAB_P4 P4_DIR
set -u
P4=$(realpath "$1") DIR=$(realpath "$2")
T=$(mktemp -d /tmp/rl-swx-cli-XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

# expect STATUS MESSAGE ARGS...: the exit status, and MESSAGE a substring of stderr+stdout
expect() {
  local want=$1 msg=$2 out rc
  shift 2
  out=$(timeout 60 "$P4" "$@" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ] && [[ "$out" == *"$msg"* ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: rocelab-p4 $*: status $rc (want $want), output: $out"
  fi
}

head='struct m_t {
 bit<32> port
}
metadata instanceof m_t'
printf '%s\napply {\n rx m.port\n frob m.port\n tx m.port\n}\n' "$head" > "$T/unknown.spec"
printf '%s\nheader e instanceof m_t\napply {\n rx m.port\n hash jhash m.port h.e.port m.port\n tx m.port\n}\n' \
  "$head" > "$T/hash.spec"
printf '%s\nlearner l {\n' "$head" > "$T/learner.spec"
printf '%s\napply {\n rx m.port\n' "$head" > "$T/truncated.spec"
printf '%s\napply {\n rx m.port\n extract h.nope\n tx m.port\n}\n' "$head" > "$T/dpdk.spec"

expect 0 "default.spec: builds" --check "$DIR/default.spec"
expect 0 "ecmp.spec: builds" --check "$DIR/ecmp.spec"
expect 0 "pinning.spec: builds" --check "$DIR/pinning.spec"
expect 0 "flowlet.spec: builds" --check "$DIR/flowlet.spec"
# a program that reads rocelab's metadata runs in rocelab-dp only: refused at its header rl_meta
line=$(grep -n '^header rl_meta ' "$DIR/letflow.spec" | cut -d: -f1)
expect 2 "letflow.spec:${line:-none}: header rl_meta: --run hands no rocelab metadata" \
  --run "$DIR/letflow.spec" --pcap /dev/null
printf 'hash_cfg default action set_hash algo 1\n' > "$T/short.entries"
expect 2 "short.entries:1: table hash_cfg: DPDK cannot read the entry" \
  --run "$DIR/ecmp.spec" --pcap /dev/null --entries "$T/short.entries"
expect 2 "unknown.spec:7: unknown instruction 'frob'" --check "$T/unknown.spec"
expect 2 "hash.spec:8: hash over two structs" --check "$T/hash.spec"
expect 2 "learner.spec:5: learner table 'l' is not supported" --check "$T/learner.spec"
expect 2 "truncated.spec:6: the file ends inside the apply block" --check "$T/truncated.spec"
expect 2 "dpdk.spec:5: DPDK refused the apply block" --check "$T/dpdk.spec"
expect 2 "$T/missing.spec: No such file" --check "$T/missing.spec"
expect 2 "unknown or incomplete option '--bogus'" --bogus
expect 2 "one of --check FILE or --run FILE"
expect 2 "--run needs --pcap IN" --run "$DIR/default.spec"
expect 2 "--ports '0'" --ports 0 --check "$DIR/default.spec"
expect 2 "--memory 'x'" --memory x --check "$DIR/default.spec"
# an exact-match route table of 4M entries (allocated whole at build) does not fit in 16 MB
sed 's/size 4096/size 4194304/; s/m.dst_addr lpm/m.dst_addr exact/' "$DIR/default.spec" > "$T/huge.spec"
expect 2 "huge.spec:1: DPDK refused to build the pipeline: a table did not fit" \
  --memory 16 --check "$T/huge.spec"
expect 0 "usage: rocelab-p4" --help

# Two frames to 10.0.1.5 (route /24: port 1) and 10.0.9.9 (route /16: port 2), one to
# 192.168.0.1 (no route: dropped). Ethernet + IPv4 (TTL 64) + UDP, 60 bytes, pcap by hand.
python3 - "$T/in.pcap" <<'EOF'
import struct, sys
def frame(dst):
    ip = bytes([0x45, 0, 0, 46, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1]) + bytes(dst)
    return bytes([2, 0, 0, 0, 0, 0x99, 2, 0, 0, 0, 0, 1, 8, 0]) + ip + bytes(26)
with open(sys.argv[1], 'wb') as o:
    o.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for d in ([10, 0, 1, 5], [10, 0, 9, 9], [192, 168, 0, 1]):
        f = frame(d)
        o.write(struct.pack('<IIII', 0, 0, len(f), len(f)) + f)
EOF
want=$'1 port 1 len 60\n2 port 2 len 60\n3 drop'
got=$(timeout 60 "$P4" --run "$DIR/default.spec" --pcap "$T/in.pcap" --entries "$DIR/default.entries" 2>&1)
if [ "$got" = "$want" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: --run printed: $got"; fi
# p4/pinning.entries: 10.0.1.5 is slot 4 of 10.0.1.0/24, 4 mod 2 = uplink 0 (port 4);
# 10.0.9.9 and 192.168.0.1 have no route there
want=$'1 port 4 len 60\n2 drop\n3 drop'
got=$(timeout 60 "$P4" --run "$DIR/pinning.spec" --pcap "$T/in.pcap" --entries "$DIR/pinning.entries" 2>&1)
if [ "$got" = "$want" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: pinning --run printed: $got"; fi
# p4/ecmp.entries (its hash_cfg line a default entry): 10.0.1.5 on one of the group's ports 4 to 7
got=$(timeout 60 "$P4" --run "$DIR/ecmp.spec" --pcap "$T/in.pcap" --entries "$DIR/ecmp.entries" 2>&1)
if [[ "$got" =~ ^1\ port\ [4-7]\ len\ 60$'\n'2\ drop$'\n'3\ drop$ ]]; then pass=$((pass + 1))
else fail=$((fail + 1)); echo "FAIL: ecmp --run printed: $got"; fi
printf 'route match 0x0a000100/0xffffff00 action nope\n' > "$T/bad.entries"
expect 2 "bad.entries:1: table route: DPDK cannot read the entry" \
  --run "$DIR/default.spec" --pcap "$T/in.pcap" --entries "$T/bad.entries"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
