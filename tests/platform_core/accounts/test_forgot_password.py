"""POST /api/v1/auth/forgot-password: no enumeration, per-IP and per-email limits, a
single-use one-hour link emailed (through a real SMTP server) only to an account."""

from __future__ import annotations

from unittest import mock

import pytest
from rest_framework.test import APIClient

from platform_core.accounts.models import AccountToken, TokenPurpose
from platform_core.accounts.services import token_digest

from .conftest import PUBLIC, assert_error

URL = "/api/v1/auth/forgot-password"


def forgot(email: str, ip: str = "198.51.100.7"):
    return APIClient().post(URL, {"email": email}, format="json", REMOTE_ADDR=ip)


def test_known_address_gets_a_reset_link_by_email(smtp, member):
    response = forgot("Dev@Example.com")
    assert response.status_code == 200, response.content
    [mail] = smtp.wait_for("dev@example.com")
    assert mail.subject == "Reset your password"
    link = mail.link("reset-password")
    assert link.startswith(f"{PUBLIC}/dashboard/reset-password?token=")
    assert "<a href=" in mail.html  # templated HTML alternative next to the text body
    assert "60 minutes" in mail.text
    raw = mail.token("reset-password")
    row = AccountToken.objects.get(user=member)
    assert row.purpose == TokenPurpose.PASSWORD_RESET
    assert row.token_hash == token_digest(raw)  # stored hashed, never in clear
    assert not AccountToken.objects.filter(token_hash=raw).exists()
    assert 3590 <= (row.expires_at - row.created_at).total_seconds() <= 3600
    assert row.requested_ip == "198.51.100.7"


def test_unknown_address_gets_the_same_answer_and_no_email(smtp, member):
    known = forgot("dev@example.com").json()
    unknown = forgot("nobody@example.com").json()
    assert known["data"] == unknown["data"]
    assert set(known) == set(unknown) == {"data", "meta"}
    smtp.wait_for("dev@example.com")
    assert smtp.to("nobody@example.com") == []
    assert AccountToken.objects.count() == 1


def test_the_request_does_the_same_work_for_known_and_unknown_addresses(
    member, django_assert_num_queries
):
    """The lookup, hashing and mail all happen in the worker: the HTTP request touches no
    table and hands the worker the address either way, so its timing cannot tell them apart."""
    with mock.patch("platform_core.accounts.api.views.send_password_reset.delay") as delay:
        with django_assert_num_queries(0):
            first = forgot("dev@example.com")
        with django_assert_num_queries(0):
            second = forgot("nobody@example.com")
    assert first.status_code == second.status_code == 200
    assert [c.args for c in delay.call_args_list] == [
        ("dev@example.com", "198.51.100.7"), ("nobody@example.com", "198.51.100.7")
    ]


def test_inactive_account_gets_no_email(smtp, member):
    member.is_active = False
    member.save()
    assert forgot("dev@example.com").status_code == 200
    assert AccountToken.objects.count() == 0
    assert smtp.to("dev@example.com") == []


def test_rate_limited_per_email_address_across_addresses(member):
    with mock.patch("platform_core.accounts.api.views.send_password_reset.delay"):
        for n in range(5):
            assert forgot("dev@example.com", ip=f"203.0.113.{n}").status_code == 200
        body = assert_error(forgot("DEV@example.com", ip="203.0.113.99"), 429, "RATE_LIMITED")
        assert body["error"]["details"]["limit"] == "forgot_password_email"
        # Another address from the same client is still served.
        assert forgot("other@example.com", ip="203.0.113.99").status_code == 200


def test_rate_limited_per_ip_address(db):
    with mock.patch("platform_core.accounts.api.views.send_password_reset.delay") as delay:
        for n in range(20):
            assert forgot(f"user{n}@example.com", ip="192.0.2.1").status_code == 200
        response = forgot("user99@example.com", ip="192.0.2.1")
        body = assert_error(response, 429, "RATE_LIMITED")
        assert body["error"]["details"]["limit"] == "forgot_password_ip"
        assert int(response["Retry-After"]) >= 1
        assert forgot("user99@example.com", ip="192.0.2.2").status_code == 200
    assert delay.call_count == 21


def test_unknown_addresses_are_limited_exactly_like_known_ones(member):
    with mock.patch("platform_core.accounts.api.views.send_password_reset.delay"):
        answers = [forgot("ghost@example.com", ip=f"203.0.113.{n}").status_code
                   for n in range(6)]
    assert answers == [200] * 5 + [429]


@pytest.mark.parametrize("body", [{}, {"email": "not-an-email"}, {"email": ""}])
def test_malformed_address_is_a_validation_error(db, body):
    response = APIClient().post(URL, body, format="json")
    body = assert_error(response, 422, "VALIDATION_ERROR")
    assert body["error"]["details"]["issues"][0]["field"] == "email"
