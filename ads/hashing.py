"""Identifier normalisation and hashing, as Meta's Conversions API and custom audiences
require: normalise first, then lowercase hex SHA-256. A value that already is 64 hex
characters is taken as hashed.

- email: trimmed, lowercased;
- phone: digits only, with the country code (E.164 without `+`); a national number takes
  the organization's `default_country`;
- external_id: trimmed (hashed, as Meta recommends); `ctwa_clid` is never hashed.
"""

from __future__ import annotations

import hashlib
import re

import phonenumbers

_HASHED = re.compile(r"[0-9a-f]{64}")


def sha256(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _already(value: str) -> bool:
    return bool(_HASHED.fullmatch(value))


def email(raw: str) -> str | None:
    value = raw.strip().lower()
    if not value:
        return None
    return value if _already(value) else sha256(value)


def phone(raw: str, *, default_country: str = "US") -> str | None:
    value = raw.strip()
    if not value:
        return None
    if _already(value.lower()):
        return value.lower()
    try:
        parsed = phonenumbers.parse(value, None if value.startswith("+") else default_country)
    except phonenumbers.NumberParseException:
        digits = re.sub(r"\D", "", value).lstrip("0")
        return sha256(digits) if digits else None
    return sha256(f"{parsed.country_code}{parsed.national_number}")


def external_id(raw: str) -> str | None:
    value = raw.strip()
    if not value:
        return None
    return value.lower() if _already(value.lower()) else sha256(value)
