"""POST /api/v1/auth/reset-password: the emailed link, followed to the end."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from rest_framework.test import APIClient

from platform_core.accounts.models import AccountToken, TokenPurpose
from platform_core.audit.models import AuditLogEntry

from .conftest import NEW_PASSWORD, PASSWORD, PUBLIC, assert_error, login

URL = "/api/v1/auth/reset-password"


def request_link(smtp, email: str = "dev@example.com", count: int = 1) -> str:
    assert APIClient().post("/api/v1/auth/forgot-password", {"email": email},
                            format="json").status_code == 200
    return smtp.wait_for(email, count)[-1].token("reset-password")


def reset(token: str, password: str = NEW_PASSWORD):
    return APIClient().post(URL, {"token": token, "password": password}, format="json",
                            HTTP_USER_AGENT="pytest-browser")


def test_reset_sets_the_password_and_signs_out_every_session(smtp, tenant, member):
    first = tenant.session_client(member, PASSWORD)
    second = tenant.session_client(member, PASSWORD)
    assert first.get("/api/v1/auth/sessions").status_code == 200
    owner = tenant.session_client()

    response = reset(request_link(smtp))
    assert response.status_code == 200, response.content
    assert response.json()["data"] == {"password_reset": True, "sessions_revoked": 2}

    for client in (first, second):
        assert_error(client.get("/api/v1/auth/sessions"), 401, "EXPIRED_TOKEN")
    assert owner.get("/api/v1/auth/sessions").status_code == 200  # someone else's: untouched
    assert_error(login("dev@example.com", PASSWORD), 401, "INVALID_CREDENTIALS")
    assert login("dev@example.com", NEW_PASSWORD).status_code == 200
    entry = AuditLogEntry.objects.get(action="password.reset")
    assert entry.actor_id == member.pk
    assert entry.metadata["sessions_revoked"] == 2


def test_reset_emails_the_offer_to_revoke_api_keys(smtp, member):
    reset(request_link(smtp))
    mails = smtp.wait_for("dev@example.com", 2)
    offer = mails[-1]
    assert offer.subject == "Your password was changed"
    link = offer.link("post-reset-revoke-api-keys")
    assert link.startswith(f"{PUBLIC}/api/v1/auth/post-reset-revoke-api-keys?token=")
    assert "Revoke all my API keys" in offer.html
    row = AccountToken.objects.get(purpose=TokenPurpose.REVOKE_API_KEYS)
    assert row.user == member
    assert 24 * 3600 - 10 <= (row.expires_at - row.created_at).total_seconds() <= 24 * 3600


def test_token_is_single_use(smtp, member):
    token = request_link(smtp)
    assert reset(token).status_code == 200
    body = assert_error(reset(token, "Another-Fresh-77-pass"), 400, "INVALID_RESET_TOKEN")
    assert "new one" in body["error"]["message"]
    assert login("dev@example.com", NEW_PASSWORD).status_code == 200


def test_a_successful_reset_burns_every_other_outstanding_link(smtp, member):
    older = request_link(smtp)
    newer = request_link(smtp, count=2)
    assert reset(newer).status_code == 200
    assert_error(reset(older, "Another-Fresh-77-pass"), 400, "INVALID_RESET_TOKEN")


def test_link_expires_after_one_hour(smtp, member):
    token = request_link(smtp)
    with time_machine.travel(timezone.now() + timedelta(minutes=61)):
        assert_error(reset(token), 400, "INVALID_RESET_TOKEN")
    with time_machine.travel(timezone.now() + timedelta(minutes=59)):
        assert reset(token).status_code == 200


@pytest.mark.parametrize("token", ["forged-token", "x" * 43, "a" * 500])
def test_forged_or_malformed_token_is_refused(db, token):
    response = reset(token)
    if len(token) > 200:
        assert_error(response, 422, "VALIDATION_ERROR")
    else:
        assert_error(response, 400, "INVALID_RESET_TOKEN")


def test_revoke_token_cannot_reset_a_password(smtp, member):
    reset(request_link(smtp))
    revoke_token = smtp.wait_for("dev@example.com", 2)[-1].token("post-reset-revoke-api-keys")
    assert_error(reset(revoke_token, "Another-Fresh-77-pass"), 400, "INVALID_RESET_TOKEN")


def test_deactivated_user_cannot_use_an_issued_link(smtp, member):
    token = request_link(smtp)
    member.is_active = False
    member.save()
    assert_error(reset(token), 400, "INVALID_RESET_TOKEN")


@pytest.mark.parametrize(
    ("password", "says"),
    [
        ("Sh0rt-pw", "too short"),
        ("password1234", "too common"),
        ("4829301756183", "entirely numeric"),
        ("dev@example.com1", "too similar"),
    ],
)
def test_password_policy_refuses_weak_passwords(smtp, member, password, says):
    token = request_link(smtp)
    response = reset(token, password)
    body = assert_error(response, 422, "VALIDATION_ERROR")
    issues = body["error"]["details"]["issues"]
    assert issues
    assert all(issue["field"] == "password" for issue in issues)
    assert any(says in issue["message"] for issue in issues), issues
    # The token survives a refused password: the person can try again with the same link.
    assert reset(token).status_code == 200
    assert login("dev@example.com", NEW_PASSWORD).status_code == 200


def test_missing_fields_are_validation_errors(db):
    body = assert_error(APIClient().post(URL, {}, format="json"), 422, "VALIDATION_ERROR")
    assert {i["field"] for i in body["error"]["details"]["issues"]} == {"token", "password"}


def test_reset_attempts_are_rate_limited_per_ip(db, settings):
    settings.ACCOUNT_TOKEN_RATE_LIMIT = (3, 60)
    client = APIClient()
    for _ in range(3):
        assert_error(client.post(URL, {"token": "nope", "password": NEW_PASSWORD},
                                 format="json"), 400, "INVALID_RESET_TOKEN")
    assert_error(client.post(URL, {"token": "nope", "password": NEW_PASSWORD}, format="json"),
                 429, "RATE_LIMITED")
