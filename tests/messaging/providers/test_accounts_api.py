"""Provider accounts over HTTP: create or replace per channel, write-only encrypted secrets."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from messaging.providers.models import ProviderAccount
from platform_core import crypto
from platform_core.audit.models import AuditLogEntry
from platform_core.identity import services as identity
from platform_core.identity.models import KeyType
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context

from . import fakes
from .conftest import rcs_body, twilio_body, whatsapp_body

pytestmark = pytest.mark.django_db

SECRETS = (fakes.TWILIO_TOKEN, fakes.WA_TOKEN, fakes.RCS_TOKEN)


def _no_secret_in(response) -> None:
    text = response.content.decode()
    for secret in SECRETS:
        assert secret not in text
    assert '"credentials"' not in text


def test_put_creates_then_replaces_and_never_returns_credentials(tenant, fake):
    client = tenant.client()
    created = client.put("/api/v1/providers/sms", twilio_body(fake), format="json")
    assert created.status_code == 201, created.content
    data = created.json()["data"]
    assert data["id"].startswith("pac_")
    assert data["channel"] == "sms"
    assert data["provider"] == "twilio"
    assert data["credentials_configured"] is True
    assert data["config"]["account_sid"] == fakes.TWILIO_SID
    assert data["base_url"] == fake.url
    assert data["enabled"] is True
    _no_secret_in(created)

    # Replace: new config, credentials omitted (kept), disabled.
    body = twilio_body(fake, **{"from": "+15558889999"})
    del body["credentials"]
    body["enabled"] = False
    replaced = client.put("/api/v1/providers/sms", body, format="json")
    assert replaced.status_code == 200, replaced.content
    assert replaced.json()["data"]["id"] == data["id"]
    assert replaced.json()["data"]["config"]["from"] == "+15558889999"
    assert replaced.json()["data"]["enabled"] is False
    with tenant_context(tenant.org):
        row = ProviderAccount.objects.get(pk=data["id"])
    assert row.credentials == {"auth_token": fakes.TWILIO_TOKEN}

    for url in ("/api/v1/providers", "/api/v1/providers/sms", f"/api/v1/providers/{data['id']}"):
        response = client.get(url)
        assert response.status_code == 200, response.content
        _no_secret_in(response)
    listed = client.get("/api/v1/providers").json()["data"]
    assert [a["id"] for a in listed] == [data["id"]]
    assert client.get(f"/api/v1/providers/{data['id']}").json()["data"]["channel"] == "sms"


def test_credentials_are_encrypted_in_the_database_column(tenant, fake, put_account):
    account = put_account(tenant, "whatsapp", whatsapp_body(fake))
    with connection.cursor() as cursor:
        cursor.execute("SELECT credentials_encrypted FROM providers_provideraccount WHERE id = %s",
                       [account["id"]])
        (stored,) = cursor.fetchone()
    assert fakes.WA_TOKEN not in stored
    assert "access_token" not in stored
    assert json.loads(crypto.decrypt(stored)) == {"access_token": fakes.WA_TOKEN}


def test_delete_removes_the_account(tenant, fake, put_account):
    put_account(tenant, "rcs", rcs_body(fake))
    client = tenant.client()
    assert client.delete("/api/v1/providers/rcs").status_code == 204
    missing = client.get("/api/v1/providers/rcs")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "NOT_FOUND"
    assert client.delete("/api/v1/providers/rcs").status_code == 404


def test_writes_are_audited_without_secrets(tenant, fake, put_account):
    account = put_account(tenant, "sms", twilio_body(fake))
    put_account(tenant, "sms", twilio_body(fake))
    tenant.client().delete("/api/v1/providers/sms")
    rows = list(AuditLogEntry.objects.filter(organization=tenant.org, target_id=account["id"])
                .order_by("created_at", "id"))
    assert [r.action for r in rows] == ["provider_account.created", "provider_account.updated",
                                        "provider_account.deleted"]
    assert rows[0].actor_id == tenant.key.pk
    assert rows[1].metadata["credentials_changed"] is True
    assert fakes.TWILIO_TOKEN not in json.dumps([r.metadata for r in rows])


@pytest.mark.parametrize(("channel", "body", "field"), [
    ("whatsapp", {"provider": "twilio", "credentials": {"auth_token": "x"},
                  "config": {"account_sid": "AC1"}}, "provider"),
    ("sms", {"provider": "twilio", "credentials": {"auth_token": "x"}, "config": {}},
     "config.account_sid"),
    ("sms", {"provider": "twilio", "config": {"account_sid": "AC1"}}, "credentials"),
    ("sms", {"provider": "twilio", "credentials": {"api_key_sid": "SK1"},
             "config": {"account_sid": "AC1"}}, "credentials"),
    ("sms", {"provider": "twilio", "credentials": {"auth_token": "x"},
             "config": {"account_sid": 5}}, "config.account_sid"),
    ("email", {"provider": "smtp", "config": {"host": "mail.example.com", "port": 0}},
     "config.port"),
    ("rcs", {"provider": "rcs_business", "config": {"agent_id": "a"},
             "credentials": {"service_account": {"client_email": "x@y"}}},
     "credentials.service_account"),
    ("sms", {"provider": "fax"}, "provider"),
])
def test_invalid_bodies_answer_422_naming_the_field(tenant, channel, body, field):
    response = tenant.client().put(f"/api/v1/providers/{channel}", body, format="json")
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in [issue["field"] for issue in error["details"]["issues"]]


def test_unknown_channel_is_not_found(tenant, fake):
    response = tenant.client().put("/api/v1/providers/fax", twilio_body(fake), format="json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_base_url_must_be_public_https_outside_development(tenant, settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    client = tenant.client()
    body = {"provider": "twilio", "credentials": {"auth_token": "t"},
            "config": {"account_sid": "AC1"}}
    for base_url in ("http://api.twilio.example.com", "https://127.0.0.1:8443",
                     "https://169.254.169.254"):
        response = client.put("/api/v1/providers/sms", {**body, "base_url": base_url},
                              format="json")
        assert response.status_code == 422, (base_url, response.content)
        assert response.json()["error"]["details"]["issues"][0]["field"] == "base_url"
    # An SMTP host on a private address is refused too (no SSRF through SMTP).
    response = client.put("/api/v1/providers/email",
                          {"provider": "smtp", "config": {"host": "127.0.0.1", "port": 6379}},
                          format="json")
    assert response.status_code == 422
    assert response.json()["error"]["details"]["issues"][0]["field"] == "config.host"


def _member(tenant, role):
    owner = Principal(kind="session", organization=tenant.org, role="owner",
                      user_id=tenant.owner.pk)
    with tenant_context(tenant.org):
        membership = identity.user_invite(principal=owner, email=f"{role}-{tenant.org.slug}@x.io",
                                          role=role, password="Correct-Horse-9-battery")
    return tenant.session_client(membership.user, "Correct-Horse-9-battery")


@pytest.mark.parametrize(("role", "allowed"), [("admin", True), ("developer", True),
                                               ("agent", False), ("viewer", False)])
def test_roles(tenant, fake, role, allowed):
    client = _member(tenant, role)
    read = client.get("/api/v1/providers")
    write = client.put("/api/v1/providers/sms", twilio_body(fake), format="json")
    if allowed:
        assert (read.status_code, write.status_code) == (200, 201), write.content
    else:
        assert (read.status_code, write.status_code) == (403, 403)
        assert write.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"


def test_api_key_scopes(tenant, fake):
    def key(scopes):
        _key, raw = identity.api_key_create(organization=tenant.org, name="k",
                                            key_type=KeyType.SECRET, mode=None, scopes=scopes)
        return tenant.client(raw)

    reader = key(["providers:read"])
    assert reader.get("/api/v1/providers").status_code == 200
    assert reader.put("/api/v1/providers/sms", twilio_body(fake), format="json").status_code == 403
    writer = key(["providers:write"])
    assert writer.put("/api/v1/providers/sms", twilio_body(fake), format="json").status_code == 201
    other = key(["messages:write"])
    assert other.get("/api/v1/providers").status_code == 403


def test_list_query_count_is_flat(tenant, fake, put_account, django_assert_max_num_queries):
    put_account(tenant, "sms", twilio_body(fake))
    put_account(tenant, "whatsapp", whatsapp_body(fake))
    put_account(tenant, "rcs", rcs_body(fake))
    client = tenant.client()
    client.get("/api/v1/providers")  # warm the credential cache
    with django_assert_max_num_queries(4):
        response = client.get("/api/v1/providers")
    assert len(response.json()["data"]) == 3


def test_other_tenant_sees_nothing(tenant, other_tenant, fake, put_account):
    account = put_account(tenant, "sms", twilio_body(fake))
    intruder = other_tenant.client()
    assert intruder.get("/api/v1/providers").json()["data"] == []
    assert intruder.get("/api/v1/providers/sms").status_code == 404
    assert intruder.get(f"/api/v1/providers/{account['id']}").status_code == 404
    # Their own PUT creates their own account; ours is untouched.
    assert intruder.put("/api/v1/providers/sms", twilio_body(fake),
                        format="json").status_code == 201
    with tenant_context(tenant.org):
        assert ProviderAccount.objects.get(pk=account["id"]).organization_id == tenant.org.pk
