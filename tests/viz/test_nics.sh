#!/usr/bin/env bash
# The emulated NICs' counters, live: /rocelab/nics and the exporter's
# rocelab_nic_<counter>_total{host=...}, against a live rocelab-dp with
# emulated hosts (tests/dataplane/data/emulated.yaml) inside a private network
# namespace (unshare --net); the NICs talk only to each other in the fabric.
#   - h0>h4: COUNT RDMA WRITEs that finish early: h4's counters then stand
#     still, so the exporter's value, telemetry's and COUNT x SIZE / MTU agree;
#   - h1>h5: a transfer still running: the exporter's h1 sent_pkts lies between
#     two telemetry reads taken before and after it, and grows;
#   - promtool check metrics passes; every NIC counter is there for every
#     emulated host; a prefix selects rows;
#   - the dashboard in headless Chromium: no console error, a NIC table with a
#     row per emulated host, h4's "received" cell = telemetry's rcvd_pkts;
#   - BIG_HOSTS emulated hosts: the whole /rocelab/nics reply is cut (DPDK's
#     16 KB), yet the exporter has every host (it asks the missing ones by name);
#   - no sanitizer report from rocelab-dp (ASan builds); nothing left in /tmp
#     or /var/run/dpdk.
# usage: test_nics.sh ROCELAB_DP ROCELAB_TOPO SOURCE_ROOT   (root)
set -u
. "$(dirname "$0")/live-lib.sh"
rl_netns 170 "$0" "$@"
DP=$(realpath "$1") TOPO_TOOL=$(realpath "$2") SRC=$(realpath "$3")
PY=/usr/bin/python3
TOPO=$SRC/tests/dataplane/data/emulated.yaml
COUNT=200 SIZE=65536 MTU=4096   # h0>h4; emulated.yaml's MTU 9000 gives path MTU 4096
N_COUNTERS=42                   # fields of nic_emul's struct ne_counters
BIG_SPINES=2 BIG_LEAVES=8 BIG_PER_LEAF=32   # 256 emulated hosts: more rows than one reply holds
BIG_HOSTS=$((BIG_LEAVES * BIG_PER_LEAF)) BIG_COUNT=20
name=rlnics$$
tmp=$(mktemp -d /tmp/rlviz-nics-XXXXXX)
dp_pid='' dash_pid=''
cleanup() {
  if [ -n "$dash_pid" ]; then kill "$dash_pid" 2>/dev/null; wait "$dash_pid" 2>/dev/null; fi
  if [ -n "$dp_pid" ]; then kill -INT "$dp_pid" 2>/dev/null; wait "$dp_pid" 2>/dev/null; fi
  rm -rf "$tmp" "/var/run/dpdk/$name"
}
trap cleanup EXIT
ip link set lo up

metric() { # NAME HOST: the exporter's sample, as an integer
  awk -v k="$1{host=\"$2\"}" '$1 == k { printf "%d", $2 }' "$tmp/metrics.txt"
}
scrape() { $PY "$SRC/scripts/exporter.py" --name "$name" --topology "$1" --topo-tool "$TOPO_TOOL" --once > "$tmp/metrics.txt" 2> "$tmp/exp.err"; }

"$DP" --topology "$TOPO" --clock live --duration 150s --name "$name" --quiet \
  --rdma "h0>h4:count=$COUNT,size=$SIZE" \
  --rdma 'h1>h5:count=100000000,size=65536,depth=1' > "$tmp/dp.out" 2>&1 &
dp_pid=$!
want=$((COUNT * SIZE / MTU))
for _ in $(seq 150); do
  [ -S "/var/run/dpdk/$name/dpdk_telemetry.v2" ] && [ "$(cell /rocelab/nics h4 rcvd_pkts 2>/dev/null)" = $want ] && break
  sleep 0.2
