"""From each provider's webhook payload to `InboundItem`s and `ReceiptItem`s.

Provider statuses map onto the platform's lifecycle (queued < sent < delivered; failed,
undelivered, expired, canceled terminal). A "read" report means delivered (the platform
has no read status). Reports that say nothing about delivery (Twilio `receiving`, RCS
`IS_TYPING`) are dropped.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from django.http import QueryDict

from .freshness import parse_rfc3339, parse_unix
from .items import InboundItem, ReceiptItem

TWILIO = "twilio"
WHATSAPP = "whatsapp_cloud"
RCS = "rcs_business"

# --- Twilio ---------------------------------------------------------------------------------

TWILIO_MESSAGE_STATUS = {
    "accepted": "queued", "scheduled": "queued", "queued": "queued", "sending": "queued",
    "sent": "sent", "delivered": "delivered", "read": "delivered",
    "undelivered": "undelivered", "failed": "failed", "canceled": "canceled",
}
# Text-to-speech calls (channel voice): the call's progress stands for delivery.
TWILIO_CALL_STATUS = {
    "queued": "queued", "initiated": "sent", "ringing": "sent", "in-progress": "sent",
    "completed": "delivered", "busy": "undelivered", "no-answer": "undelivered",
    "failed": "failed", "canceled": "canceled",
}
_ADDRESS_PREFIXES = {"whatsapp": "whatsapp", "rcs": "rcs"}


def _twilio_address(value: str) -> tuple[str | None, str]:
    """`whatsapp:+1555...` -> ("whatsapp", "+1555..."); a bare number -> (None, number)."""
    prefix, sep, rest = value.partition(":")
    if sep and prefix.lower() in _ADDRESS_PREFIXES:
        return _ADDRESS_PREFIXES[prefix.lower()], rest
    return None, value


def twilio_items(params: QueryDict) -> list[InboundItem | ReceiptItem]:
    raw = {k: params.getlist(k) if len(params.getlist(k)) > 1 else params.get(k)
           for k in params}
    call_sid = params.get("CallSid")
    if call_sid and params.get("CallStatus"):
        status = TWILIO_CALL_STATUS.get(params["CallStatus"].lower())
        if status is None:
            return []
        error = params.get("ErrorCode") or None
        return [ReceiptItem(provider=TWILIO, provider_message_id=call_sid, status=status,
                            error_code=error, error_message=params.get("ErrorMessage") or None,
                            raw=raw)]
    sid = params.get("MessageSid") or params.get("SmsMessageSid") or params.get("SmsSid")
    if not sid:
        return []
    if params.get("MessageStatus"):
        status = TWILIO_MESSAGE_STATUS.get(params["MessageStatus"].lower())
        if status is None:  # receiving / received: not a report about an outbound message
            return []
        return [ReceiptItem(provider=TWILIO, provider_message_id=sid, status=status,
                            error_code=params.get("ErrorCode") or None,
                            error_message=params.get("ErrorMessage") or None, raw=raw)]
    kind, sender = _twilio_address(params.get("From", ""))
    _, recipient = _twilio_address(params.get("To", ""))
    try:
        media_count = int(params.get("NumMedia") or 0)
    except ValueError:
        media_count = 0
    media = [params[f"MediaUrl{i}"] for i in range(min(media_count, 10))
             if params.get(f"MediaUrl{i}")]
    channel = kind or ("mms" if media else "sms")
    return [InboundItem(channel=channel, from_=sender, to=recipient,
                        body=params.get("Body", ""), provider=TWILIO, provider_message_id=sid,
                        media_urls=media, raw=raw)]


# --- WhatsApp Cloud API ---------------------------------------------------------------------

WHATSAPP_STATUS = {"sent": "sent", "delivered": "delivered", "read": "delivered",
                   "failed": "failed"}
GRAPH_MEDIA_URL = "https://graph.facebook.com/{media_id}"
_MEDIA_KINDS = ("image", "video", "audio", "document", "sticker")


def _plus(number: str) -> str:
    digits = "".join(c for c in str(number or "") if c.isdigit())
    return f"+{digits}" if digits else ""


def _whatsapp_text(message: dict[str, Any]) -> tuple[str, list[str]]:
    kind = message.get("type")
    if kind == "text":
        return str((message.get("text") or {}).get("body", "")), []
    if kind in _MEDIA_KINDS:
        media = message.get(kind) or {}
        urls = [GRAPH_MEDIA_URL.format(media_id=media["id"])] if media.get("id") else []
        return str(media.get("caption", "")), urls
    if kind == "button":
        return str((message.get("button") or {}).get("text", "")), []
    if kind == "interactive":
        interactive = message.get("interactive") or {}
        if isinstance(interactive.get("nfm_reply"), dict):  # a flow submission
            return str(interactive["nfm_reply"].get("body") or "Sent"), []
        reply = interactive.get("button_reply") or interactive.get("list_reply") or {}
        return str(reply.get("title", "")), []
    if kind == "location":
        place = message.get("location") or {}
        return str(place.get("name") or place.get("address") or ""), []
    if kind == "reaction":
        return str((message.get("reaction") or {}).get("emoji", "")), []
    return "", []


def whatsapp_items(payload: dict[str, Any]) -> list[InboundItem | ReceiptItem]:
    """Items of a `whatsapp_business_account` notification (changes of field `messages`)."""
    items: list[InboundItem | ReceiptItem] = []
    if not isinstance(payload, dict):
        return items
    for entry in payload.get("entry") or []:
        for change in (entry or {}).get("changes") or []:
            if (change or {}).get("field") != "messages":
                continue
            value = change.get("value") or {}
            recipient = _plus((value.get("metadata") or {}).get("display_phone_number", ""))
            for message in value.get("messages") or []:
                if not isinstance(message, dict):
                    continue
                body, media = _whatsapp_text(message)
                items.append(InboundItem(
                    channel="whatsapp", from_=_plus(message.get("from", "")), to=recipient,
                    body=body, provider=WHATSAPP, provider_message_id=message.get("id"),
                    media_urls=media, received_at=parse_unix(message.get("timestamp")),
                    raw={"message": message, "metadata": value.get("metadata") or {},
                         "contacts": value.get("contacts") or []},
                ))
            for report in value.get("statuses") or []:
                if not isinstance(report, dict) or not report.get("id"):
                    continue
                status = WHATSAPP_STATUS.get(str(report.get("status", "")).lower())
                if status is None:
                    continue
                errors = report.get("errors") or []
                first = errors[0] if errors and isinstance(errors[0], dict) else {}
                items.append(ReceiptItem(
                    provider=WHATSAPP, provider_message_id=report["id"], status=status,
                    error_code=str(first["code"]) if first.get("code") is not None else None,
                    error_message=(first.get("message") or first.get("title") or None)
                    if first else None,
                    raw={"status": report},
                ))
    return items


def has_field(payload: Any, field: str) -> bool:
    """Whether a `whatsapp_business_account` notification carries a change of `field`."""
    entries = payload.get("entry") if isinstance(payload, dict) else None
    return any(
        isinstance(change, dict) and change.get("field") == field
        for entry in (entries if isinstance(entries, list) else [])
        for change in ((entry or {}).get("changes") or [] if isinstance(entry, dict) else [])
    )


def whatsapp_timestamps(payload: dict[str, Any]) -> list:
    """The signed timestamps of the items we act on (None where one is missing)."""
    moments = []
    for entry in payload.get("entry") or [] if isinstance(payload, dict) else []:
        for change in (entry or {}).get("changes") or []:
            if (change or {}).get("field") != "messages":
                continue
            value = change.get("value") or {}
            for item in [*(value.get("messages") or []), *(value.get("statuses") or [])]:
                moments.append(parse_unix(item.get("timestamp")) if isinstance(item, dict)
                               else None)
    return moments


# --- Google RCS Business Messaging ------------------------------------------------------------

RCS_EVENT_STATUS = {"DELIVERED": "delivered", "READ": "delivered"}


def rbm_decode(payload: dict[str, Any]) -> bytes | None:
    """The decoded `message.data` of a Pub/Sub push body (what the signature covers)."""
    message = payload.get("message") if isinstance(payload, dict) else None
    data = message.get("data") if isinstance(message, dict) else None
    if not isinstance(data, str) or not data:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def rcs_items(event: dict[str, Any]) -> list[InboundItem | ReceiptItem]:
    """Items of one decoded RBM user message or user event."""
    if not isinstance(event, dict):
        return []
    event_type = event.get("eventType")
    if event_type:
        status = RCS_EVENT_STATUS.get(str(event_type).upper())
        if status is None or not event.get("messageId"):
            return []
        return [ReceiptItem(provider=RCS, provider_message_id=str(event["messageId"]),
                            status=status, raw=event)]
    sender = event.get("senderPhoneNumber")
    if not sender or not event.get("messageId"):
        return []
    body, media = "", []
    if "text" in event:
        body = str(event.get("text") or "")
    elif isinstance(event.get("suggestionResponse"), dict):
        body = str(event["suggestionResponse"].get("text") or "")
    elif isinstance(event.get("userFile"), dict):
        payload = event["userFile"].get("payload") or {}
        if payload.get("fileUri"):
            media = [str(payload["fileUri"])]
    elif isinstance(event.get("location"), dict):
        place = event["location"]
        body = f"{place.get('latitude')},{place.get('longitude')}"
    return [InboundItem(channel="rcs", from_=str(sender), to=str(event.get("agentId") or ""),
                        body=body, provider=RCS, provider_message_id=str(event["messageId"]),
                        media_urls=media, received_at=parse_rfc3339(event.get("sendTime")),
                        raw=event)]


def rcs_event(data: bytes) -> dict[str, Any] | None:
    try:
        event = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    return event if isinstance(event, dict) else None
