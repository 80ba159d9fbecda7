"""Login, sessions and logout (0-conventions.md section 2)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import time_machine
from django.conf import settings

from platform_core.identity.models import UserSession

from .conftest import PASSWORD, add_member, assert_error, bearer, login

ORG_URL = "/api/v1/organization"
SESSIONS = "/api/v1/auth/sessions"


def test_login_shape(tenant):
    response = login(tenant.owner.email, tenant.password)
    assert response.status_code == 200, response.content
    body = response.json()
    data = body["data"]
    assert set(data) == {"token", "expires_at", "session_id", "user", "organization"}
    assert data["token"].startswith("eyJ")
    assert data["session_id"].startswith("ses_")
    assert data["user"] == {
        "id": tenant.owner.pk,
        "email": tenant.owner.email,
        "name": tenant.owner.name,
    }
    assert data["organization"]["id"] == tenant.org.pk
    assert data["organization"]["slug"] == tenant.org.slug
    expires = datetime.fromisoformat(data["expires_at"].replace("Z", "+00:00"))
    expected = datetime.now(UTC) + timedelta(seconds=settings.SESSION_TOKEN_TTL_SECONDS)
    assert abs((expires - expected).total_seconds()) < 60
    assert body["meta"]["request_id"]
    assert body["meta"]["timestamp"]
    assert bearer(data["token"]).get(ORG_URL).status_code == 200


def test_email_is_case_insensitive(tenant):
    assert login(tenant.owner.email.upper(), tenant.password).status_code == 200


def test_wrong_password_and_unknown_email_answer_alike(tenant):
    wrong = assert_error(login(tenant.owner.email, "wrong-password"), 401, "INVALID_CREDENTIALS")
    unknown = assert_error(
        login("nobody@example.com", "wrong-password"), 401, "INVALID_CREDENTIALS"
    )
    assert wrong["error"]["message"] == unknown["error"]["message"]
    assert wrong["error"]["details"] == unknown["error"]["details"]


def test_inactive_user_cannot_login(tenant):
    tenant.owner.is_active = False
    tenant.owner.save()
    assert_error(login(tenant.owner.email, tenant.password), 401, "INVALID_CREDENTIALS")


def test_user_without_usable_password_cannot_login(tenant):
    user = add_member(tenant, "viewer", password=None)
    assert_error(login(user.email, ""), 422, "VALIDATION_ERROR")
    assert_error(login(user.email, "anything"), 401, "INVALID_CREDENTIALS")


def test_missing_fields_are_422(db):
    assert_error(login("", ""), 422, "VALIDATION_ERROR")


def test_organization_slug_chooses_membership(tenant, other_tenant):
    # The tenant's owner also joins the other organization, as a viewer.
    add_member(other_tenant, "viewer", email=tenant.owner.email)
    default = login(tenant.owner.email, tenant.password).json()["data"]
    assert default["organization"]["id"] == tenant.org.pk  # first membership

    chosen = login(tenant.owner.email, tenant.password, organization=other_tenant.org.slug)
    assert chosen.status_code == 200
    data = chosen.json()["data"]
    assert data["organization"]["id"] == other_tenant.org.pk
    client = bearer(data["token"])
    assert client.get(ORG_URL).json()["data"]["id"] == other_tenant.org.pk
    # There the same person is a viewer.
    assert_error(
        client.patch(ORG_URL, {"name": "x"}, format="json"), 403, "INSUFFICIENT_PERMISSIONS"
    )


def test_organization_the_user_is_not_in(tenant, other_tenant):
    response = login(tenant.owner.email, tenant.password, organization=other_tenant.org.slug)
    assert_error(response, 401, "INVALID_CREDENTIALS")
    response = login(tenant.owner.email, tenant.password, organization="no-such-org")
    assert_error(response, 401, "INVALID_CREDENTIALS")


def test_list_sessions_shows_only_callers(tenant):
    first = tenant.session_client()
    second = tenant.session_client()
    other_user = add_member(tenant, "admin")
    tenant.session_client(other_user, PASSWORD)

    response = first.get(SESSIONS)
    assert response.status_code == 200, response.content
    items = response.json()["data"]
    assert {i["id"] for i in items} == {first.session_id, second.session_id}
    current = [i for i in items if i["current"]]
    assert [i["id"] for i in current] == [first.session_id]
    assert "pagination" in response.json()["meta"]


def test_sessions_need_a_signed_in_user(tenant):
    assert_error(tenant.client().get(SESSIONS), 403, "INSUFFICIENT_PERMISSIONS")


def test_revoke_another_session(tenant):
    current = tenant.session_client()
    other = tenant.session_client()
    assert other.get(ORG_URL).status_code == 200  # cached
    response = current.delete(f"{SESSIONS}/{other.session_id}")
    assert response.status_code == 204
    assert_error(other.get(ORG_URL), 401, "EXPIRED_TOKEN")
    assert current.get(ORG_URL).status_code == 200


def test_cannot_revoke_current_session(tenant):
    current = tenant.session_client()
    response = current.delete(f"{SESSIONS}/{current.session_id}")
    assert_error(response, 400, "CANNOT_REVOKE_CURRENT_SESSION")
    assert current.get(ORG_URL).status_code == 200


def test_cannot_revoke_someone_elses_session(tenant):
    mine = tenant.session_client()
    theirs = tenant.session_client(add_member(tenant, "viewer"), PASSWORD)
    assert_error(mine.delete(f"{SESSIONS}/{theirs.session_id}"), 404, "NOT_FOUND")
    assert theirs.get(ORG_URL).status_code == 200


def test_logout_ends_current_session(tenant):
    client = tenant.session_client()
    other = tenant.session_client()
    assert client.get(ORG_URL).status_code == 200
    response = client.post("/api/v1/auth/logout")
    assert response.status_code == 204
    assert_error(client.get(ORG_URL), 401, "EXPIRED_TOKEN")
    assert other.get(ORG_URL).status_code == 200


def test_logout_with_api_key_is_refused(tenant):
    assert_error(tenant.client().post("/api/v1/auth/logout"), 403, "INSUFFICIENT_PERMISSIONS")


def test_expired_token(tenant):
    client = tenant.session_client()
    assert client.get(ORG_URL).status_code == 200
    with time_machine.travel(
        datetime.now(UTC) + timedelta(seconds=settings.SESSION_TOKEN_TTL_SECONDS + 5), tick=False
    ):
        assert_error(client.get(ORG_URL), 401, "EXPIRED_TOKEN")
    # Just before expiry it still works.
    with time_machine.travel(
        datetime.now(UTC) + timedelta(seconds=settings.SESSION_TOKEN_TTL_SECONDS - 120), tick=False
    ):
        assert client.get(ORG_URL).status_code == 200


def test_forged_token_is_unauthorized(tenant):
    import jwt

    client = tenant.session_client()
    token = client._credentials["HTTP_AUTHORIZATION"].split(" ", 1)[1]
    claims = jwt.decode(token, options={"verify_signature": False})
    forged = jwt.encode(claims, "not-the-secret-" * 4, algorithm="HS256")
    assert_error(bearer(forged).get(ORG_URL), 401, "UNAUTHORIZED")
    none_alg = jwt.encode(claims, None, algorithm="none")
    assert_error(bearer(none_alg).get(ORG_URL), 401, "UNAUTHORIZED")


def test_session_records_ip_and_user_agent(tenant):
    response = login(
        tenant.owner.email,
        tenant.password,
        REMOTE_ADDR="198.51.100.9",
        HTTP_USER_AGENT="pytest-agent",
    )
    session = UserSession.objects.for_organization(tenant.org).get(
        pk=response.json()["data"]["session_id"]
    )
    assert session.ip_address == "198.51.100.9"
    assert session.user_agent == "pytest-agent"


def test_password_change_elsewhere_does_not_break_cache_consistency(tenant):
    client = tenant.session_client()
    assert client.get(ORG_URL).status_code == 200
    tenant.owner.is_active = False
    tenant.owner.save()
    assert_error(client.get(ORG_URL), 401, "EXPIRED_TOKEN")


def test_login_is_rate_limited_per_ip(tenant, settings):
    settings.LOGIN_LOCKOUT_ATTEMPTS = 100  # the per-IP limit alone (the lockout: below)
    for _ in range(20):
        assert login(tenant.owner.email, "wrong", REMOTE_ADDR="203.0.113.50").status_code == 401
    response = login(tenant.owner.email, tenant.password, REMOTE_ADDR="203.0.113.50")
    body = assert_error(response, 429, "RATE_LIMITED")
    assert int(response["Retry-After"]) >= 1
    assert body["error"]["details"]["retry_after_seconds"] >= 1
    # Another address is not affected.
    assert login(tenant.owner.email, tenant.password, REMOTE_ADDR="203.0.113.51").status_code == 200
    # The window passes.
    with time_machine.travel(datetime.now(UTC) + timedelta(seconds=61), tick=False):
        response = login(tenant.owner.email, tenant.password, REMOTE_ADDR="203.0.113.50")
        assert response.status_code == 200


def test_revoked_sessions_are_not_listed(tenant):
    current = tenant.session_client()
    other = tenant.session_client()
    current.delete(f"{SESSIONS}/{other.session_id}")
    ids = {i["id"] for i in current.get(SESSIONS).json()["data"]}
    assert ids == {current.session_id}
    assert_error(current.delete(f"{SESSIONS}/{other.session_id}"), 404, "NOT_FOUND")


def test_sessions_are_listed_per_organization(tenant, other_tenant):
    add_member(other_tenant, "viewer", email=tenant.owner.email, password=tenant.password)
    here = tenant.session_client()
    there_login = login(tenant.owner.email, tenant.password, organization=other_tenant.org.slug)
    there_id = there_login.json()["data"]["session_id"]
    assert {i["id"] for i in here.get(SESSIONS).json()["data"]} == {here.session_id}
    # A session in another organization is out of reach, like an unknown id.
    assert_error(here.delete(f"{SESSIONS}/{there_id}"), 404, "NOT_FOUND")
    assert bearer(there_login.json()["data"]["token"]).get(ORG_URL).status_code == 200


def test_revoking_a_session_is_audit_logged(tenant):
    from platform_core.audit.models import AuditLogEntry

    first, second = tenant.session_client(), tenant.session_client()
    assert first.delete(f"/api/v1/auth/sessions/{second.session_id}").status_code == 204
    entry = AuditLogEntry.objects.get(action="session.revoked", target_id=second.session_id)
    assert (entry.actor_type, entry.actor_id) == ("user", tenant.owner.pk)
