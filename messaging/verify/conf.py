"""Verify limits: deployment defaults (Django settings) and per-organization overrides.

| Setting (default) | Meaning |
|---|---|
| `VERIFY_FRAUD_GUARD_ENABLED` (True) | the fraud guard runs on every send |
| `VERIFY_RECIPIENT_LIMIT` (5) / `VERIFY_RECIPIENT_WINDOW_SECONDS` (600) | sends to one recipient per window (429 `VERIFY_RECIPIENT_LIMIT`) |
| `VERIFY_PREFIX_LIMIT` (1000) / `VERIFY_PREFIX_WINDOW_SECONDS` (3600) | sends to one destination prefix per window (429 `VERIFY_PREFIX_LIMIT`) |
| `VERIFY_CONVERSION_MIN_SENDS` (30) / `VERIFY_CONVERSION_MIN_RATE` (0.2) | a prefix with at least this many settled sends in `VERIFY_CONVERSION_WINDOW_SECONDS` (86400) converting below the rate is blocked (403 `VERIFY_PREFIX_BLOCKED`) |
| `VERIFY_CONVERSION_SETTLE_SECONDS` (300) | a send counts against conversion once this old (or verified) |
| `VERIFY_BULK_REQUESTS_PER_MINUTE` (2) | `POST /verify/bulk` per organization |
| `VERIFY_PRICE_PER_MESSAGE_USD` ({"sms": 0.05, ...}) | prices of the conversion report |
| `VERIFY_CODE_HMAC_KEY` (derived from SECRET_KEY) | key of the code hashes |

The operator console (admin, "Verify settings") overrides any of the per-organization
ones; an empty field keeps the default.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from django.conf import settings

DEFAULT_PRICES_USD = {"sms": 0.05, "whatsapp": 0.03, "voice": 0.10, "email": 0.001,
                      "rcs": 0.04, "viber": 0.03, "telegram": 0.01, "flashcall": 0.02}


@dataclass(frozen=True)
class Limits:
    fraud_guard_enabled: bool
    recipient_limit: int
    recipient_window_seconds: int
    prefix_limit: int
    prefix_window_seconds: int
    conversion_min_sends: int
    conversion_min_rate: float
    bulk_requests_per_minute: int


_DEFAULTS = {
    "fraud_guard_enabled": True,
    "recipient_limit": 5,
    "recipient_window_seconds": 600,
    "prefix_limit": 1000,
    "prefix_window_seconds": 3600,
    "conversion_min_sends": 30,
    "conversion_min_rate": 0.2,
    "bulk_requests_per_minute": 2,
}


def conversion_window_seconds() -> int:
    return int(getattr(settings, "VERIFY_CONVERSION_WINDOW_SECONDS", 86400))


def conversion_settle_seconds() -> int:
    return int(getattr(settings, "VERIFY_CONVERSION_SETTLE_SECONDS", 300))


def max_prefix_window_seconds() -> int:
    """The longest prefix window any organization may use (overrides included)."""
    from .models import VerifySettings

    configured = VerifySettings.objects.filter(prefix_window_seconds__isnull=False).order_by(
        "-prefix_window_seconds").values_list("prefix_window_seconds", flat=True).first()
    default = int(getattr(settings, "VERIFY_PREFIX_WINDOW_SECONDS",
                          _DEFAULTS["prefix_window_seconds"]))
    return max(default, configured or 0)


def prices_usd() -> dict[str, float]:
    return {**DEFAULT_PRICES_USD, **getattr(settings, "VERIFY_PRICE_PER_MESSAGE_USD", {})}


def limits_for(organization_id: str) -> Limits:
    """The deployment defaults with the organization's overrides applied (one query)."""
    from .models import VerifySettings

    override = VerifySettings.objects.filter(organization_id=organization_id).first()
    values = {}
    for f in fields(Limits):
        value = getattr(override, f.name, None) if override is not None else None
        if value is None:
            value = getattr(settings, f"VERIFY_{f.name.upper()}", _DEFAULTS[f.name])
        values[f.name] = value
    return Limits(**values)
