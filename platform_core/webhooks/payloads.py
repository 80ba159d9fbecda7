"""Builders of event payloads whose shape the documents fix, for the apps that emit them.

Message events (Document 1, 2.3): `data` carries `message_id`, `channel`, `from`, `to`,
`status`. For `message.failed` (which also covers the expired and
submitted-without-receipt transitions) it additionally carries `error_code` and
`error_message`, the provider's raw code and text, only when a provider error was
captured: absent, never null or empty. Every other message event never carries them, so a
later successful transition clears them.

    from platform_core.webhooks.payloads import message_event_data
    emit(organization=org, type="message.failed",
         data=message_event_data("message.failed", message_id=..., channel="sms",
                                 sender="+1555...", recipient="+1555...", status="failed",
                                 error_code="30007", error_message="Carrier violation"))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MESSAGE_FAILED = "message.failed"
_ERROR_KEYS = ("error_code", "error_message")
_FIXED_KEYS = frozenset({"message_id", "channel", "from", "to", "status", *_ERROR_KEYS})


def message_event_data(
    event_type: str,
    *,
    message_id: str,
    channel: str,
    sender: str | None,
    recipient: str | None,
    status: str,
    error_code: str | int | None = None,
    error_message: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The `data` of a `message.*` event, enforcing the error-field rule."""
    data: dict[str, Any] = {
        "message_id": message_id,
        "channel": channel,
        "from": sender,
        "to": recipient,
        "status": status,
    }
    if extra:
        clashing = sorted(_FIXED_KEYS.intersection(extra))
        if clashing:
            raise ValueError(f"extra may not set {', '.join(clashing)}")
        data.update(extra)
    if event_type == MESSAGE_FAILED:
        if error_code is not None and str(error_code) != "":
            data["error_code"] = str(error_code)
        if error_message is not None and error_message != "":
            data["error_message"] = str(error_message)
    return data