done
sleep 0.5 # h4's last ACK reaches h0
check "telemetry: /rocelab/nics h4 rcvd_pkts = $COUNT x $SIZE / $MTU = $want" "[ \"\$(cell /rocelab/nics h4 rcvd_pkts)\" = $want ]"
cols=$(tel /rocelab/nics | $PY -c "import json,sys; t=json.load(sys.stdin)['/rocelab/nics']; print(len(t['columns']), ' '.join(sorted(k for k in t if k != 'columns')))")
check "telemetry: $N_COUNTERS columns, one row per emulated host ($cols)" "[ \"$cols\" = \"$N_COUNTERS h0 h1 h4 h5\" ]"
rows=$(tel /rocelab/nics,h4 | $PY -c "import json,sys; print(' '.join(k for k in json.load(sys.stdin)['/rocelab/nics'] if k != 'columns'))")
check "telemetry: /rocelab/nics,h4 keeps only h4 ($rows)" "[ \"$rows\" = h4 ]"

before=$(cell /rocelab/nics h1 sent_pkts)
scrape "$TOPO"
after=$(cell /rocelab/nics h1 sent_pkts)
check "exporter --once answers ($(wc -l < "$tmp/metrics.txt") lines)" "grep -q '^rocelab_up 1' $tmp/metrics.txt && [ ! -s $tmp/exp.err ]"
check "promtool check metrics passes" "promtool check metrics < $tmp/metrics.txt"
m=$(metric rocelab_nic_rcvd_pkts_total h4) t=$(cell /rocelab/nics h4 rcvd_pkts)
check "rocelab_nic_rcvd_pkts_total{host=\"h4\"} ($m) = telemetry h4 rcvd_pkts ($t) = $want" \
  "[ -n \"$m\" ] && [ \"$m\" = \"$t\" ] && [ \"$t\" = $want ]"
m=$(metric rocelab_nic_sent_bytes_total h0) t=$(cell /rocelab/nics h0 sent_bytes)
check "rocelab_nic_sent_bytes_total{host=\"h0\"} ($m) = telemetry h0 sent_bytes ($t), more than $COUNT x $SIZE" \
  "[ -n \"$m\" ] && [ \"$m\" = \"$t\" ] && [ \"$t\" -gt $((COUNT * SIZE)) ]"
m=$(metric rocelab_nic_sent_pkts_total h1)
check "h1>h5 still running: telemetry before ($before) <= rocelab_nic_sent_pkts_total{host=\"h1\"} ($m) <= telemetry after ($after), and it grew" \
  "[ -n \"$m\" ] && [ $before -le $m ] && [ $m -le $after ] && [ $after -gt $before ] && kill -0 $dp_pid"
n=$($PY - "$tmp/metrics.txt" <<'PY'
import re, sys
hosts = {}
for line in open(sys.argv[1]):
    m = re.match(r'rocelab_nic_(\w+)_total\{host="(\w+)"\} ', line)
    if m:
        hosts.setdefault(m.group(2), set()).add(m.group(1))
print(" ".join(f"{h}:{len(c)}" for h, c in sorted(hosts.items())))
PY
)
check "every emulated host has all $N_COUNTERS NIC counters ($n)" \
  "[ \"$n\" = \"h0:$N_COUNTERS h1:$N_COUNTERS h4:$N_COUNTERS h5:$N_COUNTERS\" ]"
check "NIC counters are typed counter with help" \
  "grep -q '^# TYPE rocelab_nic_retrans_pkts_total counter' $tmp/metrics.txt && grep -q '^# HELP rocelab_nic_retrans_pkts_total Request packets sent again' $tmp/metrics.txt"

# The dashboard's NIC table, in headless Chromium.
$PY "$SRC/scripts/dashboard.py" --name "$name" --topology "$TOPO" --topo-tool "$TOPO_TOOL" \
  --port 0 > "$tmp/dash.out" 2>&1 &
