"""Public addresses of the inbound webhooks: what to configure at the provider, and what
Twilio signs.

    webhook_url(organization, "twilio")  -> https://api.example.com/api/v1/inbound/twilio/acme

Provider adapters pass this as the status callback of their sends (Twilio's
StatusCallback), so receipts come back to the organization's verified route.
"""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

ROUTE_NAMES = {
    "twilio": "inbound-twilio",
    "whatsapp_cloud": "inbound-whatsapp",
    "rcs_business": "inbound-rcs",
}


def webhook_url(organization, provider: str) -> str:
    path = reverse(ROUTE_NAMES[provider], kwargs={"org_slug": organization.slug})
    return f"{settings.PUBLIC_BASE_URL}{path}"


def _first(value: str) -> str:
    return value.split(",")[0].strip()


def requested_public_url(request) -> str:
    """The URL the provider requested, as the public sees it.

    `PUBLIC_BASE_URL` + the path and query string; behind a trusted proxy
    (`TRUST_X_FORWARDED_FOR`), `X-Forwarded-Proto` and `X-Forwarded-Host` when present.
    """
    base = settings.PUBLIC_BASE_URL
    if settings.TRUST_X_FORWARDED_FOR:
        host = _first(request.META.get("HTTP_X_FORWARDED_HOST", ""))
        if host:
            proto = _first(request.META.get("HTTP_X_FORWARDED_PROTO", "")) or \
                base.split("://", 1)[0]
            base = f"{proto.lower()}://{host}"
    return f"{base}{request.get_full_path()}"
