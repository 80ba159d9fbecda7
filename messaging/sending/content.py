"""The content of an outbound message: a template send's render and tracked short links."""

from __future__ import annotations

import re

from django.conf import settings

from .. import validation

_LINK = re.compile(r"https?://[^\s<>\"']+", re.IGNORECASE)
_LINK_TRAILING = ".,;:!?)]}'\""


def render_template(*, organization, channel: str, name: str, language: str | None,
                     variables: dict):
    """The templates family's check and render of a template send (issue 7).

    `templates.services.render_for_send` answers the approved variant rendered with the
    variables, or raises 422 INVALID_TEMPLATE naming what is wrong (unknown template or
    language, not approved, missing or extra variables). Without the templates family only
    the shape of the request is checked (`validation.check_template_shape`).
    """
    try:
        from templates.services import render_for_send
    except ImportError:
        return None
    return render_for_send(organization=organization, channel=channel, template_name=name,
                           language=language, variables=variables)


def short_link_base() -> str:
    return (getattr(settings, "SHORT_LINK_BASE_URL", "") or settings.PUBLIC_BASE_URL).rstrip("/")


def shorten_body_links(*, organization, body: str, message_id: str,
                       contact_id: str | None, campaign_id: str | None = None
                       ) -> tuple[str, list[str]]:
    """Replace each http(s) link of `body` by a tracked short link `/l/<code>` carrying
    the message, its contact and its campaign (a broadcast), copied onto every click."""
    from messaging.links.services import short_link_create

    base = short_link_base()
    created: list[str] = []

    def replace(match: re.Match) -> str:
        url = match.group(0)
        tail = ""
        while url and url[-1] in _LINK_TRAILING:
            tail = url[-1] + tail
            url = url[:-1]
        if not validation.url_ok(url) or url.startswith(base + "/l/"):
            return match.group(0)
        link = short_link_create(organization=organization, target_url=url,
                                 message_id=message_id, contact_id=contact_id,
                                 campaign_id=campaign_id)
        created.append(link.pk)
        return f"{base}/l/{link.code}{tail}"

    return _LINK.sub(replace, body), created
