"""Where a provider reports delivery receipts: the organization's inbound webhook route.

The account's config `status_callback_url` wins (a proxy in front of the platform, tests);
otherwise the inbound family's verified route for the provider and organization,
`{PUBLIC_BASE_URL}/api/v1/inbound/<provider>/<org slug>` (`public_urls.webhook_url`).
"""

from __future__ import annotations


def status_callback_url(account, provider: str, message=None) -> str | None:
    configured = account.setting("status_callback_url") if account is not None else None
    if configured:
        return str(configured)
    organization = getattr(message, "organization", None) if message is not None else None
    if organization is None and account is not None:
        organization = account.organization
    if organization is None:
        return None
    try:
        from messaging.inbound.public_urls import webhook_url
    except ImportError:  # pragma: no cover - the inbound family is part of the project
        return None
    try:
        return webhook_url(organization, provider)
    except KeyError:
        return None
