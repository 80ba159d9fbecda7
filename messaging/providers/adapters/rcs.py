"""Google's RCS Business Messaging API.

    POST {base}/v1/phones/{msisdn}/agentMessages?messageId=<uuid>&agentId=<agent>
    Authorization: Bearer <OAuth access token>
    {"contentMessage": {"text": "..."}}
    or {"contentMessage": {"richCard": {"standaloneCard": {...cardContent with media...}}}}
    or {"contentMessage": <metadata.rcs_content>} (a carousel built by messaging/rcs)

The answer is the AgentMessage, `name` = `phones/{msisdn}/agentMessages/{messageId}`; its
messageId is kept as the provider message id (the delivery receipts carry it). `messageId`
is derived from the message id, so a retried send is recognised by the API (409
ALREADY_EXISTS, taken as success) rather than sent twice. Errors are Google's
`{"error": {"code": 404, "message": "...", "status": "NOT_FOUND"}}` (NOT_FOUND: the
number cannot receive RCS); `status` becomes the message's error_code.

Account: config `agent_id` (required). Credentials: `access_token`, or `service_account`
(the JSON key file of a Google service account; the adapter signs the JWT assertion and
exchanges it at the key's `token_uri` for an access token, cached until shortly before it
expires).
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any
from urllib.parse import quote, urlencode

import jwt
from django.core.cache import cache

from messaging.providers.base import ProviderError, SendResult

from . import common

NAME = "rcs_business"
DEFAULT_BASE_URL = "https://rcsbusinessmessaging.googleapis.com"
OAUTH_SCOPE = "https://www.googleapis.com/auth/rcsbusinessmessaging"
DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token"
_NAMESPACE = uuid.UUID("6f0e3c1a-7d55-4c38-9a51-2f5d1b0c9e41")


def rcs_message_id(message) -> str:
    return str(uuid.uuid5(_NAMESPACE, str(message.pk)))


def build_payload(message) -> dict[str, Any]:
    rich = (message.metadata or {}).get("rcs_content")
    if isinstance(rich, dict) and rich:
        # Built by the rcs family (a carousel of commerce/send-catalog).
        return {"contentMessage": rich}
    if message.media_urls:
        content: dict[str, Any] = {"media": {"height": "MEDIUM", "contentInfo": {
            "fileUrl": message.media_urls[0], "forceRefresh": False}}}
        if message.subject:
            content["title"] = message.subject[:200]
        if message.body:
            content["description"] = message.body[:2000]
        return {"contentMessage": {"richCard": {"standaloneCard": {
            "cardOrientation": "VERTICAL", "cardContent": content}}}}
    return {"contentMessage": {"text": message.body}}


def _service_account(account) -> dict[str, Any] | None:
    value = account.credentials.get("service_account")
    if isinstance(value, str) and value.strip():
        try:
            value = json.loads(value)
        except ValueError:
            raise ProviderError("The RCS service_account credential is not JSON.",
                                retryable=False, code=common.MISCONFIGURED) from None
    return value if isinstance(value, dict) and value else None


def access_token(account) -> str:
    """The OAuth bearer token: given as is, or obtained with the service account key."""
    token = account.credentials.get("access_token")
    if token:
        return str(token)
    key = _service_account(account)
    if key is None:
        raise ProviderError(
            "The RCS provider account needs an `access_token` or a `service_account` "
            "credential.", retryable=False, code=common.MISCONFIGURED)
    for field in ("client_email", "private_key"):
        if not key.get(field):
            raise ProviderError(f"The RCS service account key has no `{field}`.",
                                retryable=False, code=common.MISCONFIGURED)
    token_uri = str(key.get("token_uri") or DEFAULT_TOKEN_URI)
    fingerprint = hashlib.sha256(
        f"{account.pk}|{key['client_email']}|{key['private_key']}|{token_uri}".encode(),
    ).hexdigest()[:32]
    cache_key = f"providers:rcs:token:{fingerprint}"
    cached = cache.get(cache_key)
    if cached:
        return cached
    now = int(time.time())
    headers = {"kid": key["private_key_id"]} if key.get("private_key_id") else None
    try:
        assertion = jwt.encode(
            {"iss": key["client_email"], "scope": OAUTH_SCOPE, "aud": token_uri,
             "iat": now, "exp": now + 3600},
            key["private_key"], algorithm="RS256", headers=headers,
        )
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        raise ProviderError(f"The RCS service account key cannot sign: {exc}.",
                            retryable=False, code=common.MISCONFIGURED) from None
    response = common.call(
        "google_oauth", "POST", token_uri,
        content=urlencode({"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                           "assertion": assertion}).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded",
                 "Accept": "application/json"},
    )
    data = common.as_dict(response.json())
    if not response.ok or not data.get("access_token"):
        raise ProviderError(
            f"The OAuth token exchange failed: {data.get('error_description') or data.get('error') or response.status_code}.",  # noqa: E501
            retryable=False, code=str(data.get("error") or "OAUTH_TOKEN_ERROR")[:64])
    expires_in = int(data.get("expires_in") or 3600)
    cache.set(cache_key, data["access_token"], timeout=max(expires_in - 120, 30))
    return str(data["access_token"])


class RcsBusinessProvider:
    name = NAME
    channels = frozenset({"rcs"})

    def send(self, message, account) -> SendResult:
        account = common.require_account(account, NAME)
        agent_id = common.setting(account, "agent_id", provider=NAME)
        root = common.base_url(account, DEFAULT_BASE_URL)
        message_id = rcs_message_id(message)
        query = urlencode({"messageId": message_id, "agentId": agent_id})
        url = f"{root}/v1/phones/{quote(message.to, safe='+')}/agentMessages?{query}"
        response = common.call(
            NAME, "POST", url, content=json.dumps(build_payload(message)).encode(),
            headers={"Authorization": f"Bearer {access_token(account)}",
                     "Content-Type": "application/json"},
        )
        data = common.as_dict(response.json())
        if not response.ok:
            error = common.as_dict(data.get("error"))
            if response.status_code == 409 and error.get("status") == "ALREADY_EXISTS":
                # An earlier attempt of this very message got through.
                return SendResult(provider_message_id=message_id, status="sent")
            return common.failed(error.get("status") or error.get("code"), error.get("message"),
                                 response.status_code)
        name = str(data.get("name") or "")
        return SendResult(provider_message_id=name.rsplit("/", 1)[-1] or message_id,
                          status="sent")
