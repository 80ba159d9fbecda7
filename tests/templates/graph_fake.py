"""A loopback stand-in for the WhatsApp Cloud API template endpoints (Graph API).

- `POST /{version}/{waba_id}/message_templates`: Bearer token; answers `create_answer`
  (default 200 `{"id", "status": "PENDING", "category"}` with a fresh id).
- `GET /{version}/{template_id}`: answers `statuses[template_id]` (default PENDING).
- `POST /{version}/{template_id}`: an edit; 200 `{"success": true}`.
- `DELETE /{version}/{waba_id}/message_templates?name=..&hsm_id=..`: 200 `{"success": true}`.

Every request is recorded in `requests`.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = "EAAG-template-token"
WABA = "102290129340398"
APP_SECRET = "meta-app-secret"
VERIFY_TOKEN = "verify-me"


@dataclass
class Seen:
    method: str
    path: str
    query: dict
    headers: dict
    body: bytes

    @property
    def json(self):
        return json.loads(self.body or b"null")


@dataclass
class GraphFake:
    server: ThreadingHTTPServer
    requests: list[Seen] = field(default_factory=list)
    statuses: dict[str, dict] = field(default_factory=dict)
    create_answer: tuple[int, dict] | None = None
    ids: itertools.count = field(default_factory=lambda: itertools.count(900000001))

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: GraphFake

    def log_message(self, *args):  # quiet
        return

    def _answer(self, status: int, body: dict) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        seen = Seen(self.command, parts.path, parse_qs(parts.query), dict(self.headers), body)
        self.fake.requests.append(seen)
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._answer(401, {"error": {"message": "Invalid OAuth access token.",
                                                "code": 190}})
        segments = parts.path.strip("/").split("/")
        if len(segments) == 3 and segments[2] == "message_templates":
            if self.command == "POST":
                if self.fake.create_answer:
                    return self._answer(*self.fake.create_answer)
                new_id = str(next(self.fake.ids))
                return self._answer(200, {"id": new_id, "status": "PENDING",
                                          "category": seen.json.get("category")})
            if self.command == "DELETE":
                return self._answer(200, {"success": True})
        if len(segments) == 2:
            if self.command == "GET":
                answer = self.fake.statuses.get(segments[1], {"status": "PENDING"})
                return self._answer(200, {"id": segments[1], **answer})
            if self.command == "POST":
                return self._answer(200, {"success": True})
        return self._answer(404, {"error": {"message": "Unknown path", "code": 803}})

    do_GET = do_POST = do_DELETE = _handle


def start() -> GraphFake:
    handler = type("Handler", (_Handler,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    fake = GraphFake(server=server)
    handler.fake = fake
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return fake
