"""TOTP factors: create (URI and secret once, encrypted at rest), verify with a ±1 step
window and replay protection, list, delete; verify:write; API keys only."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, unquote, urlsplit

import pyotp
import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context

from .conftest import error_code

pytestmark = pytest.mark.django_db

BASE = "/api/v1/verify/factors/totp"


@pytest.fixture
def factor(tenant):
    response = tenant.client().post(BASE, {"identity": "user-42", "friendly_name": "alice"},
                                    format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def _code(secret: str, offset_steps: int = 0) -> str:
    return pyotp.TOTP(secret).at(timezone.now() + timedelta(seconds=30 * offset_steps))


def test_create_returns_the_uri_and_secret_once(tenant, factor):
    assert factor["id"].startswith("vft_")
    assert (factor["identity"], factor["status"], factor["factor_type"]) == (
        "user-42", "unverified", "totp")
    uri = urlsplit(factor["uri"])
    assert factor["uri"].startswith("otpauth://totp/")
    assert factor["otpauth_uri"] == factor["uri"]
    query = parse_qs(uri.query)
    assert query["secret"] == [factor["secret"]]
    assert query["issuer"] == [tenant.org.name]
    assert unquote(uri.path).endswith("alice")
    # Never again: not on the list, not stored in clear.
    listed = tenant.client().get(BASE).json()["data"]
    assert [f["id"] for f in listed] == [factor["id"]]
    assert "secret" not in listed[0]
    assert "uri" not in listed[0]
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM verify_totpfactor WHERE id = %s", [factor["id"]])
        (stored,) = cursor.fetchone()
    assert factor["secret"] not in stored


def test_verify_current_and_adjacent_steps(tenant, factor):
    client = tenant.client()
    url = f"{BASE}/{factor['id']}/verify"
    response = client.post(url, {"code": _code(factor["secret"], -1)}, format="json")
    assert response.status_code == 200, response.content
    assert (response.json()["data"]["valid"], response.json()["data"]["status"]) == (
        True, "verified")
    assert client.post(url, {"code": _code(factor["secret"], +1)},
                       format="json").json()["data"]["valid"] is True
    far = client.post(url, {"code": _code(factor["secret"], +3)}, format="json")
    assert far.json()["data"]["valid"] is False


def test_replayed_code_is_refused(tenant, factor):
    url = f"{BASE}/{factor['id']}/verify"
    code = _code(factor["secret"])
    assert tenant.client().post(url, {"code": code}, format="json").json()["data"]["valid"]
    replay = tenant.client().post(url, {"code": code}, format="json")
    assert (replay.status_code, error_code(replay)) == (409, "TOTP_CODE_REPLAYED")
    earlier = tenant.client().post(url, {"code": _code(factor["secret"], -1)}, format="json")
    assert error_code(earlier) == "TOTP_CODE_REPLAYED"
    with time_machine.travel(timezone.now() + timedelta(seconds=60)):
        fresh = tenant.client().post(url, {"code": _code(factor["secret"])}, format="json")
        assert fresh.json()["data"]["valid"] is True


def test_malformed_codes_are_422_and_checks_are_rate_limited(tenant, factor):
    url = f"{BASE}/{factor['id']}/verify"
    for code in ("12345", "1234567", "abcdef"):
        response = tenant.client().post(url, {"code": code}, format="json")
        assert (response.status_code, error_code(response)) == (422, "VALIDATION_ERROR")
    for _ in range(7):
        tenant.client().post(url, {"code": "000000"}, format="json")
    limited = tenant.client().post(url, {"code": "000000"}, format="json")
    assert (limited.status_code, error_code(limited)) == (429, "RATE_LIMITED")


def test_delete_and_events(tenant, factor):
    assert tenant.client().delete(f"{BASE}/{factor['id']}").status_code == 204
    assert tenant.client().post(f"{BASE}/{factor['id']}/verify", {"code": "123456"},
                                format="json").status_code == 404
    with tenant_context(tenant.org):
        types = list(Event.objects.filter(type__startswith="factor.")
                     .order_by("created_at", "id").values_list("type", flat=True))
    assert types == ["factor.created", "factor.deleted"]


def test_factors_are_api_only(tenant, factor):
    session = tenant.session_client()
    for call in (lambda: session.get(BASE),
                 lambda: session.post(BASE, {"identity": "x"}, format="json"),
                 lambda: session.delete(f"{BASE}/{factor['id']}")):
        response = call()
        assert (response.status_code, error_code(response)) == (403, "API_KEY_REQUIRED")


def test_factors_need_verify_write(tenant):
    raw = tenant.client().post("/api/v1/api-keys", {
        "name": "r", "type": "secret", "scopes": ["verify:read"]},
        format="json").json()["data"]["key"]
    for response in (tenant.client(raw).get(BASE),
                     tenant.client(raw).post(BASE, {"identity": "x"}, format="json")):
        assert (response.status_code, error_code(response)) == (403,
                                                                 "INSUFFICIENT_PERMISSIONS")


def test_create_needs_an_identity(tenant):
    response = tenant.client().post(BASE, {}, format="json")
    assert (response.status_code, error_code(response)) == (422, "VALIDATION_ERROR")
