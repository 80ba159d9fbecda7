"""The impersonation routes of Document 1, 4.1: exchange, cookie-set and cookie-consume.
Expired, ended, replayed and forged tokens all answer the same 401."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from rest_framework.test import APIClient

from platform_core.accounts import services
from platform_core.accounts.models import ImpersonationGrant
from platform_core.audit.models import AuditLogEntry
from platform_core.identity.models import User, UserSession

from .conftest import assert_error, bearer, without_volatile

EXCHANGE = "/api/v1/auth/impersonate-exchange"
COOKIE_SET = "/api/v1/auth/impersonate-cookie-set"
CONSUME = "/api/v1/auth/impersonate-cookie-consume"
REASON = "Ticket #4711: customer cannot see their invoices"


@pytest.fixture
def operator(db) -> User:
    return User.objects.create_superuser("operator@example.com", "Operator-Horse-4-battery")


def grant_for(operator, tenant, member, reason: str = REASON):
    return services.impersonation_grant_create(operator=operator, organization=tenant.org,
                                               user=member, reason=reason)


def exchange(token: str):
    return APIClient().post(EXCHANGE, {"token": token}, format="json",
                            HTTP_USER_AGENT="operator-browser")


# --- exchange ------------------------------------------------------------------------------


def test_exchange_returns_the_grant_and_an_impersonated_session(operator, tenant, member):
    grant, raw = grant_for(operator, tenant, member)
    response = exchange(raw)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["grant_id"] == grant.pk
    assert data["operator"] == {"id": operator.pk, "email": "operator@example.com"}
    assert data["organization"] == {"id": tenant.org.pk, "slug": tenant.org.slug,
                                    "name": tenant.org.name}
    assert data["user"]["id"] == member.pk
    assert data["reason"] == REASON
    assert data["expires_at"].startswith(grant.expires_at.strftime("%Y-%m-%dT%H:%M"))

    session = bearer(data["session"]["token"])
    org = session.get("/api/v1/organization")
    assert org.status_code == 200
    assert org.json()["data"]["name"] == tenant.org.name
    # The session is the member's, with the operator recorded as impersonator.
    row = UserSession.objects.dangerously_unscoped().get(pk=data["session"]["session_id"])
    assert row.user == member
    assert (row.expires_at - timezone.now()).total_seconds() <= 3600
    assert AuditLogEntry.objects.get(action="session.created", target_id=row.pk).metadata == {
        "impersonator_id": operator.pk}


def test_changes_made_while_impersonating_name_the_operator(operator, tenant):
    grant, raw = grant_for(operator, tenant, tenant.owner)
    client = bearer(exchange(raw).json()["data"]["session"]["token"])
    assert client.patch("/api/v1/organization", {"name": "Renamed"}, format="json").status_code \
        == 200
    entry = AuditLogEntry.objects.get(action="organization.updated")
    assert entry.actor_id == tenant.owner.pk
    assert entry.metadata["impersonator_id"] == operator.pk


def test_every_exchange_is_audit_logged(operator, tenant, member):
    grant, raw = grant_for(operator, tenant, member)
    created = AuditLogEntry.objects.get(action="impersonation.granted")
    assert created.organization_id == tenant.org.pk
    assert created.actor_type == "operator"
    assert created.actor_id == operator.pk
    assert created.metadata["reason"] == REASON
    assert created.metadata["operator_email"] == "operator@example.com"
    assert created.metadata["expires_at"] == grant.expires_at.isoformat()
    exchange(raw)
    entry = AuditLogEntry.objects.get(action="impersonation.exchanged")
    assert entry.organization_id == tenant.org.pk
    assert entry.actor_id == operator.pk
    assert entry.target_id == grant.pk
    assert entry.metadata["reason"] == REASON
    assert entry.metadata["via"] == "exchange"
    assert entry.user_agent == "operator-browser"


def test_token_lives_ten_minutes(operator, tenant, member):
    grant, _raw = grant_for(operator, tenant, member)
    assert 590 <= (grant.expires_at - grant.created_at).total_seconds() <= 600


def test_impersonated_session_cannot_give_consent(operator, tenant, member):
    _grant, raw = grant_for(operator, tenant, member)
    client = bearer(exchange(raw).json()["data"]["session"]["token"])
    assert_error(client.post("/api/v1/auth/consent",
                             {"terms_version": "1", "privacy_version": "1"}, format="json"),
                 403, "INSUFFICIENT_PERMISSIONS")


# --- the same 401 for every bad token -------------------------------------------------------


def _replayed(operator, tenant, member) -> str:
    _grant, raw = grant_for(operator, tenant, member)
    assert exchange(raw).status_code == 200
    return raw


def _expired(operator, tenant, member) -> str:
    grant, raw = grant_for(operator, tenant, member)
    ImpersonationGrant.objects.filter(pk=grant.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    return raw


def _ended(operator, tenant, member) -> str:
    grant, raw = grant_for(operator, tenant, member)
    services.impersonation_end(grant=grant, operator=operator)
    return raw


def _forged(operator, tenant, member) -> str:
    grant_for(operator, tenant, member)
    return "imp_" + "A" * 43


def _removed_member(operator, tenant, member) -> str:
    from platform_core.tenancy.models import Membership

    _grant, raw = grant_for(operator, tenant, member)
    Membership.objects.for_organization(tenant.org).filter(user=member).delete()
    return raw


BAD_TOKENS = [_replayed, _expired, _ended, _forged, _removed_member]


def _reference_body(db_unused=None) -> dict:
    return without_volatile(exchange("imp_never-issued").json())


@pytest.mark.parametrize("make", BAD_TOKENS, ids=lambda f: f.__name__.strip("_"))
def test_bad_tokens_all_get_the_same_401_on_every_route(make, operator, tenant, member):
    raw = make(operator, tenant, member)
    reference = _reference_body()
    assert reference["error"]["code"] == "INVALID_IMPERSONATION_TOKEN"

    response = exchange(raw)
    assert_error(response, 401, "INVALID_IMPERSONATION_TOKEN")
    assert without_volatile(response.json()) == reference
    assert response["WWW-Authenticate"] == 'Bearer realm="impersonation"'

    response = APIClient().post(COOKIE_SET, {"token": raw}, format="json")
    assert_error(response, 401, "INVALID_IMPERSONATION_TOKEN")
    assert without_volatile(response.json()) == reference
    assert "impersonation_token" not in response.cookies

    client = APIClient()
    client.cookies["impersonation_token"] = raw
    response = client.get(CONSUME)
    assert_error(response, 401, "INVALID_IMPERSONATION_TOKEN")
    assert without_volatile(response.json()) == reference
    assert response["WWW-Authenticate"] == 'Bearer realm="impersonation"'


def test_expired_by_the_clock(operator, tenant, member):
    _grant, raw = grant_for(operator, tenant, member)
    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        assert_error(exchange(raw), 401, "INVALID_IMPERSONATION_TOKEN")


@pytest.mark.parametrize("body", [{}, {"token": ""}, {"token": "x" * 500}, {"token": ["a"]}])
def test_malformed_bodies_are_refused_like_bad_tokens(db, body):
    response = APIClient().post(EXCHANGE, body, format="json")
    assert_error(response, 401, "INVALID_IMPERSONATION_TOKEN")
    assert without_volatile(response.json()) == _reference_body()


def test_refused_known_tokens_are_audited(operator, tenant, member):
    raw = _replayed(operator, tenant, member)
    exchange(raw)
    entry = AuditLogEntry.objects.get(action="impersonation.refused")
    assert entry.metadata == {"why": "replayed", "via": "exchange"}


def test_ending_a_used_grant_signs_its_session_out(operator, tenant, member):
    grant, raw = grant_for(operator, tenant, member)
    client = bearer(exchange(raw).json()["data"]["session"]["token"])
    assert client.get("/api/v1/organization").status_code == 200
    assert services.impersonation_end(grant=grant, operator=operator) is True
    assert_error(client.get("/api/v1/organization"), 401, "EXPIRED_TOKEN")
    assert services.impersonation_end(grant=grant, operator=operator) is False
    assert AuditLogEntry.objects.filter(action="impersonation.ended").count() == 1


def test_exchange_is_rate_limited_per_ip(db, settings):
    settings.ACCOUNT_TOKEN_RATE_LIMIT = (2, 60)
    exchange("imp_a")
    exchange("imp_b")
    assert_error(exchange("imp_c"), 429, "RATE_LIMITED")


# --- cookie-set and cookie-consume ------------------------------------------------------------


def test_cookie_set_stores_the_token_in_a_strict_five_minute_cookie(operator, tenant, member):
    grant, raw = grant_for(operator, tenant, member)
    response = APIClient().post(COOKIE_SET, {"token": raw}, format="json")
    assert response.status_code == 204
    assert response.content == b""
    cookie = response.cookies["impersonation_token"]
    assert cookie.value == raw
    assert cookie["max-age"] == 300
    assert cookie["httponly"] is True
    assert cookie["secure"] is True
    assert cookie["samesite"] == "Strict"
    assert cookie["path"] == "/api/v1/auth/"
    grant.refresh_from_db()
    assert grant.consumed_at is None  # set only verifies; consume uses it


def test_consume_redirects_into_the_dashboard_once(operator, tenant, member, settings):
    settings.PUBLIC_BASE_URL = "https://app.example.test"
    grant, raw = grant_for(operator, tenant, member)
    client = APIClient()
    assert client.post(COOKIE_SET, {"token": raw}, format="json").status_code == 204

    response = client.get(CONSUME)
    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith("https://app.example.test/dashboard/#session=")
    cleared = response.cookies["impersonation_token"]
    assert cleared.value == ""
    assert cleared["max-age"] == 0
    assert cleared["secure"] is True
    assert cleared["samesite"] == "Strict"
    assert cleared["path"] == "/api/v1/auth/"
    session_token = location.split("#session=", 1)[1]
    org = bearer(session_token).get("/api/v1/organization")
    assert org.status_code == 200
    assert org.json()["data"]["id"] == tenant.org.pk
    grant.refresh_from_db()
    assert grant.consumed_via == "cookie"
    assert grant.session_id
    assert AuditLogEntry.objects.get(action="impersonation.exchanged").metadata["via"] == "cookie"

    # A second visit: the cookie is gone...
    assert_error(client.get(CONSUME), 401, "INVALID_IMPERSONATION_TOKEN")
    # ...and even a saved copy of it is refused, as is the token itself.
    replay = APIClient()
    replay.cookies["impersonation_token"] = raw
    assert_error(replay.get(CONSUME), 401, "INVALID_IMPERSONATION_TOKEN")
    assert_error(exchange(raw), 401, "INVALID_IMPERSONATION_TOKEN")


def test_consume_refuses_a_grant_ended_after_the_cookie_was_set(operator, tenant, member):
    grant, raw = grant_for(operator, tenant, member)
    client = APIClient()
    client.post(COOKIE_SET, {"token": raw}, format="json")
    services.impersonation_end(grant=grant, operator=operator)
    response = client.get(CONSUME)
    assert_error(response, 401, "INVALID_IMPERSONATION_TOKEN")
    assert response.cookies["impersonation_token"]["max-age"] == 0


def test_consume_without_a_cookie_is_refused(db):
    assert_error(APIClient().get(CONSUME), 401, "INVALID_IMPERSONATION_TOKEN")


def test_exchanged_token_cannot_then_go_through_the_cookie_pair(operator, tenant, member):
    _grant, raw = grant_for(operator, tenant, member)
    assert exchange(raw).status_code == 200
    assert_error(APIClient().post(COOKIE_SET, {"token": raw}, format="json"), 401,
                 "INVALID_IMPERSONATION_TOKEN")


def test_grant_needs_a_reason_a_member_and_a_staff_operator(operator, tenant, member,
                                                            other_tenant):
    from platform_core.errors import APIError

    with pytest.raises(APIError) as exc:
        services.impersonation_grant_create(operator=operator, organization=tenant.org,
                                            user=member, reason="   ")
    assert exc.value.details["issues"][0]["field"] == "reason"
    with pytest.raises(APIError) as exc:
        services.impersonation_grant_create(operator=operator, organization=other_tenant.org,
                                            user=member, reason=REASON)
    assert exc.value.details["issues"][0]["field"] == "user"
    with pytest.raises(APIError) as exc:
        services.impersonation_grant_create(operator=tenant.owner, organization=tenant.org,
                                            user=member, reason=REASON)
    assert exc.value.code == "INSUFFICIENT_PERMISSIONS"
    assert ImpersonationGrant.objects.count() == 0


def test_concurrent_exchanges_of_one_token_start_one_session(transactional_db, tenant_factory):
    """Two requests racing with the same token: the row lock lets exactly one through."""
    import threading

    from django.db import connection

    from .conftest import add_member

    tenant = tenant_factory()
    member = add_member(tenant, "developer", email="racer@example.com")
    operator = User.objects.create_superuser("racer-op@example.com", "Operator-Horse-4-battery")
    _grant, raw = grant_for(operator, tenant, member)
    barrier = threading.Barrier(4)
    statuses: list[int] = []

    def attempt():
        try:
            barrier.wait()
            statuses.append(exchange(raw).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200, 401, 401, 401]
    assert UserSession.objects.dangerously_unscoped().filter(user=member).count() == 1
