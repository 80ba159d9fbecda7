"""A loopback stand-in for Google's RCS APIs (Business Communications and RBM), stateful
enough to check the wire protocol of the live adapter (messaging/rcs/providers/google.py)
and of the RCS send adapter:

    POST/DELETE   /v1/brands[/B]                      brands
    POST          /v1/brands/B/agents                 create agent (displayName required)
    PATCH/DELETE  /v1/brands/B/agents/A               update (updateMask required), delete
    POST          /v1/brands/B/agents/A:requestVerification | :requestLaunch
    GET           /v1/brands/B/agents/A/verification | /launch
    POST          /v1/phones/{msisdn}/testers?agentId=A
    GET           /v1/phones/{msisdn}/capabilities?requestId=&agentId=A  (404: NO_RCS)
    POST          /v1/users:batchGet
    POST          /v1/phones/{msisdn}/agentMessages?messageId=&agentId=A

Every call needs `Authorization: Bearer TOKEN`. `verification_state` and `launch_states`
are what the GETs answer (a test sets Google's verdict there). Every request is recorded.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

TOKEN = "ya29.rcs-management-token"
NO_RCS = "+14155550188"


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    @property
    def json(self):
        return json.loads(self.body) if self.body else None


@dataclass
class FakeGoogle:
    server: ThreadingHTTPServer
    requests: list[Seen] = field(default_factory=list)
    brands: dict[str, dict] = field(default_factory=dict)
    agents: dict[str, dict] = field(default_factory=dict)
    verification_state: str = "VERIFICATION_STATE_PENDING"
    launch_states: dict[str, str] = field(default_factory=dict)
    fail_next: list[tuple[int, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    counter: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def hits(self, method: str, fragment: str = "") -> list[Seen]:
        return [r for r in self.requests if r.method == method and fragment in r.path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _error(code: int, status: str, message: str) -> dict:
    return {"error": {"code": code, "message": message, "status": status}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _answer(self, status: int, payload) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_PATCH(self) -> None:  # noqa: N802
        self._handle("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        fake: FakeGoogle = self.server.fake
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        seen = Seen(method, path, parse_qs(parts.query), dict(self.headers.items()), body)
        with fake.lock:
            fake.requests.append(seen)
            failure = fake.fail_next.pop(0) if fake.fail_next else None
        if seen.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._answer(401, _error(401, "UNAUTHENTICATED", "Invalid credentials."))
        if failure:
            return self._answer(failure[0], _error(failure[0], failure[1], "Injected."))
        payload = seen.json or {}
        route = self._route(method, path)
        if route is None:
            return self._answer(404, _error(404, "NOT_FOUND", "No such route."))
        handler, match = route
        return handler(self, fake, seen, payload, *match.groups())

    def _route(self, method: str, path: str):
        for verb, pattern, handler in _ROUTES:
            match = re.fullmatch(pattern, path)
            if verb == method and match:
                return handler, match
        return None

    # --- brands and agents ----------------------------------------------------------------
    def brand_create(self, fake, seen, payload):
        if not payload.get("displayName"):
            return self._answer(400, _error(400, "INVALID_ARGUMENT", "displayName required"))
        with fake.lock:
            fake.counter += 1
            name = f"brands/b{fake.counter}"
        fake.brands[name] = payload
        return self._answer(200, {"name": name, **payload})

    def brand_delete(self, fake, seen, payload, brand):
        if fake.brands.pop(f"brands/{brand}", None) is None:
            return self._answer(404, _error(404, "NOT_FOUND", "No such brand."))
        return self._answer(200, {})

    def agent_create(self, fake, seen, payload, brand):
        if f"brands/{brand}" not in fake.brands:
            return self._answer(404, _error(404, "NOT_FOUND", "No such brand."))
        if not payload.get("displayName") or "rcsBusinessMessagingAgent" not in payload:
            return self._answer(400, _error(400, "INVALID_ARGUMENT", "Agent incomplete."))
        with fake.lock:
            fake.counter += 1
            name = f"brands/{brand}/agents/a{fake.counter}_agent"
        fake.agents[name] = payload
        return self._answer(200, {"name": name, **payload})

    def agent_patch(self, fake, seen, payload, brand, agent):
        name = f"brands/{brand}/agents/{agent}"
        if name not in fake.agents:
            return self._answer(404, _error(404, "NOT_FOUND", "No such agent."))
        if not seen.query.get("updateMask"):
            return self._answer(400, _error(400, "INVALID_ARGUMENT", "updateMask required"))
        fake.agents[name] = payload
        return self._answer(200, {"name": name, **payload})

    def agent_delete(self, fake, seen, payload, brand, agent):
        if fake.agents.pop(f"brands/{brand}/agents/{agent}", None) is None:
            return self._answer(404, _error(404, "NOT_FOUND", "No such agent."))
        return self._answer(200, {})

    def agent_verify(self, fake, seen, payload, brand, agent):
        if "agentVerificationContact" not in payload:
            return self._answer(400, _error(400, "INVALID_ARGUMENT", "contact required"))
        return self._answer(200, {"name": f"brands/{brand}/agents/{agent}/verification",
                                  "verificationState": "VERIFICATION_STATE_PENDING"})

    def agent_launch(self, fake, seen, payload, brand, agent):
        details = payload.get("agentLaunch", {}).get("rcsBusinessMessaging", {}) \
            .get("launchDetails")
        if details is None:
            return self._answer(400, _error(400, "INVALID_ARGUMENT", "launchDetails required"))
        for carrier in details:
            fake.launch_states.setdefault(carrier, "LAUNCH_STATE_PENDING")
        return self._answer(200, {"name": f"brands/{brand}/agents/{agent}/launch"})

    def verification(self, fake, seen, payload, brand, agent):
        return self._answer(200, {"verificationState": fake.verification_state})

    def launch(self, fake, seen, payload, brand, agent):
        return self._answer(200, {"rcsBusinessMessaging": {"launchDetails": {
            carrier: {"launchState": state} for carrier, state in fake.launch_states.items()}}})

    # --- RBM ----------------------------------------------------------------------------------
    def tester(self, fake, seen, payload, msisdn):
        if not seen.query.get("agentId"):
            return self._answer(400, _error(400, "INVALID_ARGUMENT", "agentId required"))
        if msisdn == NO_RCS:
            return self._answer(404, _error(404, "NOT_FOUND", "Not RCS enabled."))
        return self._answer(200, {"name": f"phones/{msisdn}/testers/t"})

    def capabilities(self, fake, seen, payload, msisdn):
        if not seen.query.get("agentId") or not seen.query.get("requestId"):
            return self._answer(400, _error(400, "INVALID_ARGUMENT", "agentId, requestId"))
        if msisdn == NO_RCS:
            return self._answer(404, _error(404, "NOT_FOUND", "Requested entity was not found."))
        return self._answer(200, {"features": ["RICHCARD_STANDALONE", "RICHCARD_CAROUSEL",
                                               "ACTION_OPEN_URL"]})

    def batch_get(self, fake, seen, payload):
        users = payload.get("users") or []
        if not payload.get("agentId") or len(users) > 10_000:
            return self._answer(400, _error(400, "INVALID_ARGUMENT", "users / agentId"))
        return self._answer(200, {"reachableUsers": [u for u in users if u != NO_RCS]})

    def agent_message(self, fake, seen, payload, msisdn):
        message_id = (seen.query.get("messageId") or [""])[0]
        if not seen.query.get("agentId") or not message_id:
            return self._answer(400, _error(400, "INVALID_ARGUMENT", "agentId, messageId"))
        return self._answer(200, {"name": f"phones/{msisdn}/agentMessages/{message_id}"})


_ROUTES = [
    ("POST", r"/v1/brands", _Handler.brand_create),
    ("DELETE", r"/v1/brands/([^/:]+)", _Handler.brand_delete),
    ("POST", r"/v1/brands/([^/]+)/agents", _Handler.agent_create),
    ("PATCH", r"/v1/brands/([^/]+)/agents/([^/:]+)", _Handler.agent_patch),
    ("DELETE", r"/v1/brands/([^/]+)/agents/([^/:]+)", _Handler.agent_delete),
    ("POST", r"/v1/brands/([^/]+)/agents/([^/:]+):requestVerification", _Handler.agent_verify),
    ("POST", r"/v1/brands/([^/]+)/agents/([^/:]+):requestLaunch", _Handler.agent_launch),
    ("GET", r"/v1/brands/([^/]+)/agents/([^/:]+)/verification", _Handler.verification),
    ("GET", r"/v1/brands/([^/]+)/agents/([^/:]+)/launch", _Handler.launch),
    ("POST", r"/v1/phones/([^/]+)/testers", _Handler.tester),
    ("GET", r"/v1/phones/([^/]+)/capabilities", _Handler.capabilities),
    ("POST", r"/v1/users:batchGet", _Handler.batch_get),
    ("POST", r"/v1/phones/([^/]+)/agentMessages", _Handler.agent_message),
]


def start() -> FakeGoogle:
    class Server(ThreadingHTTPServer):
        daemon_threads = True

    server = Server(("127.0.0.1", 0), _Handler)
    fake = FakeGoogle(server=server)
    server.fake = fake
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    return fake
