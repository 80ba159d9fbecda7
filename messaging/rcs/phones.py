"""E.164 phone numbers as the RCS endpoints take them (a leading + and a valid number)."""

from __future__ import annotations

from typing import Any

from contacts.normalize import parse_phone
from platform_core.errors import APIError


def e164(raw: Any, field: str = "phone") -> str:
    """The number in E.164, or 422 INVALID_PHONE_NUMBER naming `field`."""
    text = raw.strip() if isinstance(raw, str) else ""
    phone = parse_phone(text, default_country="US") if text.startswith("+") and len(text) <= 20 \
        else None
    if phone is None:
        message = "Not a valid E.164 phone number (+14155550123)."
        raise APIError("INVALID_PHONE_NUMBER", message, details={
            "field": field, "issues": [{"field": field, "message": message}]})
    return phone
