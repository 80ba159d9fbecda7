"""Live adapter: Meta's WhatsApp Cloud API on the Graph API, through the hardened provider
client (`platform_core.net.provider_client`: pinned public addresses, retries on 429/5xx,
breaker). Every call is `{base}/{version}/{path}` with `Authorization: Bearer <token>`
(the organization's token, decrypted from its ProviderAccount only for the call).

    exchange_code     GET  oauth/access_token?client_id&client_secret&code
    phone_numbers     GET  {waba_id}/phone_numbers?fields=...
    subscribe_app     POST {waba_id}/subscribed_apps         (DELETE to unsubscribe)
    deregister        POST {phone_number_id}/deregister
    profile           GET/POST {phone_number_id}/whatsapp_business_profile
    catalogs          GET/POST {business_id}/owned_product_catalogs; DELETE {catalog_id}
    products          POST {catalog_id}/products; POST/DELETE {product_id}
    calling           GET/POST {phone_number_id}/settings   {"calling": {"status": ...}}
    calls webhook     POST {app_id}/subscriptions (app token) object=whatsapp_business_account
    call permissions  GET  {phone_number_id}/call_permissions?user_wa_id=
    calls             POST {phone_number_id}/calls {action: connect|accept|reject|terminate}
    block list        POST/DELETE {phone_number_id}/block_users {"block_users": [{"user"}]}
    flows             POST {waba_id}/flows; POST {flow_id}/assets (multipart FLOW_JSON);
                      POST {flow_id}/publish; DELETE {flow_id}

Graph's error object `{"error": {"code", "error_subcode", "message", "fbtrace_id"}}` maps
onto our codes: 190 (and its auth subcodes) WHATSAPP_TOKEN_EXPIRED; 4, 17, 32, 613, 80007,
130429, 131056 WHATSAPP_RATE_LIMITED; 10 and 200-299 WHATSAPP_PERMISSION_DENIED; anything
else WHATSAPP_REQUEST_REJECTED with Meta's code and message in `details`.
"""

from __future__ import annotations

import json
import secrets
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from django.conf import settings

from platform_core.errors import APIError
from platform_core.net import provider_client

from .. import conf

PROVIDER = "whatsapp_graph"
RATE_LIMIT_CODES = frozenset({4, 17, 32, 613, 80007, 130429, 131056})
TOKEN_CODES = frozenset({190, 102, 463, 467})
PHONE_FIELDS = "id,display_phone_number,verified_name,quality_rating"
PROFILE_FIELDS = "about,address,description,email,profile_picture_url,websites,vertical"


def raise_for_graph_error(status: int, payload: Any) -> None:
    error = payload.get("error") if isinstance(payload, dict) else None
    error = error if isinstance(error, dict) else {}
    code = error.get("code")
    try:
        code = int(code)
    except (TypeError, ValueError):
        code = None
    details = {"provider_status": status, "provider_code": code,
               "provider_subcode": error.get("error_subcode"),
               "provider_message": str(error.get("message") or "")[:500],
               "fbtrace_id": error.get("fbtrace_id")}
    if code in TOKEN_CODES or status == 401:
        raise APIError("WHATSAPP_TOKEN_EXPIRED", details=details)
    if code in RATE_LIMIT_CODES or status == 429:
        raise APIError("WHATSAPP_RATE_LIMITED", details=details, headers={"Retry-After": "60"})
    if code == 10 or (code is not None and 200 <= code <= 299) or status == 403:
        raise APIError("WHATSAPP_PERMISSION_DENIED", details=details)
    text = details["provider_message"] or f"Meta answered {status}."
    raise APIError("WHATSAPP_REQUEST_REJECTED", f"Meta rejected the request: {text}",
                   details=details)


