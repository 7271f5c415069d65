# SPDX-License-Identifier: BSD-3-Clause
"""What the dashboard and the exporter share: their command line (which
fabric, its topology, the port), opening the fabric, and a read-only HTTP
server on 127.0.0.1 that answers GET on a few paths and 405 to anything else.
"""

import argparse
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import rlcli
import rllayout
import rltel

LISTEN = "127.0.0.1"  # never another address: the pages and metrics are local only
PORT_MAX = 65535


def arg_parser(doc, default_port, topo_tool):
    """An ArgumentParser with --name/--socket, --topology, --topo-tool, --port."""
    ap = rlcli.ArgParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--name", help="the fabric's DPDK file prefix (rocelab-dp --name)")
    src.add_argument("--socket", help="the telemetry socket path")
    ap.add_argument("--topology", required=True, help="the fabric's topology YAML")
    ap.add_argument("--topo-tool", default=topo_tool, help="rocelab-topo program")
    ap.add_argument("--port", type=int, default=default_port,
                    help=f"TCP port on {LISTEN} (default {default_port}; 0: any free one)")
    return ap


def check_port(ap, a):
    if not 0 <= a.port <= PORT_MAX:
        ap.error(f"--port={a.port}: must be 0..{PORT_MAX}")


def open_fabric(prog, a):
    """(Topo, Telemetry) of the arguments, or None after printing why."""
    try:
        topo = rllayout.topo_load(a.topology, a.topo_tool)
        path = a.socket or rltel.socket_path(a.name)
    except (rllayout.TopoError, rltel.TelError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return None
    return topo, rltel.Telemetry(path)


def _handler(routes):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, code, body, ctype):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):  # noqa: N802 (http.server's name)
            route = routes.get(self.path.split("?")[0])
            if route is None:
                self._send(404, b"not found\n", "text/plain")
            else:
                self._send(200, *route(self.headers))

        def _read_only(self):
            self._send(405, b"read-only: GET only\n", "text/plain")

        do_POST = do_PUT = do_DELETE = do_PATCH = _read_only  # noqa: N815

        def log_message(self, fmt, *args):
            pass  # quiet: pages poll every second, Prometheus scrapes often
    return Handler


def serve(prog, port, routes, what):
    """Serve routes ({path: fn(headers) -> (body bytes, content type)}) on
    LISTEN:port until SIGINT; prints the URL first. Returns an exit status."""
    try:
        srv = ThreadingHTTPServer((LISTEN, port), _handler(routes))
    except OSError as e:
        print(f"{prog}: --port={port}: {e.strerror}", file=sys.stderr)
        return 2
    first = sorted(routes)[0] if "/" not in routes else "/"
    print(f"{prog}: http://{LISTEN}:{srv.server_address[1]}{first} ({what})", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    srv.server_close()
    return 0


def default_topo_tool(script_dir):
    """rocelab-topo of the checkout the script (scripts/) lives in."""
    return rllayout.find_topo_tool(os.path.join(script_dir, ".."))