dash_pid=$!
wait_url "$tmp/dash.out"; durl=$(url_of "$tmp/dash.out")
chromium_run --dump-dom "$durl" > "$tmp/dom.html" 2> "$tmp/dom.err"
nics=$($PY - "$tmp/dom.html" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.rows, self.cur = {}, None
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "tr": self.cur = a.get("data-nic")
        if tag == "tr" and self.cur: self.rows[self.cur] = []
    def handle_data(self, d):
        if self.cur and d.strip(): self.rows[self.cur].append(d.strip())
p = P(); p.feed(open(sys.argv[1]).read())
print(" ".join(sorted(p.rows)), p.rows.get("h4", ["?", "?", "?"])[2])
PY
)
t=$(cell /rocelab/nics h4 rcvd_pkts)
check "dashboard: no console error, a NIC row per emulated host, h4 received = telemetry ($nics; $t)" \
  "[ -s $tmp/dom.html ] && ! console_errors $tmp/dom.err && [ \"$nics\" = \"h0 h1 h4 h5 $t\" ] && [ \"$t\" = $want ]"
kill "$dash_pid"; wait "$dash_pid" 2>/dev/null; dash_pid=''

# A fabric with more emulated hosts than one telemetry reply holds.
kill -INT "$dp_pid"; wait "$dp_pid" 2>/dev/null; dp_pid=''; rm -rf "/var/run/dpdk/$name"
$PY "$SRC/tests/viz/gen_clos.py" $BIG_SPINES $BIG_LEAVES $BIG_PER_LEAF "$tmp/big.yaml"
sed -i 's/attach: net_null/attach: emulated/' "$tmp/big.yaml"
last=h$((BIG_HOSTS - 1))
"$DP" --topology "$tmp/big.yaml" --clock live --duration 120s --name "$name" --quiet \
  --rdma "h0>$last:count=$BIG_COUNT,size=$SIZE" > "$tmp/dp2.out" 2>&1 &
dp_pid=$!
want=$((BIG_COUNT * SIZE / MTU))
for _ in $(seq 150); do
  [ -S "/var/run/dpdk/$name/dpdk_telemetry.v2" ] && [ "$(cell /rocelab/nics,$last $last rcvd_pkts 2>/dev/null)" = $want ] && break
  sleep 0.2
done
sleep 0.5
whole=$(tel /rocelab/nics | $PY -c "import json,sys; print(len(json.load(sys.stdin)['/rocelab/nics']) - 1)")
check "$BIG_HOSTS emulated hosts: the whole /rocelab/nics reply is cut ($whole rows)" "[ \"$whole\" -gt 0 ] && [ \"$whole\" -lt $BIG_HOSTS ]"
scrape "$tmp/big.yaml"
n=$(grep -c '^rocelab_nic_sent_pkts_total{host=' "$tmp/metrics.txt")
check "exporter: every one of the $BIG_HOSTS hosts has its NIC counters ($n)" "[ \"$n\" = $BIG_HOSTS ] && promtool check metrics < $tmp/metrics.txt"
m=$(metric rocelab_nic_rcvd_pkts_total $last) t=$(cell /rocelab/nics,$last $last rcvd_pkts)
check "rocelab_nic_rcvd_pkts_total{host=\"$last\"} ($m) = telemetry ($t) = $want (a row past the cut)" \
  "[ -n \"$m\" ] && [ \"$m\" = \"$t\" ] && [ \"$t\" = $want ]"

kill -INT "$dp_pid"; wait "$dp_pid" 2>/dev/null; dp_pid=''
sanitizer() { grep -E 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:' "$@"; }
check "rocelab-dp (both runs) printed no sanitizer report" "! sanitizer $tmp/dp.out $tmp/dp2.out"
cleanup; trap - EXIT
check "nothing left in /tmp or /var/run/dpdk" "[ ! -e $tmp ] && [ ! -e /var/run/dpdk/$name ] && ! kill -0 $dp_pid 2>/dev/null"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
