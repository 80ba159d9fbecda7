"""`python -m bench.receiver`: the fast webhook receiver of the event scenarios.

A threaded HTTP/1.1 server on a free loopback port (keep-alive, so the worker's pooled
connection is reused; TCP_NODELAY and one write per answer, so no Nagle stall) that answers every POST `200 {"ok":true}` at once and records its
arrival time (CLOCK_MONOTONIC, the clock the harness stamps events with: both run on the
same machine) and raw body. Parsing waits until the harness asks:

    GET /count    -> {"count": N}                       requests received so far
    GET /records  -> {"records": [{"t", "id", "run", "sent"}, ...]}   in arrival order

`--delay SECONDS` makes it a slow receiver: each answer waits that long (the request is
recorded on arrival).

It prints `PORT <n>` on stdout once listening, and exits when its stdin closes (the
harness stopped or died) or on SIGTERM. Runs in its own process so that the measuring
process does not compete with it for the GIL.
"""

from __future__ import annotations

import json
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_arrivals: list[tuple[float, bytes]] = []  # list.append is atomic under the GIL
_OK = b'{"ok":true}'
_DELAY = 0.0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The answer leaves in one write, with Nagle off: headers and body written separately
    # would wait for the client's delayed ACK (about 40 ms per request on keep-alive).
    wbufsize = -1

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self):  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        _arrivals.append((time.monotonic(), body))
        if _DELAY:
            time.sleep(_DELAY)
        self._answer(200, _OK)

    def do_GET(self):  # noqa: N802
        if self.path == "/count":
            self._answer(200, json.dumps({"count": len(_arrivals)}).encode())
        elif self.path == "/records":
            self._answer(200, json.dumps({"records": _records()}).encode())
        else:
            self._answer(404, b'{"ok":false}')

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def log_message(self, format, *args):  # noqa: A002 - silence the access log
        return


def _records() -> list[dict]:
    out = []
    for arrived, body in list(_arrivals):
        try:
            envelope = json.loads(body)
            data = envelope.get("data") or {}
            out.append({"t": arrived, "id": envelope.get("id"), "type": envelope.get("type"),
                        "run": data.get("bench_run"), "sent": data.get("bench_sent")})
        except (ValueError, AttributeError):
            out.append({"t": arrived, "id": None, "type": None, "run": None, "sent": None})
    return out


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def main() -> int:
    global _DELAY
    if "--delay" in sys.argv:
        _DELAY = float(sys.argv[sys.argv.index("--delay") + 1])
    server = _Server(("127.0.0.1", 0), _Handler)

    def stop(*_args):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)

    def watch_stdin():
        sys.stdin.buffer.read()  # returns at EOF: the harness closed the pipe or died
        stop()

    threading.Thread(target=watch_stdin, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
