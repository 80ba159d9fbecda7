"""shorten_links: links of the body become tracked short links `/l/<code>` that answer 302
and record the click (0-conventions.md section 6)."""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from messaging.links.models import LinkClick, ShortLink
from platform_core.tenancy.context import tenant_context

from .conftest import USER

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.messaging.link_urls")]

SHORT = re.compile(re.escape(settings.PUBLIC_BASE_URL) + r"/l/([A-Za-z0-9_\-]+)")


def test_links_are_rewritten_and_followed(tenant, send, anon):
    body = ("Track it: https://shop.example.com/o/17?ref=sms. Questions? "
            "http://help.example.com/faq (or reply).")
    data = send({"channel": "sms", "to": USER, "body": body, "shorten_links": True}).json()[
        "data"]
    codes = SHORT.findall(data["body"])
    assert len(codes) == 2
    assert "shop.example.com" not in data["body"]
    # Punctuation after a link stays outside it.
    assert re.search(r"/l/[A-Za-z0-9_\-]+\. Questions\?", data["body"])
    assert re.search(r"/l/[A-Za-z0-9_\-]+ \(or reply\)\.", data["body"])
    with tenant_context(tenant.org):
        links = {link.code: link for link in ShortLink.objects.all()}
    assert links[codes[0]].target_url == "https://shop.example.com/o/17?ref=sms"
    assert links[codes[1]].target_url == "http://help.example.com/faq"
    assert links[codes[0]].message_id == data["id"]

    response = anon.get(f"/l/{codes[0]}", HTTP_USER_AGENT="Mozilla/5.0 (Phone)")
    assert response.status_code == 302
    assert response["Location"] == "https://shop.example.com/o/17?ref=sms"
    with tenant_context(tenant.org):
        click = LinkClick.objects.get()
    assert click.message_id == data["id"]
    assert click.user_agent == "Mozilla/5.0 (Phone)"


def test_unknown_code_is_404(anon):
    response = anon.get("/l/nope")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_links_are_kept_without_shorten_links(send):
    body = "See https://shop.example.com/o/17"
    data = send({"channel": "sms", "to": USER, "body": body}).json()["data"]
    assert data["body"] == body
    assert data["shorten_links"] is False
