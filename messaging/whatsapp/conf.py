"""Deployment settings of the WhatsApp channel, read from Django settings with an
environment fallback (no settings module edit needed):

    WHATSAPP_GRAPH_BASE_URL        Graph API root (default https://graph.facebook.com)
    WHATSAPP_GRAPH_API_VERSION     default v20.0
    WHATSAPP_APP_ID                the Meta app of the embedded signup
    WHATSAPP_APP_SECRET            its secret (code exchange, app-level webhook subscription)
    WHATSAPP_CALL_PRICE_PER_MINUTE USD per started minute of a business-initiated call
                                   (default 0.0100), what `calling/analytics` sums as spend
    WHATSAPP_CALLING_CACHE_SECONDS calling state cache (default 300: "cached 5 minutes")
"""

from __future__ import annotations

import os
from decimal import Decimal

from django.conf import settings


def _value(name: str, default: str) -> str:
    value = getattr(settings, name, None)
    if value in (None, ""):
        value = os.environ.get(name, default)
    return str(value)


def graph_base_url() -> str:
    return _value("WHATSAPP_GRAPH_BASE_URL", "https://graph.facebook.com").rstrip("/")


def graph_version() -> str:
    return _value("WHATSAPP_GRAPH_API_VERSION", "v20.0")


def app_id() -> str:
    return _value("WHATSAPP_APP_ID", "")


def app_secret() -> str:
    return _value("WHATSAPP_APP_SECRET", "")


def call_price_per_minute() -> Decimal:
    return Decimal(_value("WHATSAPP_CALL_PRICE_PER_MINUTE", "0.0100"))


def calling_cache_seconds() -> int:
    return int(_value("WHATSAPP_CALLING_CACHE_SECONDS", "300"))