class GraphGateway:
    live = True

    def __init__(self, *, token: str | None, base_url: str | None = None,
                 version: str | None = None) -> None:
        self.token = token
        self.base_url = (base_url or conf.graph_base_url()).rstrip("/")
        self.version = version or conf.graph_version()
        if urlsplit(self.base_url).scheme != "https" and not settings.ALLOW_PRIVATE_WEBHOOK_TARGETS:
            raise APIError("WHATSAPP_REQUEST_REJECTED", "The Graph API address must use https.")

    # --- transport ---------------------------------------------------------------------

    def _url(self, path: str, query: dict[str, Any] | None = None) -> str:
        parts = "/".join(quote(str(p), safe="") for p in path.split("/"))
        url = f"{self.base_url}/{quote(self.version, safe='')}/{parts}"
        return f"{url}?{urlencode(query)}" if query else url

    def _call(self, method: str, path: str, *, query: dict[str, Any] | None = None,
              body: dict[str, Any] | None = None, token: str | None = None,
              raw: tuple[bytes, str] | None = None) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        bearer = token or self.token
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        content = b""
        if raw is not None:
            content, headers["Content-Type"] = raw
        elif body is not None:
            content = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            response = provider_client.request(PROVIDER, method, self._url(path, query),
                                               content=content, headers=headers)
        except provider_client.ProviderUnavailable as exc:
            if exc.response is not None and exc.response.status_code == 429:
                raise_for_graph_error(429, _json(exc.response.body))
            raise
        payload = _json(response.body)
        if not response.ok:
            raise_for_graph_error(response.status_code, payload)
        return payload

    def _need(self, payload: dict[str, Any], key: str) -> Any:
        if payload.get(key) in (None, ""):
            raise APIError("WHATSAPP_REQUEST_REJECTED",
                           f"Meta answered without `{key}`.", details={"provider_status": 200})
        return payload[key]

    # --- connection --------------------------------------------------------------------

    def exchange_code(self, code: str) -> str:
        payload = self._call("GET", "oauth/access_token", query={
            "client_id": conf.app_id(), "client_secret": conf.app_secret(), "code": code})
        return str(self._need(payload, "access_token"))

    def phone_numbers(self, waba_id: str) -> list[dict[str, Any]]:
        payload = self._call("GET", f"{waba_id}/phone_numbers", query={"fields": PHONE_FIELDS})
        return [row for row in payload.get("data") or [] if isinstance(row, dict)]

    def subscribe_app(self, waba_id: str) -> None:
        self._call("POST", f"{waba_id}/subscribed_apps")

    def unsubscribe_app(self, waba_id: str) -> None:
        self._call("DELETE", f"{waba_id}/subscribed_apps")

    def deregister(self, phone_number_id: str) -> None:
        self._call("POST", f"{phone_number_id}/deregister")

    # --- profile -----------------------------------------------------------------------

    def get_profile(self, phone_number_id: str) -> dict[str, Any]:
        payload = self._call("GET", f"{phone_number_id}/whatsapp_business_profile",
                             query={"fields": PROFILE_FIELDS})
        rows = payload.get("data") or [{}]
        return rows[0] if isinstance(rows[0], dict) else {}

    def update_profile(self, phone_number_id: str, fields: dict[str, Any]) -> None:
        self._call("POST", f"{phone_number_id}/whatsapp_business_profile",
                   body={"messaging_product": "whatsapp", **fields})

    # --- commerce ----------------------------------------------------------------------

    def list_catalogs(self, business_id: str) -> list[dict[str, Any]]:
        payload = self._call("GET", f"{business_id}/owned_product_catalogs",
                             query={"fields": "id,name,vertical,product_count"})
        return [row for row in payload.get("data") or [] if isinstance(row, dict)]

    def create_catalog(self, business_id: str, name: str, vertical: str) -> str:
        payload = self._call("POST", f"{business_id}/owned_product_catalogs",
                             body={"name": name, "vertical": vertical})
        return str(self._need(payload, "id"))

    def delete_catalog(self, catalog_id: str) -> None:
        self._call("DELETE", catalog_id)

    def create_product(self, catalog_id: str, fields: dict[str, Any]) -> str:
        payload = self._call("POST", f"{catalog_id}/products", body=fields)
        return str(self._need(payload, "id"))

    def update_product(self, product_id: str, fields: dict[str, Any]) -> None:
        self._call("POST", product_id, body=fields)

    def delete_product(self, product_id: str) -> None:
        self._call("DELETE", product_id)

    # --- calling -----------------------------------------------------------------------

    def calling_settings(self, phone_number_id: str) -> dict[str, Any]:
        payload = self._call("GET", f"{phone_number_id}/settings")
        calling = payload.get("calling")
        return calling if isinstance(calling, dict) else {"status": "DISABLED"}

    def set_calling(self, phone_number_id: str, enabled: bool) -> None:
        self._call("POST", f"{phone_number_id}/settings",
                   body={"calling": {"status": "ENABLED" if enabled else "DISABLED"}})

    def subscribe_calls(self, callback_url: str, verify_token: str) -> None:
        # App-level subscription: the app access token is "<app id>|<app secret>".
        self._call("POST", f"{conf.app_id()}/subscriptions",
                   token=f"{conf.app_id()}|{conf.app_secret()}",
                   body={"object": "whatsapp_business_account", "fields": "calls",
                         "callback_url": callback_url, "verify_token": verify_token})

    def call_permissions(self, phone_number_id: str, user: str) -> dict[str, Any]:
        return self._call("GET", f"{phone_number_id}/call_permissions",
                          query={"user_wa_id": user.lstrip("+")})

    def start_call(self, phone_number_id: str, to: str, session: dict | None) -> str:
        body: dict[str, Any] = {"messaging_product": "whatsapp", "to": to.lstrip("+"),
                                "action": "connect"}
        if session:
            body["session"] = session
        payload = self._call("POST", f"{phone_number_id}/calls", body=body)
        calls = payload.get("calls") or []
        first = calls[0] if calls and isinstance(calls[0], dict) else {}
        return str(self._need(first, "id"))

    def call_action(self, phone_number_id: str, call_id: str, action: str,
                    session: dict | None) -> None:
        body: dict[str, Any] = {"messaging_product": "whatsapp", "call_id": call_id,
                                "action": action}
        if session:
            body["session"] = session
        self._call("POST", f"{phone_number_id}/calls", body=body)

    # --- block list --------------------------------------------------------------------

    def block_users(self, phone_number_id: str, users: list[str]) -> None:
        self._call("POST", f"{phone_number_id}/block_users",
                   body={"messaging_product": "whatsapp",
                         "block_users": [{"user": u.lstrip("+")} for u in users]})

    def unblock_users(self, phone_number_id: str, users: list[str]) -> None:
        self._call("DELETE", f"{phone_number_id}/block_users",
                   body={"messaging_product": "whatsapp",
                         "block_users": [{"user": u.lstrip("+")} for u in users]})

    # --- flows -------------------------------------------------------------------------

    def create_flow(self, waba_id: str, name: str, categories: list[str]) -> str:
        payload = self._call("POST", f"{waba_id}/flows",
                             body={"name": name, "categories": categories})
        return str(self._need(payload, "id"))

    def upload_flow_json(self, flow_id: str, definition: dict[str, Any]) -> list[dict]:
        boundary = "engage-" + secrets.token_hex(12)
        document = json.dumps(definition).encode()
        parts = [
            _form_part(boundary, "name", b"flow.json"),
            _form_part(boundary, "asset_type", b"FLOW_JSON"),
            _form_part(boundary, "file", document, filename="flow.json",
                       content_type="application/json"),
        ]
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        payload = self._call("POST", f"{flow_id}/assets",
                             raw=(body, f"multipart/form-data; boundary={boundary}"))
        errors = payload.get("validation_errors") or []
        return [e for e in errors if isinstance(e, dict)]

    def publish_flow(self, flow_id: str) -> None:
        self._call("POST", f"{flow_id}/publish")

    def delete_flow(self, flow_id: str) -> None:
        self._call("DELETE", flow_id)


def _form_part(boundary: str, name: str, value: bytes, *, filename: str | None = None,
               content_type: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"'
    if filename:
        disposition += f'; filename="{filename}"'
    head = f"--{boundary}\r\nContent-Disposition: {disposition}\r\n"
    if content_type:
        head += f"Content-Type: {content_type}\r\n"
    return head.encode() + b"\r\n" + value + b"\r\n"


def _json(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body or b"{}")
    except (ValueError, UnicodeDecodeError):
        return {}
    return value if isinstance(value, dict) else {}
