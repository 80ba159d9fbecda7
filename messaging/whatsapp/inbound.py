"""The WhatsApp channel's part of the messaging pipeline (messaging/hooks.py):

- sends to a blocked user are refused (422 WHATSAPP_USER_BLOCKED), whichever API sends;
- a blocked user's inbound messages are dropped (the webhook is still acknowledged);
- a reply tap (`interactive.button_reply` / `list_reply`) is kept on the inbound message
  as `metadata.interactive_reply` `{type, id, title}` (its text, the title, is the body
  the conversation shows);
- a flow completion (`interactive.nfm_reply`) is recorded as a flow submission with its
  `flow_token` (services/flows.py);
- the `calls` field of the WhatsApp webhook feeds the call log (services/calling.py).
"""

from __future__ import annotations

from typing import Any

from platform_core.errors import APIError


def _send_guard(organization, channel: str, to: str) -> None:
    if channel != "whatsapp":
        return
    from .services.recipients import is_blocked

    if is_blocked(organization, to):
        raise APIError("WHATSAPP_USER_BLOCKED", details={"to": to})


def _inbound_filter(organization, item) -> bool:
    if getattr(item, "channel", None) != "whatsapp":
        return False
    from .services.recipients import is_blocked

    return is_blocked(organization, item.from_)


def _interactive(item) -> dict[str, Any] | None:
    raw = getattr(item, "raw", None) or {}
    message = raw.get("message") if isinstance(raw, dict) else None
    if not isinstance(message, dict) or message.get("type") != "interactive":
        return None
    interactive = message.get("interactive")
    return interactive if isinstance(interactive, dict) else None


def _inbound_listener(organization, message, item) -> None:
    if getattr(message, "channel", None) != "whatsapp":
        return
    interactive = _interactive(item)
    if interactive is None:
        return
    kind = interactive.get("type")
    if kind == "nfm_reply" and isinstance(interactive.get("nfm_reply"), dict):
        from .services.flows import submission_record

        submission_record(organization=organization, message=message,
                          nfm_reply=interactive["nfm_reply"])
        return
    if kind in ("button_reply", "list_reply") and isinstance(interactive.get(kind), dict):
        from messaging.models import Message

        reply = interactive[kind]
        metadata = {**(message.metadata or {}), "interactive_reply": {
            "type": kind, "id": str(reply.get("id") or ""),
            "title": str(reply.get("title") or ""),
            **({"description": str(reply["description"])} if reply.get("description")
               else {})}}
        Message.objects.for_organization(organization).filter(pk=message.pk).update(
            metadata=metadata)
        message.metadata = metadata


def _calls_field(*, organization, metadata: dict, value: dict) -> int:
    from .services.calling import apply_call_webhook

    return apply_call_webhook(organization=organization, metadata=metadata, value=value)


def install() -> None:
    from messaging import hooks

    hooks.register_send_guard(_send_guard)
    hooks.register_inbound_filter(_inbound_filter)
    hooks.register_inbound_listener(_inbound_listener)
    hooks.register_whatsapp_field("calls", _calls_field)
