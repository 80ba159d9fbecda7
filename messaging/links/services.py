"""Writes of the links family: minting short links and recording clicks.

Both are called by messaging (link rewriting at send time, the public redirect route);
neither is a user action, so neither writes an audit row. A click emits `link.clicked`.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.events.bus import emit

from .models import LinkClick, ShortLink

CODE_BYTES = 6  # 8 URL-safe characters, 2^48 codes
_CODE_ATTEMPTS = 5


def short_link_create(
    *,
    organization,
    target_url: str,
    message_id: str | None = None,
    campaign_id: str | None = None,
    contact_id: str | None = None,
) -> ShortLink:
    """A new short link with a random, globally unique code (retried on collision)."""
    for attempt in range(_CODE_ATTEMPTS):
        try:
            with transaction.atomic():
                return ShortLink.objects.for_organization(organization).create(
                    organization=organization,
                    code=secrets.token_urlsafe(CODE_BYTES),
                    target_url=target_url,
                    message_id=message_id,
                    campaign_id=campaign_id,
                    contact_id=contact_id,
                )
        except IntegrityError:
            if attempt == _CODE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def record_click(
    *,
    link: ShortLink,
    user_agent: str = "",
    ip: str | None = None,
    contact_id: str | None = None,
    clicked_at: datetime | None = None,
) -> LinkClick:
    """Record that `link` was followed. The link's ids are copied onto the click;
    `contact_id` overrides the link's when the redirect identified the clicker itself.

    In the same transaction: the broadcast's `clicked` counter moves on a recipient's
    first click, and `link.clicked` is emitted (data: link_id, code, url, message_id,
    campaign_id, contact_id, clicked_at, user_agent), which template analytics' counters
    and webhooks read."""
    # Saved through the model, not the tenant manager: the public redirect route that
    # calls this has no tenant context; the click takes its organization from the link.
    click = LinkClick(
        organization_id=link.organization_id,
        link=link,
        contact_id=contact_id or link.contact_id,
        message_id=link.message_id,
        campaign_id=link.campaign_id,
        clicked_at=clicked_at or timezone.now(),
        user_agent=(user_agent or "")[:400],
        ip=ip or None,
    )
    with transaction.atomic():
        click.save(force_insert=True)
        if click.campaign_id:
            from messaging.broadcasts.services import on_click

            on_click(organization_id=click.organization_id, campaign_id=click.campaign_id,
                     message_id=click.message_id, clicked_at=click.clicked_at)
        emit(organization=link.organization, type="link.clicked", data={
            "link_id": link.pk,
            "code": link.code,
            "url": link.target_url,
            "message_id": click.message_id,
            "campaign_id": click.campaign_id,
            "contact_id": click.contact_id,
            "clicked_at": click.clicked_at,
            "user_agent": click.user_agent,
        })
    return click
