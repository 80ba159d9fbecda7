"""Meta's WhatsApp Cloud API.

    POST {base}/{version}/{phone_number_id}/messages      Authorization: Bearer <token>
    {"messaging_product": "whatsapp", "recipient_type": "individual", "to": "15551234567",
     "type": "text", "text": {"body": "..."}}
    type "template": {"name", "language": {"code"}, "components": [...]}
    type "image" | "video" | "audio" | "document": {"link": url, "caption"?}
    type "interactive": metadata["whatsapp"]["interactive"] as is (buttons, list, product,
                        product_list, flow); a marketing template (metadata["whatsapp"]
                        ["endpoint"] == "marketing_messages") goes to
                        POST .../{phone_number_id}/marketing_messages with
                        `biz_opaque_callback_data` (the tracking id)

The answer's `messages[0].id` (a `wamid.`) is the provider message id; the message is
`accepted` (queued): sent / delivered / read arrive through the status webhook. A refusal
is `{"error": {"code": 131030, "message": "...", ...}}`: the code and message become the
message's error_code / error_message.

Account: config `phone_number_id` (required), `waba_id`, `api_version` (default v20.0);
credentials `access_token`.
"""

from __future__ import annotations

import json
import mimetypes
from typing import Any
from urllib.parse import quote, urlsplit

from messaging.providers.base import ProviderError, SendResult

from . import common

NAME = "whatsapp_cloud"
DEFAULT_BASE_URL = "https://graph.facebook.com"
DEFAULT_API_VERSION = "v20.0"
_MEDIA_TYPES = {"image": "image", "video": "video", "audio": "audio"}


def media_type(url: str) -> str:
    """image / video / audio by the URL's file extension; anything else is a document."""
    guessed, _ = mimetypes.guess_type(urlsplit(url).path)
    major = (guessed or "").split("/", 1)[0]
    return _MEDIA_TYPES.get(major, "document")


def template_components(variables: Any) -> list[dict[str, Any]]:
    """Cloud API components from the message's variables.

    `{"components": [...]}` is passed as is; a list fills the body's positional parameters
    ({{1}}, {{2}}...); any other mapping fills named parameters ({{first_name}}).
    """
    if isinstance(variables, dict) and isinstance(variables.get("components"), list):
        return variables["components"]
    if isinstance(variables, list | tuple):
        params = [{"type": "text", "text": str(v)} for v in variables]
    elif isinstance(variables, dict) and variables:
        params = [{"type": "text", "parameter_name": str(k), "text": str(v)}
                  for k, v in variables.items()]
    else:
        return []
    return [{"type": "body", "parameters": params}]


def _whatsapp_extras(message) -> dict[str, Any]:
    extras = (getattr(message, "metadata", None) or {}).get("whatsapp")
    return extras if isinstance(extras, dict) else {}


def build_payload(message) -> dict[str, Any]:
    payload: dict[str, Any] = {"messaging_product": "whatsapp", "recipient_type": "individual",
                               "to": message.to.lstrip("+")}
    extras = _whatsapp_extras(message)
    if isinstance(extras.get("interactive"), dict):
        # Buttons, list menus, products and flows (messaging/whatsapp/services/sends.py).
        payload.update(type="interactive", interactive=extras["interactive"])
        return payload
    if extras.get("biz_opaque_callback_data"):
        payload["biz_opaque_callback_data"] = extras["biz_opaque_callback_data"]
    if message.template_name:
        template: dict[str, Any] = {"name": message.template_name,
                                    "language": {"code": message.language or "en_US"}}
        components = template_components(message.variables)
        if components:
            template["components"] = components
        payload.update(type="template", template=template)
    elif message.media_urls:
        url = message.media_urls[0]
        kind = media_type(url)
        media: dict[str, Any] = {"link": url}
        if message.body and kind != "audio":
            media["caption"] = message.body
        if kind == "document":
            media["filename"] = urlsplit(url).path.rsplit("/", 1)[-1] or "document"
        payload.update(type=kind, **{kind: media})
    else:
        payload.update(type="text", text={"preview_url": "http" in message.body,
                                          "body": message.body})
    return payload


class WhatsAppCloudProvider:
    name = NAME
    channels = frozenset({"whatsapp"})

    def send(self, message, account) -> SendResult:
        account = common.require_account(account, NAME)
        phone_number_id = common.setting(account, "phone_number_id", provider=NAME)
        token = common.secret(account, "access_token", provider=NAME)
        version = account.setting("api_version") or DEFAULT_API_VERSION
        root = common.base_url(account, DEFAULT_BASE_URL)
        # Marketing templates go to the Marketing Messages API's endpoint.
        endpoint = ("marketing_messages"
                    if _whatsapp_extras(message).get("endpoint") == "marketing_messages"
                    else "messages")
        url = (f"{root}/{quote(version, safe='')}/{quote(str(phone_number_id), safe='')}"
               f"/{endpoint}")
        response = common.call(
            NAME, "POST", url, content=json.dumps(build_payload(message)).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        data = common.as_dict(response.json())
        if not response.ok:
            error = common.as_dict(data.get("error"))
            text = error.get("message")
            details = common.as_dict(error.get("error_data")).get("details")
            if details and details not in str(text):
                text = f"{text} ({details})" if text else details
            return common.failed(error.get("code"), text, response.status_code)
        messages = data.get("messages") or []
        first = common.as_dict(messages[0]) if messages else {}
        if not first.get("id"):
            raise ProviderError("WhatsApp answered without a message id.", retryable=False,
                                code="PROVIDER_BAD_RESPONSE")
        return SendResult(provider_message_id=str(first["id"]), status="queued")
