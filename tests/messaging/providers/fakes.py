"""Loopback stand-ins for the providers' APIs, faithful enough to check the wire protocol.

One threaded HTTP server answers, by path:

- Twilio  `POST /2010-04-01/Accounts/{sid}/Messages.json` and `.../Calls.json`: HTTP
  Basic auth (AccountSid:AuthToken), form-encoded body; 201 with `sid` / `status`, or
  Twilio's error document (`code`, `message`, `more_info`, `status`).
- WhatsApp `POST /v20.0/{phone_number_id}/messages`: Bearer token, JSON body with
  `messaging_product: whatsapp`; 200 with `messages[0].id`, or Graph's `error` object.
- RCS `POST /v1/phones/{msisdn}/agentMessages?messageId=&agentId=`: Bearer token, JSON
  `contentMessage`; 200 with the AgentMessage `name`, 404 NOT_FOUND for a number without
  RCS, 409 ALREADY_EXISTS for a repeated messageId.
- Vonage Messages `POST /v1/messages` (Viber): HTTP Basic api_key:api_secret, JSON with
  `channel: viber_service`; 202 `message_uuid`, or an RFC 7807 problem (422 for
  `VIBER_UNREACHABLE`).
- Telegram Gateway `POST /sendVerificationMessage`: Bearer token, JSON `phone_number` and
  `code`; `{"ok": true, "result": {"request_id"}}`, or `{"ok": false, "error"}`.
- Google OAuth `POST /token`: a JWT-bearer grant whose RS256 assertion is verified with the
  service account's public key.

`server.faults` holds one-shot behaviors used before the normal answer: "429:<retry-after>",
"503:<retry-after>", "500", "502", "reset". Every request is recorded.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import struct
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, parse_qsl, urlsplit

import jwt

TWILIO_SID = "AC0123456789abcdef0123456789abcdef"
TWILIO_TOKEN = "twilio-auth-token-secret"
WA_PHONE_ID = "106540352242922"
WA_TOKEN = "EAAG-whatsapp-access-token"
RCS_AGENT = "engage_agent_12345"
RCS_TOKEN = "ya29.rcs-access-token"
INVALID_TO = "+15005550001"      # Twilio: not a valid phone number (21211)
WA_NOT_ALLOWED = "+14155550177"  # WhatsApp: recipient not in the allowed list (131030)
RCS_NO_RCS = "+14155550188"      # RCS: the number cannot receive RCS (404 NOT_FOUND)
VONAGE_KEY, VONAGE_SECRET = "vonage-key", "vonage-secret"
VIBER_UNREACHABLE = "+14155550166"  # Vonage: the number has no Viber (1150)
TELEGRAM_TOKEN = "AAH-telegram-gateway-token"
TELEGRAM_NO_ACCOUNT = "+14155550155"  # Telegram Gateway: PHONE_NUMBER_NOT_FOUND


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    @property
    def form(self) -> list[tuple[str, str]]:
        return parse_qsl(self.body.decode(), keep_blank_values=True)

    @property
    def json(self):
        return json.loads(self.body)


@dataclass
class FakeProviders:
    server: ThreadingHTTPServer
    faults: deque = field(default_factory=deque)
    requests: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    rcs_ids: set[str] = field(default_factory=set)
    oauth_public_key: str | None = None
    oauth_tokens: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def hits(self, fragment: str = "") -> list[Seen]:
        return [r for r in self.requests if fragment in r.path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _basic(header: str | None) -> tuple[str, str] | None:
    if not header or not header.startswith("Basic "):
        return None
    user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    return user, password


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _answer(self, status: int, payload, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode() if not isinstance(payload, bytes) else payload
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        fake: FakeProviders = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        parts = urlsplit(self.path)
        seen = Seen("POST", parts.path, parse_qs(parts.query), dict(self.headers.items()), body)
        with fake.lock:
            fake.requests.append(seen)
            fault = fake.faults.popleft() if fake.faults else None
        if fault == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if fault:
            status, _, retry_after = fault.partition(":")
            headers = {"Retry-After": retry_after} if retry_after else None
            self._answer(int(status), {"code": 20429 if status == "429" else 20500,
                                       "message": "Too Many Requests" if status == "429"
                                       else "Service unavailable", "status": int(status)},
                         headers)
            return
        if parts.path == "/echo":
            return self._answer(200, {"ok": True, "body": body.decode()})
        if parts.path == "/bad":
            return self._answer(400, {"error": "bad request"})
        if parts.path.startswith("/2010-04-01/Accounts/"):
            return self._twilio(seen)
        if re.match(r"^/v\d+\.\d+/[^/]+/messages$", parts.path):
            return self._whatsapp(seen)
        if re.match(r"^/v1/phones/[^/]+/agentMessages$", parts.path):
            return self._rcs(seen, fake)
        if parts.path == "/token":
            return self._token(seen, fake)
        if parts.path == "/v1/messages":
            return self._vonage(seen)
        if parts.path == "/sendVerificationMessage":
            return self._telegram(seen)
        self._answer(404, {"error": "no such route"})

    # --- Twilio --------------------------------------------------------------------------
    def _twilio(self, seen: Seen) -> None:
        match = re.match(r"^/2010-04-01/Accounts/([^/]+)/(Messages|Calls)\.json$", seen.path)
        if not match:
            return self._answer(404, {"code": 20404, "message": "The requested resource was "
                                      "not found", "status": 404})
        if _basic(seen.headers.get("Authorization")) != (TWILIO_SID, TWILIO_TOKEN) or \
                match.group(1) != TWILIO_SID:
            return self._answer(401, {"code": 20003, "message": "Authenticate",
                                      "more_info": "https://www.twilio.com/docs/errors/20003",
                                      "status": 401})
        if seen.headers.get("Content-Type") != "application/x-www-form-urlencoded":
            return self._answer(415, {"code": 20415, "message": "Unsupported media type",
                                      "status": 415})
        form = parse_qs(seen.body.decode())
        to = form.get("To", [""])[0]
        if not to:
            return self._answer(400, {"code": 21604, "message": "A 'To' phone number is "
                                      "required.", "status": 400})
        if to == INVALID_TO:
            return self._answer(400, {
                "code": 21211, "message": f"The 'To' number {to} is not a valid phone number.",
                "more_info": "https://www.twilio.com/docs/errors/21211", "status": 400})
        if "From" not in form and "MessagingServiceSid" not in form:
            return self._answer(400, {"code": 21603, "message": "A 'From' phone number is "
                                      "required.", "status": 400})
        kind = match.group(2)
        if kind == "Calls":
            if "Twiml" not in form and "Url" not in form:
                return self._answer(400, {"code": 21205, "message": "Url parameter is "
                                          "required.", "status": 400})
            return self._answer(201, {"sid": "CA" + uuid.uuid4().hex, "status": "queued",
                                      "to": to, "from": form.get("From", [""])[0]})
        if "Body" not in form and "MediaUrl" not in form:
            return self._answer(400, {"code": 21602, "message": "Message body is required.",
                                      "status": 400})
        return self._answer(201, {
            "sid": "SM" + uuid.uuid4().hex, "status": "queued", "to": to,
            "from": form.get("From", [None])[0], "body": form.get("Body", [""])[0],
            "num_media": str(len(form.get("MediaUrl", []))), "error_code": None,
            "error_message": None, "account_sid": TWILIO_SID})

    # --- Vonage Messages API (Viber) --------------------------------------------------------
    def _vonage(self, seen: Seen) -> None:
        if _basic(seen.headers.get("Authorization")) != (VONAGE_KEY, VONAGE_SECRET):
            return self._answer(401, {"type": "https://developer.vonage.com/api-errors#unauthorized",
                                      "title": "Unauthorized", "detail": "Bad credentials."})
        payload = json.loads(seen.body or b"{}")
        if payload.get("channel") != "viber_service" or not payload.get("text"):
            return self._answer(422, {"type": "https://developer.vonage.com/api-errors/messages#1000",
                                      "title": "Invalid params", "detail": "Bad payload."})
        if "+" + str(payload.get("to")) == VIBER_UNREACHABLE:
            return self._answer(422, {"type": "https://developer.vonage.com/api-errors/messages#1150",
                                      "title": "Invalid params",
                                      "detail": "The recipient has no Viber account."})
        return self._answer(202, {"message_uuid": str(uuid.uuid4())})

    # --- Telegram Gateway ----------------------------------------------------------------
    def _telegram(self, seen: Seen) -> None:
        if seen.headers.get("Authorization") != f"Bearer {TELEGRAM_TOKEN}":
            return self._answer(401, {"ok": False, "error": "ACCESS_TOKEN_INVALID"})
        payload = json.loads(seen.body or b"{}")
        if not re.fullmatch(r"[0-9]{4,8}", str(payload.get("code") or "")):
            return self._answer(400, {"ok": False, "error": "CODE_INVALID"})
        if payload.get("phone_number") == TELEGRAM_NO_ACCOUNT:
            return self._answer(400, {"ok": False, "error": "PHONE_NUMBER_NOT_FOUND"})
        return self._answer(200, {"ok": True, "result": {
            "request_id": uuid.uuid4().hex, "phone_number": payload["phone_number"],
            "request_cost": 0.01, "delivery_status": {"status": "sent"}}})

    # --- WhatsApp Cloud API --------------------------------------------------------------
    def _whatsapp(self, seen: Seen) -> None:
        phone_id = seen.path.split("/")[2]
        if seen.headers.get("Authorization") != f"Bearer {WA_TOKEN}":
            return self._answer(401, {"error": {
                "message": "Invalid OAuth access token - Cannot parse access token",
                "type": "OAuthException", "code": 190, "fbtrace_id": "AbCdEf"}})
        if phone_id != WA_PHONE_ID:
            return self._answer(400, {"error": {
                "message": f"Unsupported post request. Object with ID '{phone_id}' does not "
                           "exist", "type": "GraphMethodException", "code": 100,
                "error_subcode": 33, "fbtrace_id": "AbCdEf"}})
        try:
            payload = json.loads(seen.body)
        except ValueError:
            payload = {}
        if payload.get("messaging_product") != "whatsapp" or payload.get("type") not in (
                "text", "template", "image", "document", "video", "audio"):
            return self._answer(400, {"error": {
                "message": "(#100) The parameter messaging_product is required.",
                "type": "OAuthException", "code": 100, "fbtrace_id": "AbCdEf"}})
        to = payload.get("to", "")
        if f"+{to}" == WA_NOT_ALLOWED:
            return self._answer(400, {"error": {
                "message": "(#131030) Recipient phone number not in allowed list",
                "type": "OAuthException", "code": 131030,
                "error_data": {"messaging_product": "whatsapp",
                               "details": "Recipient phone number not in allowed list"},
                "fbtrace_id": "AbCdEf"}})
        return self._answer(200, {
            "messaging_product": "whatsapp", "contacts": [{"input": to, "wa_id": to}],
            "messages": [{"id": "wamid." + uuid.uuid4().hex.upper(),
                          "message_status": "accepted"}]})

    # --- RCS Business Messaging ----------------------------------------------------------
    def _rcs(self, seen: Seen, fake: FakeProviders) -> None:
        msisdn = seen.path.split("/")[3]
        if seen.headers.get("Authorization") != f"Bearer {RCS_TOKEN}":
            return self._answer(401, {"error": {
                "code": 401, "message": "Request had invalid authentication credentials.",
                "status": "UNAUTHENTICATED"}})
        message_id = (seen.query.get("messageId") or [""])[0]
        if (seen.query.get("agentId") or [""])[0] != RCS_AGENT or not message_id:
            return self._answer(400, {"error": {"code": 400, "message": "Invalid agent or "
                                      "messageId.", "status": "INVALID_ARGUMENT"}})
        payload = json.loads(seen.body or b"{}")
        content = payload.get("contentMessage") or {}
        if not (content.get("text") or content.get("richCard")):
            return self._answer(400, {"error": {"code": 400, "message": "contentMessage is "
                                      "required.", "status": "INVALID_ARGUMENT"}})
        if msisdn == RCS_NO_RCS:
            return self._answer(404, {"error": {"code": 404, "message": "Requested entity "
                                      "was not found.", "status": "NOT_FOUND"}})
        with fake.lock:
            if message_id in fake.rcs_ids:
                return self._answer(409, {"error": {"code": 409, "message": "Requested entity "
                                          "already exists", "status": "ALREADY_EXISTS"}})
            fake.rcs_ids.add(message_id)
        return self._answer(200, {"name": f"phones/{msisdn}/agentMessages/{message_id}",
                                  "sendTime": "2024-01-01T00:00:00Z",
                                  "contentMessage": content})

    # --- Google OAuth token endpoint ------------------------------------------------------
    def _token(self, seen: Seen, fake: FakeProviders) -> None:
        form = dict(parse_qsl(seen.body.decode()))
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return self._answer(400, {"error": "unsupported_grant_type"})
        try:
            claims = jwt.decode(form.get("assertion", ""), fake.oauth_public_key,
                                algorithms=["RS256"], audience=f"{fake.url}/token")
        except jwt.PyJWTError as exc:
            return self._answer(400, {"error": "invalid_grant",
                                      "error_description": str(exc)})
        if claims.get("scope") != "https://www.googleapis.com/auth/rcsbusinessmessaging":
            return self._answer(400, {"error": "invalid_scope"})
        fake.oauth_tokens += 1
        return self._answer(200, {"access_token": RCS_TOKEN, "expires_in": 3599,
                                  "token_type": "Bearer"})


def start_fake() -> FakeProviders:
    class Server(ThreadingHTTPServer):
        daemon_threads = True

    server = Server(("127.0.0.1", 0), _Handler)
    fake = FakeProviders(server=server)
    server.fake = fake
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    return fake
