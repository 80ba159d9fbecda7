"""Impersonation in the operator console: start with a reason, get a token and a link, end it."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from rest_framework.test import APIClient

from platform_core.accounts.models import ImpersonationGrant
from platform_core.accounts.services import token_digest
from platform_core.audit.models import AuditLogEntry
from platform_core.identity.models import User

from .conftest import assert_error, bearer

BASE = "/admin/accounts/impersonationgrant"
START = f"{BASE}/start/"
REASON = "Support ticket 88: webhook settings look wrong"


@pytest.fixture
def operator(db) -> User:
    return User.objects.create_superuser("operator@example.com", "Operator-Horse-4-battery")


@pytest.fixture
def console(operator) -> Client:
    client = Client()
    client.force_login(operator)
    return client


def start(console, tenant, email: str, reason: str = REASON):
    return console.post(START, {"organization": tenant.org.pk, "user_email": email,
                                "reason": reason})


def test_operator_starts_an_impersonation_and_gets_token_and_link(console, operator, tenant,
                                                                  member, settings):
    settings.PUBLIC_BASE_URL = "https://console.example.test"
    assert console.get(START).status_code == 200
    response = start(console, tenant, "DEV@example.com")
    assert response.status_code == 200, response.content
    html = response.content.decode()
    token = re.search(r'id="impersonation-token">([^<]+)<', html).group(1)
    link = re.search(r'id="impersonation-link" href="([^"]+)"', html).group(1)
    assert link == f"https://console.example.test{BASE}/launch/#token={token}"
    assert "no-store" in response["Cache-Control"]

    grant = ImpersonationGrant.objects.get()
    assert (grant.operator, grant.organization, grant.user) == (operator, tenant.org, member)
    assert grant.reason == REASON
    assert grant.token_hash == token_digest(token)
    entry = AuditLogEntry.objects.get(action="impersonation.granted")
    assert entry.actor_type == "operator"
    assert entry.actor_id == operator.pk
    assert entry.organization_id == tenant.org.pk
    assert entry.metadata["reason"] == REASON
    assert entry.metadata["expires_at"] == grant.expires_at.isoformat()

    # The token shown works once against the API.
    data = APIClient().post("/api/v1/auth/impersonate-exchange", {"token": token},
                            format="json").json()["data"]
    assert data["user"]["id"] == member.pk
    assert data["reason"] == REASON


def test_reason_is_required(console, tenant, member):
    response = start(console, tenant, "dev@example.com", reason="")
    assert response.status_code == 200
    assert "This field is required" in response.content.decode()
    response = start(console, tenant, "dev@example.com", reason="   ")
    assert response.status_code == 200
    assert ImpersonationGrant.objects.count() == 0


def test_user_must_be_a_member_of_the_organization(console, tenant, other_tenant, member):
    response = start(console, other_tenant, "dev@example.com")
    assert "No member of this organization has that email." in response.content.decode()
    response = start(console, tenant, "nobody@example.com")
    assert "No member of this organization has that email." in response.content.decode()
    assert ImpersonationGrant.objects.count() == 0


def test_operator_cannot_impersonate_themselves(console, operator, tenant):
    from platform_core.tenancy.models import Membership

    Membership.objects.for_organization(tenant.org).create(organization=tenant.org,
                                                           user=operator, role="admin")
    response = start(console, tenant, "operator@example.com")
    assert "You cannot impersonate yourself." in response.content.decode()
    assert ImpersonationGrant.objects.count() == 0


def test_add_button_leads_to_the_start_page(console):
    response = console.get(f"{BASE}/add/")
    assert response.status_code == 302
    assert response["Location"] == START
    listing = console.get(f"{BASE}/")
    assert listing.status_code == 200
    assert START in listing.content.decode()


def test_grant_page_ends_the_impersonation_and_its_session(console, operator, tenant, member):
    token = issue(console, tenant)
    grant = ImpersonationGrant.objects.get()
    session = bearer(APIClient().post("/api/v1/auth/impersonate-exchange", {"token": token},
                                      format="json").json()["data"]["session"]["token"])
    assert session.get("/api/v1/organization").status_code == 200

    html = console.get(f"{BASE}/{grant.pk}/change/").content.decode()
    assert 'id="end-impersonation"' in html
    assert 'name="_save"' not in html  # read-only: the page ends grants, it edits nothing
    assert REASON in html
    assert "in use" in html

    response = console.post(f"{BASE}/{grant.pk}/end/")
    assert response.status_code == 302
    grant.refresh_from_db()
    assert grant.ended_at is not None
    assert grant.ended_by == operator
    assert_error(session.get("/api/v1/organization"), 401, "EXPIRED_TOKEN")
    ended = AuditLogEntry.objects.get(action="impersonation.ended")
    assert ended.actor_id == operator.pk
    assert ended.target_id == grant.pk
    assert ended.organization_id == tenant.org.pk
    html = console.get(f"{BASE}/{grant.pk}/change/").content.decode()
    assert 'id="end-impersonation"' not in html
    assert console.get(f"{BASE}/{grant.pk}/end/").status_code == 405


def issue(console, tenant) -> str:
    html = start(console, tenant, "dev@example.com").content.decode()
    return re.search(r'id="impersonation-token">([^<]+)<', html).group(1)


def test_list_action_ends_selected_grants(console, tenant, member):
    tokens = [issue(console, tenant) for _ in range(2)]
    ids = list(ImpersonationGrant.objects.values_list("pk", flat=True))
    response = console.post(f"{BASE}/", {"action": "end_selected", "_selected_action": ids})
    assert response.status_code == 302
    assert ImpersonationGrant.objects.filter(ended_at=None).count() == 0
    for token in tokens:
        assert_error(APIClient().post("/api/v1/auth/impersonate-exchange", {"token": token},
                                      format="json"), 401, "INVALID_IMPERSONATION_TOKEN")


def test_grants_cannot_be_deleted(console, tenant, member):
    issue(console, tenant)
    grant = ImpersonationGrant.objects.get()
    assert console.get(f"{BASE}/{grant.pk}/delete/").status_code == 403


def test_launch_page_posts_the_token_then_goes_to_consume(console):
    response = console.get(f"{BASE}/launch/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "/api/v1/auth/impersonate-cookie-set" in html
    assert "/api/v1/auth/impersonate-cookie-consume" in html
    assert response["Referrer-Policy"] == "no-referrer"


@pytest.mark.parametrize("path", ["/", "start/", "launch/"])
def test_tenant_users_cannot_reach_the_pages(tenant, path):
    client = Client()
    client.force_login(tenant.owner)
    response = client.get(f"{BASE}/{path}".replace("//", "/"))
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_staff_without_the_permission_cannot_start(tenant, member):
    staff = User.objects.create_user("helpdesk@example.com", "Helpdesk-Horse-2-battery",
                                     is_staff=True)
    client = Client()
    client.force_login(staff)
    assert client.get(START).status_code == 403
    assert client.post(START, {"organization": tenant.org.pk, "user_email": "dev@example.com",
                               "reason": REASON}).status_code == 403
    assert ImpersonationGrant.objects.count() == 0
