"""Telegram Gateway: verification codes delivered in Telegram to a phone number.

    POST {base}/sendVerificationMessage        Authorization: Bearer <access token>
    {"phone_number": "+14155550123", "code": "123456", "payload": "<message id>",
     "sender_username"?: "<verified channel>"}

Telegram Gateway sends a code only (in its own localized text), so a `telegram` message's
body is the 4-8 digit code (messaging/validation.py `check_code_body`). The answer is
`{"ok": true, "result": {"request_id": "...", ...}}`: the request id is the provider
message id and the message is `sent`; `{"ok": false, "error": "PHONE_NUMBER_INVALID"}`
fails it with that error as the error_code.

Account: credentials `access_token` (the Gateway API token); config `sender_username`
(optional).
"""

from __future__ import annotations

import json
from typing import Any

from messaging.providers.base import ProviderError, SendResult

from . import common

NAME = "telegram_gateway"
DEFAULT_BASE_URL = "https://gatewayapi.telegram.org"


def build_payload(message, account) -> dict[str, Any]:
    payload: dict[str, Any] = {"phone_number": message.to, "code": message.body,
                               "payload": message.pk}
    username = account.setting("sender_username")
    if username:
        payload["sender_username"] = str(username)
    return payload


class TelegramGatewayProvider:
    name = NAME
    channels = frozenset({"telegram"})

    def send(self, message, account) -> SendResult:
        account = common.require_account(account, NAME)
        token = common.secret(account, "access_token", provider=NAME)
        root = common.base_url(account, DEFAULT_BASE_URL)
        response = common.call(
            NAME, "POST", f"{root}/sendVerificationMessage",
            content=json.dumps(build_payload(message, account)).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                     "Accept": "application/json"})
        data = common.as_dict(response.json())
        if not response.ok or not data.get("ok"):
            return common.failed(data.get("error"), data.get("error"), response.status_code)
        request_id = common.as_dict(data.get("result")).get("request_id")
        if not request_id:
            raise ProviderError("Telegram Gateway answered without a request_id.",
                                retryable=False, code="PROVIDER_BAD_RESPONSE")
        return SendResult(provider_message_id=str(request_id), status="sent")
