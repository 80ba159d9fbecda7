"""A loopback stand-in for Meta's Graph API: a real threaded HTTP server that records every
request (method, path, query, headers, body) and answers the documented success shapes,
or a scripted Graph error (`fake.fail_next(status, code, ...)`)."""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = "EAAG-live-token-from-code-exchange"
APP_ID = "1234567890"
APP_SECRET = "graph-app-secret"
NUMBERS = [{"id": "106540352242922", "display_phone_number": "+1 555-010-0001",
            "verified_name": "Acme", "quality_rating": "GREEN"},
           {"id": "106540352242923", "display_phone_number": "+1 555-010-0002",
            "verified_name": "Acme", "quality_rating": "YELLOW"}]


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    @property
    def json(self):
        return json.loads(self.body or b"null")


def _answer_for(method: str, path: str, seen: Seen):
    parts = path.strip("/").split("/")[1:]  # drop the version
    tail = parts[-1] if parts else ""
    if parts == ["oauth", "access_token"]:
        return 200, {"access_token": TOKEN, "token_type": "bearer"}
    if tail == "phone_numbers":
        return 200, {"data": NUMBERS, "paging": {}}
    if tail in ("subscribed_apps", "deregister", "publish", "block_users", "subscriptions"):
        if tail == "block_users" and method == "POST":
            users = (seen.json or {}).get("block_users") or []
            return 200, {"messaging_product": "whatsapp", "block_users": {
                "added_users": [{"input": u["user"], "wa_id": u["user"]} for u in users]}}
        return 200, {"success": True}
    if tail == "whatsapp_business_profile":
        if method == "GET":
            return 200, {"data": [{"about": "Live about", "vertical": "RETAIL",
                                   "websites": ["https://acme.example.com"],
                                   "messaging_product": "whatsapp"}]}
        return 200, {"success": True}
    if tail == "owned_product_catalogs":
        if method == "GET":
            return 200, {"data": [{"id": "777000111", "name": "Remote", "vertical": "commerce",
                                   "product_count": 4}]}
        return 200, {"id": "777000222"}
    if tail == "products":
        return 200, {"id": "888000333"}
    if tail == "settings":
        if method == "GET":
            return 200, {"calling": {"status": "ENABLED", "call_icon_visibility": "DEFAULT"}}
        return 200, {"success": True}
    if tail == "call_permissions":
        return 200, {"messaging_product": "whatsapp",
                     "permission": {"status": "granted"},
                     "actions": [{"action_name": "start_call", "can_perform_action": True}]}
    if tail == "calls":
        if (seen.json or {}).get("action") == "connect":
            return 200, {"messaging_product": "whatsapp", "calls": [{"id": "wacid.LIVE1"}]}
        return 200, {"messaging_product": "whatsapp", "success": True}
    if tail == "flows":
        return 200, {"id": "555000444"}
    if tail == "assets":
        return 200, {"success": True, "validation_errors": []}
    if tail in ("messages", "marketing_messages"):
        return 200, {"messaging_product": "whatsapp",
                     "contacts": [{"input": "x", "wa_id": "x"}],
                     "messages": [{"id": "wamid.LIVE" + str(len(path))}]}
    if re.fullmatch(r"\d+", tail) and method in ("POST", "DELETE"):
        return 200, {"success": True}
    return 404, {"error": {"message": "Unknown path", "code": 803}}


class FakeGraph:
    def __init__(self, server) -> None:
        self.server = server
        self.seen: list[Seen] = []
        self.failures: deque = deque()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def fail_next(self, status: int, code: int, message: str = "error", subcode=None) -> None:
        error = {"message": message, "type": "OAuthException", "code": code,
                 "fbtrace_id": "AbCdEf"}
        if subcode is not None:
            error["error_subcode"] = subcode
        self.failures.append((status, {"error": error}))

    def hits(self, fragment: str = "", method: str | None = None) -> list[Seen]:
        return [s for s in self.seen if fragment in s.path and (method is None or
                                                                s.method == method)]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        return

    def _handle(self) -> None:
        fake: FakeGraph = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        split = urlsplit(self.path)
        seen = Seen(self.command, split.path, parse_qs(split.query),
                    {k.lower(): v for k, v in self.headers.items()}, body)
        fake.seen.append(seen)
        if fake.failures:
            status, payload = fake.failures.popleft()
        else:
            status, payload = _answer_for(self.command, split.path, seen)
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_DELETE = _handle  # noqa: N815


def start() -> FakeGraph:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    fake = FakeGraph(server)
    server.fake = fake
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return fake
