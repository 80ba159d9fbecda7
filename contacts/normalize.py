"""Normalization of the reachable identifiers of a contact: E.164 phones, lower-case emails.

The same forms are stored by event ingestion (platform_core.events.services), so a tracked
event and a contact match on plain equality.
"""

from __future__ import annotations

import re

import phonenumbers
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from platform_core.errors import APIError

# A free-text query "looks like a phone" when it holds only these characters.
_PHONEISH = re.compile(r"[+()\d\s.\-]+")


def parse_phone(raw: str, *, default_country: str) -> str | None:
    """E.164 for a valid number (national numbers read with `default_country`), else None."""
    text = (raw or "").strip()
    if not text or len(text) > 40:
        return None
    try:
        number = phonenumbers.parse(text, (default_country or "US").upper())
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def normalize_phone(raw: str, *, default_country: str, field: str = "phone") -> str:
    """E.164 or 422 INVALID_PHONE_NUMBER naming the field."""
    phone = parse_phone(raw, default_country=default_country)
    if phone is None:
        raise APIError(
            "INVALID_PHONE_NUMBER",
            "Enter a valid phone number: E.164 (+14155550123) or a national number of the "
            f"organization's country ({(default_country or 'US').upper()}).",
            details={"field": field, "issues": [{"field": field,
                                                 "message": "Not a valid phone number."}]},
        )
    return phone


def parse_email(raw: str) -> str | None:
    email = (raw or "").strip().lower()
    if not email or len(email) > 254:
        return None
    try:
        validate_email(email)
    except ValidationError:
        return None
    return email


def normalize_email(raw: str, *, field: str = "email") -> str:
    """Lower-cased address or 422 INVALID_EMAIL naming the field."""
    email = parse_email(raw)
    if email is None:
        raise APIError(
            "INVALID_EMAIL",
            "Enter a valid email address.",
            details={"field": field, "issues": [{"field": field,
                                                 "message": "Not a valid email address."}]},
        )
    return email


def looks_like_phone(text: str) -> bool:
    return bool(_PHONEISH.fullmatch(text)) and sum(c.isdigit() for c in text) >= 3


def phone_digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


# --- Tags and custom fields ---------------------------------------------------------------

MAX_TAGS = 50
MAX_TAG_LENGTH = 64
MAX_CUSTOM_FIELDS = 100
MAX_CUSTOM_FIELD_VALUE_LENGTH = 2000
CUSTOM_FIELD_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]{0,63}")


def _invalid(field: str, message: str):
    from platform_core.errors import validation_error

    return validation_error(field, message)


def clean_tags(raw, *, field: str = "tags") -> list[str]:
    """Trimmed, de-duplicated (first occurrence kept) list of at most 50 tags of 1-64 chars."""
    if not isinstance(raw, list):
        raise _invalid(field, "tags must be a list of strings.")
    tags: list[str] = []
    for i, value in enumerate(raw):
        if not isinstance(value, str) or not value.strip():
            raise _invalid(f"{field}[{i}]", "A tag is a non-empty string.")
        tag = value.strip()
        if len(tag) > MAX_TAG_LENGTH:
            raise _invalid(f"{field}[{i}]", f"A tag is at most {MAX_TAG_LENGTH} characters.")
        if tag not in tags:
            tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise _invalid(field, f"At most {MAX_TAGS} tags per contact.")
    return tags


def clean_custom_fields(raw, *, field: str = "custom_fields", allow_null: bool) -> dict:
    """An object of at most 100 keys (`[A-Za-z0-9_-]`, 1-64 chars, not starting with `-`)
    whose values are strings (up to 2000 chars), numbers or booleans; `null` only where
    `allow_null` (a PATCH removing the key)."""
    if not isinstance(raw, dict):
        raise _invalid(field, "custom_fields must be an object.")
    cleaned: dict = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not CUSTOM_FIELD_KEY.fullmatch(key):
            raise _invalid(
                f"{field}.{key}",
                "A custom-field key is 1-64 letters, digits, `_` or `-` (not starting with `-`).",
            )
        if value is None:
            if not allow_null:
                continue
        elif isinstance(value, str):
            if len(value) > MAX_CUSTOM_FIELD_VALUE_LENGTH:
                raise _invalid(f"{field}.{key}",
                               f"A value is at most {MAX_CUSTOM_FIELD_VALUE_LENGTH} characters.")
        elif not isinstance(value, bool | int | float):
            raise _invalid(f"{field}.{key}", "A value is a string, a number or a boolean.")
        cleaned[key] = value
    if len(cleaned) > MAX_CUSTOM_FIELDS:
        raise _invalid(field, f"At most {MAX_CUSTOM_FIELDS} custom fields per contact.")
    return cleaned
