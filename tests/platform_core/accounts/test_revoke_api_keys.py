"""GET /api/v1/auth/post-reset-revoke-api-keys: the 24-hour single-use link emailed after a
reset deactivates every key the person created, and the auth cache forgets them at once."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.utils import timezone
from rest_framework.test import APIClient

from platform_core.identity.models import APIKey

from .conftest import NEW_PASSWORD, add_member, assert_error, key_client, make_key

URL = "/api/v1/auth/post-reset-revoke-api-keys"


def reset_and_get_revoke_link(smtp, email: str = "dev@example.com") -> str:
    APIClient().post("/api/v1/auth/forgot-password", {"email": email}, format="json")
    token = smtp.wait_for(email)[-1].token("reset-password")
    response = APIClient().post("/api/v1/auth/reset-password",
                                {"token": token, "password": NEW_PASSWORD}, format="json")
    assert response.status_code == 200, response.content
    return smtp.wait_for(email, 2)[-1].link("post-reset-revoke-api-keys")


def follow(link: str, **headers):
    path = link.split("://", 1)[1].split("/", 1)[1]
    return APIClient().get("/" + path, **headers)


def test_link_revokes_every_key_the_user_created_effective_immediately(
    smtp, tenant, tenant_factory, member
):
    elsewhere = tenant_factory()
    add_member(elsewhere, "developer", email="dev@example.com")  # the same person, joining
    mine_here = make_key(tenant.org, created_by=member)
    mine_there = make_key(elsewhere.org, created_by=member)
    someone_elses = make_key(tenant.org, created_by=tenant.owner)
    link = reset_and_get_revoke_link(smtp)

    # Warm the authentication cache: the keys are served from it right before the click.
    for raw in (mine_here, mine_there, someone_elses):
        assert key_client(raw).get("/api/v1/organization").status_code == 200

    response = follow(link)
    assert response.status_code == 200, response.content
    assert response.json()["data"] == {"revoked_count": 2}

    # The very next request with either key is refused: the cache entry was dropped.
    assert_error(key_client(mine_here).get("/api/v1/organization"), 401, "INVALID_API_KEY")
    assert_error(key_client(mine_there).get("/api/v1/organization"), 401, "INVALID_API_KEY")
    assert key_client(someone_elses).get("/api/v1/organization").status_code == 200
    assert APIKey.objects.dangerously_unscoped().filter(
        created_by=member, revoked_at=None).count() == 0


def test_link_is_single_use(smtp, tenant, member):
    make_key(tenant.org, created_by=member)
    link = reset_and_get_revoke_link(smtp)
    assert follow(link).json()["data"] == {"revoked_count": 1}
    assert_error(follow(link), 400, "INVALID_REVOKE_TOKEN")


def test_link_expires_after_24_hours(smtp, tenant, member):
    raw = make_key(tenant.org, created_by=member)
    link = reset_and_get_revoke_link(smtp)
    with time_machine.travel(timezone.now() + timedelta(hours=24, minutes=1)):
        assert_error(follow(link), 400, "INVALID_REVOKE_TOKEN")
    assert key_client(raw).get("/api/v1/organization").status_code == 200
    with time_machine.travel(timezone.now() + timedelta(hours=23, minutes=59)):
        assert follow(link).json()["data"] == {"revoked_count": 1}


def test_no_keys_is_zero(smtp, member):
    assert follow(reset_and_get_revoke_link(smtp)).json()["data"] == {"revoked_count": 0}


def test_forged_missing_or_reset_tokens_are_refused(smtp, member):
    assert_error(APIClient().get(URL, {"token": "forged"}), 400, "INVALID_REVOKE_TOKEN")
    assert_error(APIClient().get(URL), 400, "INVALID_REVOKE_TOKEN")
    APIClient().post("/api/v1/auth/forgot-password", {"email": "dev@example.com"},
                     format="json")
    reset_token = smtp.wait_for("dev@example.com")[-1].token("reset-password")
    assert_error(APIClient().get(URL, {"token": reset_token}), 400, "INVALID_REVOKE_TOKEN")


def test_a_browser_gets_a_small_html_page(smtp, tenant, member):
    make_key(tenant.org, created_by=member)
    link = reset_and_get_revoke_link(smtp)
    accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    response = follow(link, HTTP_ACCEPT=accept)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert b'data-revoked-count="1"' in response.content
    again = follow(link, HTTP_ACCEPT=accept)
    assert again.status_code == 400
    assert again["Content-Type"].startswith("text/html")
    assert b'data-error-code="INVALID_REVOKE_TOKEN"' in again.content
