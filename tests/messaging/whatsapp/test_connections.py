"""Connect (embedded signup through the sandbox double), status, connections, default,
label and routing, unlink, disconnect, business profile under review."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from messaging.providers.models import ProviderAccount
from messaging.whatsapp.models import Connection
from platform_core.tenancy.context import tenant_context

from .conftest import WABA, client_with_role, code, connect, data

pytestmark = pytest.mark.django_db


def _account(tenant):
    with tenant_context(tenant.org):
        return ProviderAccount.objects.for_organization(tenant.org).filter(
            channel="whatsapp").first()


def test_connect_makes_a_connection_per_number_and_keeps_the_token_encrypted(tenant):
    rows = connect(tenant)
    assert len(rows) == 2
    assert [r["is_default"] for r in rows].count(True) == 1
    assert {r["waba_id"] for r in rows} == {WABA}
    assert all(r["phone_number_id"].isdigit() for r in rows)
    account = _account(tenant)
    assert account.credentials["access_token"].startswith("SBXTOKEN")
    # Encrypted at rest: the column never holds the token in clear.
    with connection.cursor() as cursor:
        cursor.execute("SELECT credentials_encrypted FROM providers_provideraccount "
                       "WHERE id = %s", [account.pk])
        stored = cursor.fetchone()[0]
    assert stored
    assert "SBXTOKEN" not in stored
    assert account.config["phone_number_id"] == next(
        r["phone_number_id"] for r in rows if r["is_default"])
    # Never answered by the API.
    status = data(tenant.client().get("/api/v1/whatsapp/status"))
    assert status["connected"] is True
    assert status["credentials_configured"] is True
    assert status["connection_count"] == 2
    assert "access_token" not in str(status)


def test_connect_is_repeatable_and_takes_the_named_default(tenant):
    first = connect(tenant)
    second_id = first[1]["phone_number_id"]
    rows = connect(tenant, phone_number_id=second_id)
    assert len(rows) == 2
    with tenant_context(tenant.org):
        assert Connection.objects.for_organization(tenant.org).count() == 2
        assert Connection.objects.for_organization(tenant.org).get(
            is_default=True).phone_number_id == second_id


def test_connect_refusals(tenant):
    client = tenant.client()
    bad = client.post("/api/v1/whatsapp/connect", {"code": "invalid-code", "waba_id": WABA},
                      format="json")
    assert bad.status_code == 422
    assert code(bad) == "WHATSAPP_REQUEST_REJECTED"
    assert bad.json()["error"]["details"]["provider_code"] == 100
    revoked = client.post("/api/v1/whatsapp/connect", {"code": "revoked-code",
                                                       "waba_id": WABA}, format="json")
    assert revoked.status_code == 409
    assert code(revoked) == "WHATSAPP_TOKEN_EXPIRED"
    missing = client.post("/api/v1/whatsapp/connect", {"waba_id": "x"}, format="json")
    assert missing.status_code == 422
    assert code(missing) == "VALIDATION_ERROR"
    fields = {i["field"] for i in missing.json()["error"]["details"]["issues"]}
    assert {"code", "waba_id"} <= fields
    foreign = client.post("/api/v1/whatsapp/connect", {"code": "c", "waba_id": WABA,
                                                       "phone_number_id": "42"}, format="json")
    assert foreign.status_code == 422
    assert not data(client.get("/api/v1/whatsapp/status"))["connected"]


def test_status_before_connecting(tenant):
    status = data(tenant.client().get("/api/v1/whatsapp/status"))
    assert status == {**status, "connected": False, "connection_count": 0,
                      "default_phone_number_id": None, "mode": "test"}


def test_list_default_patch(wa):
    client = wa.client()
    listed = data(client.get("/api/v1/whatsapp/connections"))
    assert {r["phone_number_id"] for r in listed} == set(wa.numbers)
    other = next(n for n in wa.numbers if n != wa.default)
    made = client.put(f"/api/v1/whatsapp/connections/{other}/default")
    assert made.status_code == 200
    assert data(made)["is_default"] is True
    listed = {r["phone_number_id"]: r["is_default"]
              for r in data(client.get("/api/v1/whatsapp/connections"))}
    assert listed == {other: True, wa.default: False}
    assert _account(wa).config["phone_number_id"] == other
    patched = client.patch(f"/api/v1/whatsapp/connections/{other}",
                           {"display_name": "Support line",
                            "routing": {"queue": "support", "agent_id": None}}, format="json")
    assert patched.status_code == 200
    assert data(patched)["display_name"] == "Support line"
    assert data(patched)["routing"] == {"queue": "support"}
    bad = client.patch(f"/api/v1/whatsapp/connections/{other}", {"routing": {"color": "red"}},
                       format="json")
    assert bad.status_code == 422
    assert bad.json()["error"]["details"]["issues"][0]["field"] == "routing"
    empty = client.patch(f"/api/v1/whatsapp/connections/{other}", {}, format="json")
    assert empty.status_code == 422
    assert client.put("/api/v1/whatsapp/connections/999/default").status_code == 404
    assert client.patch("/api/v1/whatsapp/connections/999", {"display_name": "x"},
                        format="json").status_code == 404


def test_unlink_moves_the_default_and_the_last_one_drops_the_credentials(wa):
    client = wa.client()
    assert client.delete(f"/api/v1/whatsapp/connections/{wa.default}").status_code == 204
    rest = data(client.get("/api/v1/whatsapp/connections"))
    assert len(rest) == 1
    assert rest[0]["is_default"] is True
    assert _account(wa) is not None
    assert client.delete(f"/api/v1/whatsapp/connections/{rest[0]['phone_number_id']}"
                         ).status_code == 204
    assert _account(wa) is None
    assert client.delete("/api/v1/whatsapp/connections/1").status_code == 404


def test_disconnect_removes_everything(wa):
    client = wa.client()
    assert client.delete("/api/v1/whatsapp/disconnect").status_code == 204
    assert data(client.get("/api/v1/whatsapp/connections")) == []
    assert _account(wa) is None
    again = client.delete("/api/v1/whatsapp/disconnect")
    assert again.status_code == 409
    assert code(again) == "WHATSAPP_NOT_CONNECTED"


def test_business_profile_update_goes_to_review(wa):
    client = wa.client()
    profile = data(client.get("/api/v1/whatsapp/business-profile"))
    assert profile["review_status"] == "approved"
    assert profile["about"] == ""
    assert profile["phone_number_id"] == wa.default
    put = client.put("/api/v1/whatsapp/business-profile",
                     {"about": "We sell bikes", "websites": ["https://bikes.example.com"],
                      "vertical": "RETAIL"}, format="json")
    assert put.status_code == 202
    body = data(put)
    assert body["review_status"] == "pending_review"
    assert body["pending"]["about"] == "We sell bikes"
    assert body["about"] == ""
    with time_machine.travel(timezone.now() + timedelta(seconds=61), tick=False):
        later = data(client.get("/api/v1/whatsapp/business-profile"))
    assert later["review_status"] == "approved"
    assert later["pending"] == {}
    assert later["about"] == "We sell bikes"
    assert later["vertical"] == "RETAIL"
    bad = client.put("/api/v1/whatsapp/business-profile", {"about": "x" * 140}, format="json")
    assert bad.status_code == 422
    assert bad.json()["error"]["details"]["issues"][0]["field"] == "about"
    nothing = client.put("/api/v1/whatsapp/business-profile", {}, format="json")
    assert nothing.status_code == 422


def test_profile_without_connection(tenant):
    response = tenant.client().get("/api/v1/whatsapp/business-profile")
    assert response.status_code == 409
    assert code(response) == "WHATSAPP_NOT_CONNECTED"


def test_viewer_reads_but_cannot_connect(tenant):
    viewer = client_with_role(tenant, "viewer")
    assert viewer.get("/api/v1/whatsapp/status").status_code == 200
    response = viewer.post("/api/v1/whatsapp/connect", {"code": "c", "waba_id": WABA},
                           format="json")
    assert response.status_code == 403
