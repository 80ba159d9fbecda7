"""Viber Business Messages through the Vonage Messages API.

    POST {base}/v1/messages             Authorization: Basic <api_key:api_secret>
    {"message_type": "text", "channel": "viber_service", "to": "447700900000",
     "from": "<Viber service id>", "text": "...", "client_ref": "<message id>"}

The answer (202) is `{"message_uuid": "..."}`, kept as the provider message id; the
message is `sent` (handed to Viber). A refusal is an RFC 7807 problem
`{"type": ".../api-errors/messages#1150", "title": "Invalid params", "detail": "..."}`:
the type's fragment (or the title) becomes the error_code, the detail the error_message.

Account: config `from` (the Viber service id, required); credentials `api_key` and
`api_secret`.
"""

from __future__ import annotations

import base64
import json

from messaging.providers.base import ProviderError, SendResult

from . import common

NAME = "vonage"
DEFAULT_BASE_URL = "https://api.nexmo.com"


def build_payload(message, service_id: str) -> dict[str, str]:
    return {"message_type": "text", "channel": "viber_service", "to": message.to.lstrip("+"),
            "from": service_id, "text": message.body, "client_ref": message.pk}


class VonageViberProvider:
    name = NAME
    channels = frozenset({"viber"})

    def send(self, message, account) -> SendResult:
        account = common.require_account(account, NAME)
        service_id = message.from_ or common.setting(account, "from", provider=NAME)
        key = common.secret(account, "api_key", provider=NAME)
        secret = common.secret(account, "api_secret", provider=NAME)
        token = base64.b64encode(f"{key}:{secret}".encode()).decode("ascii")
        root = common.base_url(account, DEFAULT_BASE_URL)
        response = common.call(
            NAME, "POST", f"{root}/v1/messages",
            content=json.dumps(build_payload(message, str(service_id))).encode(),
            headers={"Authorization": f"Basic {token}", "Content-Type": "application/json",
                     "Accept": "application/json"})
        data = common.as_dict(response.json())
        if not response.ok:
            kind = str(data.get("type") or "")
            code = kind.rsplit("#", 1)[1] if "#" in kind else data.get("title")
            return common.failed(code, data.get("detail") or data.get("title"),
                                 response.status_code)
        if not data.get("message_uuid"):
            raise ProviderError("Vonage answered without a message_uuid.", retryable=False,
                                code="PROVIDER_BAD_RESPONSE")
        return SendResult(provider_message_id=str(data["message_uuid"]), status="sent")
