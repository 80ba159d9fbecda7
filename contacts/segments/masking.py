"""Masking of reachable identifiers in exports, and who may see them unmasked.

"Reveal permission" (0-conventions.md section 10): role owner or admin, or an API key
holding `*` or `contacts:reveal`. Everyone else gets `+1******4567` and `j***@example.com`.
"""

from __future__ import annotations

import phonenumbers

from platform_core.identity.principal import Principal

REVEAL_ROLES = frozenset({"owner", "admin"})
REVEAL_SCOPES = frozenset({"*", "contacts:reveal"})


def can_reveal(principal: Principal) -> bool:
    if principal.kind == "api_key":
        return bool(REVEAL_SCOPES & set(principal.scopes))
    return principal.role in REVEAL_ROLES


def mask_phone(phone: str | None) -> str:
    """`+14155554567` → `+1******4567`: the country code and the last four digits stay."""
    if not phone:
        return ""
    digits = phone.lstrip("+")
    country = ""
    try:
        number = phonenumbers.parse(phone if phone.startswith("+") else "+" + phone, None)
        country = str(number.country_code or "")
    except phonenumbers.NumberParseException:
        country = ""
    if not digits.startswith(country):
        country = ""
    rest = digits[len(country):]
    keep = min(4, max(len(rest) - 2, 0))
    hidden = "*" * (len(rest) - keep)
    return f"+{country}{hidden}{rest[len(rest) - keep:] if keep else ''}"


def mask_email(email: str | None) -> str:
    """`john@example.com` → `j***@example.com`."""
    if not email:
        return ""
    local, at, domain = email.partition("@")
    if not at:
        return local[:1] + "***"
    return f"{local[:1]}***@{domain}"
