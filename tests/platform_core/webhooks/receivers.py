"""A real HTTP receiver on loopback for webhook tests, with programmable faults.

    receiver.mode = "ok" | "500" | "410" | "503:<retry-after>" | "hang" | "reset" | "302"
                    | "slow:<seconds>" (a 200 after that long)
                    | "held" (a 200 once the test sets `receiver.release`)
    receiver.queue.append("500")    # one-shot behaviors, used before `mode`

Every request is recorded with its headers and raw body; `answered` is True only when a
2xx answer was fully written, so `delivered_event_ids()` is what the receiver really
accepted.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    raw_headers: list[tuple[str, str]]
    body: bytes
    behavior: str
    answered: bool = False
    done: bool = False  # an answer (of any kind) was written, or the connection dropped
    sni: str | None = None
    at: float = field(default_factory=time.time)  # arrival, wall clock

    @property
    def json(self):
        return json.loads(self.body)


@dataclass
class Receiver:
    server: ThreadingHTTPServer
    scheme: str = "http"
    host: str = "127.0.0.1"
    mode: str = "ok"
    queue: deque = field(default_factory=deque)
    requests: list[Received] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    response_body: bytes = b'{"ok":true}'
    last_sni: str | None = None
    max_in_flight: int = 0  # the most requests this receiver held at once

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}/hook"

    def next_behavior(self) -> str:
        with self.lock:
            return self.queue.popleft() if self.queue else self.mode

    def in_flight(self) -> int:
        """Requests received and not answered yet (slow or held ones)."""
        with self.lock:
            return sum(1 for r in self.requests if not r.done)

    def delivered_event_ids(self) -> list[str]:
        return [r.json["id"] for r in self.requests if r.answered]

    def received_event_ids(self) -> list[str]:
        return [r.json["id"] for r in self.requests]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    receiver: Receiver

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        receiver = self.server.receiver
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        behavior = receiver.next_behavior()
        record = Received(
            method="POST", path=self.path, headers={k: v for k, v in self.headers.items()},
            raw_headers=list(self.headers.items()), body=body, behavior=behavior,
            sni=getattr(self.connection, "server_hostname", None) or receiver.last_sni,
        )
        with receiver.lock:
            receiver.requests.append(record)
            held = sum(1 for r in receiver.requests if not r.done)
            receiver.max_in_flight = max(receiver.max_in_flight, held)
        receiver.arrived.set()
        try:
            self._answer(receiver, record, behavior)
        finally:
            record.done = True

    def _answer(self, receiver: Receiver, record: Received, behavior: str) -> None:
        if behavior == "hang":
            receiver.release.wait(60)
            self.close_connection = True
            return
        if behavior == "reset":
            # SO_LINGER 0: close() sends a TCP RST instead of a FIN.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        extra: list[tuple[str, str]] = []
        if behavior == "held":
            receiver.release.wait(60)
            behavior = "ok"
        if behavior.startswith("slow:"):
            time.sleep(float(behavior.split(":", 1)[1]))
            behavior = "ok"
        if behavior == "ok":
            status = 200
            extra = [("Set-Cookie", "session=secret; HttpOnly"), ("X-Receiver", "yes")]
        elif behavior == "302":
            status = 302
            extra = [("Location", f"http://127.0.0.1:{receiver.port}/elsewhere")]
        elif behavior.startswith("503:"):
            status = 503
            extra = [("Retry-After", behavior.split(":", 1)[1])]
        else:
            status = int(behavior)
        payload = receiver.response_body if status < 300 else (b"x" * 700 if status == 500
                                                               else b"error")
        try:
            self.send_response(status)
            for name, value in extra:
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
            record.answered = 200 <= status < 300
        except OSError:
            record.answered = False


def start_receiver(*, tls_context: ssl.SSLContext | None = None, host: str = "127.0.0.1",
                   family: int = socket.AF_INET) -> Receiver:
    class Server(ThreadingHTTPServer):
        daemon_threads = True
        address_family = family

    server = Server((host, 0), _Handler)
    receiver = Receiver(server=server, host=host if family == socket.AF_INET else f"[{host}]")
    server.receiver = receiver
    if tls_context is not None:
        def remember_sni(sock, server_name, context):
            receiver.last_sni = server_name

        tls_context.sni_callback = remember_sni
        server.socket = tls_context.wrap_socket(server.socket, server_side=True)
        receiver.scheme = "https"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    return receiver
