"""Verify profiles at /verify/profiles and the identical /verify/configs alias."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from .conftest import error_code

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("base", ["/api/v1/verify/profiles", "/api/v1/verify/configs"])
def test_crud(tenant, base):
    client = tenant.client()
    created = client.post(base, {"name": "Login", "channel": "email", "code_length": 4,
                                 "expiration_seconds": 300, "locale": "es-MX",
                                 "sender": "auth@acme.test",
                                 "template": "Code {code}"}, format="json")
    assert created.status_code == 201, created.content
    profile = created.json()["data"]
    assert profile["id"].startswith("vpf_")
    assert (profile["channel"], profile["code_length"], profile["expiration_seconds"],
            profile["locale"], profile["sender"], profile["template"]) == (
        "email", 4, 300, "es", "auth@acme.test", "Code {code}")
    assert client.get(f"{base}/{profile['id']}").json()["data"] == profile
    listed = client.get(base).json()["data"]
    assert [p["id"] for p in listed] == [profile["id"]]
    patched = client.patch(f"{base}/{profile['id']}", {"code_length": 7}, format="json")
    assert patched.status_code == 200
    assert patched.json()["data"]["code_length"] == 7
    assert client.delete(f"{base}/{profile['id']}").status_code == 204
    assert client.get(f"{base}/{profile['id']}").status_code == 404


def test_alias_sees_the_same_profiles(tenant):
    client = tenant.client()
    made = client.post("/api/v1/verify/configs", {"name": "A"}, format="json").json()["data"]
    assert client.get(f"/api/v1/verify/profiles/{made['id']}").json()["data"] == made
    assert (made["channel"], made["code_length"], made["max_attempts"],
            made["expiration_seconds"], made["locale"]) == ("sms", 6, 3, 600, "en")


@pytest.mark.parametrize("body", [
    {}, {"name": "x", "code_length": 3}, {"name": "x", "code_length": 9},
    {"name": "x", "max_attempts": 11}, {"name": "x", "channel": "totp"},
    {"name": "x", "expiration_seconds": 10}, {"name": "x", "locale": "zz"},
    {"name": "x", "template": "no placeholder"},
])
def test_invalid_profiles_are_422(tenant, body):
    response = tenant.client().post("/api/v1/verify/profiles", body, format="json")
    assert (response.status_code, error_code(response)) == (422, "VALIDATION_ERROR")


def test_list_query_count_is_constant(tenant):
    client = tenant.client()

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/api/v1/verify/profiles").status_code == 200
        return len(queries)

    client.post("/api/v1/verify/profiles", {"name": "one"}, format="json")
    few = count()
    for i in range(5):
        client.post("/api/v1/verify/profiles", {"name": f"p{i}"}, format="json")
    assert count() == few
