# Telemetry read directly (sourced), independently of the tools under test:
# one reply of the rocelab-dp whose --name is ${TEL_NAME:-$name}, waiting at
# most ${TEL_WAIT:-5} s (under mpirun a query waits for the next poll point).

tel() { # QUERY: one telemetry reply (JSON)
  /usr/bin/python3 - "/var/run/dpdk/${TEL_NAME:-$name}/dpdk_telemetry.v2" "$1" "${TEL_WAIT:-5}" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.settimeout(float(sys.argv[3]))
s.connect(sys.argv[1]); s.recv(65536); s.send(sys.argv[2].encode()); print(s.recv(1 << 20).decode())
PY
}
cell() { # QUERY ROW COLUMN: one cell of a telemetry table
  tel "$1" | /usr/bin/python3 -c "import json,sys; t=list(json.load(sys.stdin).values())[0]; print(t[sys.argv[1]][t['columns'].index(sys.argv[2])])" "$2" "$3"
}
