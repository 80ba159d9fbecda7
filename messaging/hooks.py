"""Extension points of the messaging pipeline for the channel apps (WhatsApp, RCS...).

A channel app registers from its `AppConfig.ready()`; the pipeline calls, in order:

- `send_guards` from `message_send`, once the recipient is normalized: raise an
  `APIError` to refuse the send (nothing is stored), e.g. a blocked WhatsApp user.
- `inbound_filters` from the inbound pipeline before an item is stored: answer True to
  drop it (the provider's webhook is still acknowledged), e.g. a blocked sender.
- `inbound_listeners` after an inbound message was stored (its conversation and
  `message.received` done): interactive replies, flow submissions.
- `whatsapp_fields`: handlers of non-`messages` fields of a WhatsApp Cloud notification
  (e.g. `calls`), called with the organization and the change's `value` and `metadata`;
  they answer how many updates they applied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SendGuard = Callable[[Any, str, str], None]
InboundFilter = Callable[[Any, Any], bool]
InboundListener = Callable[[Any, Any, Any], None]
FieldHandler = Callable[..., int]

_send_guards: list[SendGuard] = []
_inbound_filters: list[InboundFilter] = []
_inbound_listeners: list[InboundListener] = []
_whatsapp_fields: dict[str, FieldHandler] = {}


def _add(registry: list, item) -> None:
    if item not in registry:
        registry.append(item)


def register_send_guard(guard: SendGuard) -> None:
    _add(_send_guards, guard)


def register_inbound_filter(check: InboundFilter) -> None:
    _add(_inbound_filters, check)


def register_inbound_listener(listener: InboundListener) -> None:
    _add(_inbound_listeners, listener)


def register_whatsapp_field(field: str, handler: FieldHandler) -> None:
    _whatsapp_fields[field] = handler


def check_send(organization, channel: str, to: str) -> None:
    for guard in _send_guards:
        guard(organization, channel, to)


def inbound_dropped(organization, item) -> bool:
    return any(check(organization, item) for check in _inbound_filters)


def inbound_received(organization, message, item) -> None:
    for listener in _inbound_listeners:
        listener(organization, message, item)


def whatsapp_fields(organization, payload: Any) -> dict[str, int]:
    """Apply the registered non-`messages` fields of a notification: {field: applied}."""
    applied: dict[str, int] = {}
    entries = payload.get("entry") if isinstance(payload, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        changes = entry.get("changes") if isinstance(entry, dict) else None
        for change in changes if isinstance(changes, list) else []:
            if not isinstance(change, dict):
                continue
            handler = _whatsapp_fields.get(str(change.get("field")))
            value = change.get("value")
            if handler is None or not isinstance(value, dict):
                continue
            metadata = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
            applied[change["field"]] = applied.get(change["field"], 0) + handler(
                organization=organization, metadata=metadata, value=value)
    return applied
