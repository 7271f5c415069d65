# Shared by the live tests of suite viz (sourced): a private network namespace,
# TAP-like results, and telemetry read directly (independently of the tools
# under test), headless Chromium, the URL a server prints. The caller sets
# $name (the rocelab-dp's --name) before tel/cell and $tmp before chromium_run.

# rl_netns SECONDS SCRIPT ARGS...: run SCRIPT again inside its own network
# namespace (unshare --net, root) under a timeout; returns in the re-run.
rl_netns() {
  local secs=$1 script=$2; shift 2
  [ "${ROCELAB_IN_NETNS:-}" = 1 ] && return 0
  [ "$(id -u)" -eq 0 ] || { echo "$(basename "$script"): needs root"; echo "0 passed, 1 failed"; exit 1; }
  ROCELAB_IN_NETNS=1 exec timeout "$secs" unshare --net -- bash "$script" "$@"
}

pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok - $1"; }
nok() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }

# shellcheck source=../common/tel.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/tel.sh"   # tel QUERY, cell QUERY ROW COLUMN ($name)

chromium_run() { # ARGS...: headless Chromium with a fresh profile, its log on stderr
  local ud; ud=$(mktemp -d "$tmp/chromium-XXXXXX")
  timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$ud" --enable-logging=stderr --v=0 --virtual-time-budget=3500 "$@"
  local rc=$?; rm -rf "$ud"; return $rc
}
console_errors() { grep -E 'CONSOLE\(|Uncaught' "$1"; }
url_of() { sed -n 's/^[a-z]*: \(http:[^ ]*\) .*/\1/p' "$1"; }
wait_url() { for _ in $(seq 100); do [ -n "$(url_of "$1")" ] && return 0; sleep 0.1; done; return 1; }
