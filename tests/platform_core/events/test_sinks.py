"""Event sinks `/api/v1/developer/event-sinks/{kind}` (Document 1, 2.6 and 4.7)."""

from __future__ import annotations

import pytest
from django.db import connection

from platform_core.audit.models import AuditLogEntry
from platform_core.events.models import EventSink
from platform_core.identity import services
from platform_core.identity.models import KeyType

BASE = "/api/v1/developer/event-sinks"
PUBLIC_COLLECTOR = "https://93.184.216.34/collect"  # a public address literal: no DNS needed


def _sink(tenant, kind):
    return EventSink.objects.for_organization(tenant.org).get(kind=kind)


@pytest.mark.parametrize("kind", ["kafka", "http_batch"])
def test_unconfigured_kind_reads_the_disabled_default(tenant, kind):
    response = tenant.client().get(f"{BASE}/{kind}")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["kind"] == kind
    assert data["destination"] == {"kind": kind}
    assert data["enabled"] is False
    assert data["credentials_configured"] is False
    assert "credentials" not in data
    assert data["url"] is None
    assert data["headers"] == {}
    assert data["partition_key_path"] == ""
    assert isinstance(data["max_batch_size"], int)
    for field in ("last_delivered_at", "last_error", "last_error_at"):
        assert data[field] is None
    assert not EventSink.objects.for_organization(tenant.org).exists()  # reading stores nothing


@pytest.mark.parametrize("kind", ["s3", "webhook", "KAFKA", "http-batch"])
def test_other_kinds_are_404(tenant, kind):
    for method in ("get", "patch"):
        response = getattr(tenant.client(), method)(f"{BASE}/{kind}", {}, format="json")
        assert response.status_code == 404, (method, kind)
        assert response.json()["error"]["code"] == "NOT_FOUND"


def test_patch_is_a_merge_write(tenant):
    api = tenant.client()
    first = api.patch(f"{BASE}/kafka", {
        "destination": {"kind": "kafka", "topic": "events", "brokers": ["b1:9092"]},
        "partition_key_path": "data.contact_id",
        "headers": {"x-team": "growth"},
    }, format="json")
    assert first.status_code == 200, first.content
    second = api.patch(f"{BASE}/kafka", {"enabled": True}, format="json")
    data = second.json()["data"]
    assert data["enabled"] is True
    assert data["partition_key_path"] == "data.contact_id"
    assert data["destination"] == {"kind": "kafka", "topic": "events", "brokers": ["b1:9092"]}
    assert data["headers"] == {"x-team": "growth"}
    assert api.get(f"{BASE}/kafka").json()["data"] == data
    assert EventSink.objects.for_organization(tenant.org).count() == 1
    # The other kind is a separate configuration.
    assert api.get(f"{BASE}/http_batch").json()["data"]["enabled"] is False


@pytest.mark.parametrize("destination", [
    {"kind": "http_batch"}, {"kind": "KAFKA"}, {"topic": "events"}, {"kind": None},
])
def test_destination_kind_must_equal_the_path_kind(tenant, destination):
    response = tenant.client().patch(f"{BASE}/kafka", {"destination": destination},
                                     format="json")
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"]["issues"][0]["field"] == "destination.kind"
    assert not EventSink.objects.for_organization(tenant.org).exists()


def test_http_batch_collector_must_be_public_https(tenant):
    api = tenant.client()
    ok = api.patch(f"{BASE}/http_batch", {"url": PUBLIC_COLLECTOR, "max_batch_size": 50,
                                          "enabled": True}, format="json")
    assert ok.status_code == 200, ok.content
    assert ok.json()["data"]["url"] == PUBLIC_COLLECTOR
    assert ok.json()["data"]["max_batch_size"] == 50
    for url in ("http://93.184.216.34/collect",  # not https
                "https://127.0.0.1/collect", "https://10.1.2.3/", "https://192.168.0.10/",
                "https://169.254.169.254/latest/meta-data/",  # cloud metadata
                "https://[::1]/", "https://[fd00::1]/", "https://[::ffff:10.0.0.1]/",
                "https://100.64.0.1/", "https://0.0.0.0/",
                "ftp://93.184.216.34/", "https://user:pw@93.184.216.34/", "not a url"):
        refused = api.patch(f"{BASE}/http_batch", {"url": url}, format="json")
        assert refused.status_code == 422, url
        assert refused.json()["error"]["details"]["issues"][0]["field"] == "url"
    assert _sink(tenant, "http_batch").url == PUBLIC_COLLECTOR  # unchanged by the refusals


def test_http_batch_cannot_be_enabled_without_a_collector(tenant):
    response = tenant.client().patch(f"{BASE}/http_batch", {"enabled": True}, format="json")
    assert response.status_code == 422


def test_url_is_for_http_batch_only(tenant):
    response = tenant.client().patch(f"{BASE}/kafka", {"url": PUBLIC_COLLECTOR}, format="json")
    assert response.status_code == 422


@pytest.mark.parametrize("body", [
    {"max_batch_size": 0}, {"max_batch_size": 100_000}, {"max_batch_size": "many"},
    {"headers": {"bad header": "v"}}, {"headers": "x"}, {"enabled": "perhaps"},
    {"destination": "kafka"},
])
def test_field_validation(tenant, body):
    response = tenant.client().patch(f"{BASE}/kafka", body, format="json")
    assert response.status_code == 422, body
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_credentials_are_write_only_and_encrypted_at_rest(tenant):
    api = tenant.client()
    secret = "sasl-password-Zq81"
    response = api.patch(f"{BASE}/kafka", {"credentials": secret}, format="json")
    assert response.status_code == 200
    assert secret not in response.content.decode()
    assert "credentials" not in response.json()["data"]
    assert response.json()["data"]["credentials_configured"] is True
    assert secret not in api.get(f"{BASE}/kafka").content.decode()
    with connection.cursor() as cursor:
        cursor.execute("SELECT credentials FROM events_eventsink WHERE organization_id = %s",
                       [tenant.org.pk])
        (stored,) = cursor.fetchone()
    assert stored
    assert secret not in stored
    assert _sink(tenant, "kafka").credentials == secret
    # Other writes keep it; "" clears it.
    api.patch(f"{BASE}/kafka", {"enabled": True}, format="json")
    assert _sink(tenant, "kafka").credentials == secret
    cleared = api.patch(f"{BASE}/kafka", {"credentials": ""}, format="json")
    assert cleared.json()["data"]["credentials_configured"] is False
    assert _sink(tenant, "kafka").credentials == ""


def test_last_fields_are_read_only_and_null(tenant):
    response = tenant.client().patch(f"{BASE}/kafka", {
        "last_delivered_at": "2025-01-01T00:00:00Z", "last_error": "boom",
        "last_error_at": "2025-01-01T00:00:00Z", "credentials_configured": True,
        "partition_key_path": "id",
    }, format="json")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["last_delivered_at"] is None
    assert data["last_error"] is None
    assert data["last_error_at"] is None
    assert data["credentials_configured"] is False
    assert data["partition_key_path"] == "id"


@pytest.mark.parametrize(("role", "allowed"), [
    ("admin", True), ("developer", True), ("agent", False), ("viewer", False),
])
def test_roles(tenant, member_client, role, allowed):
    client = member_client(tenant, role)
    read = client.get(f"{BASE}/kafka")
    write = client.patch(f"{BASE}/kafka", {"enabled": True}, format="json")
    if allowed:
        assert (read.status_code, write.status_code) == (200, 200)
    else:
        assert (read.status_code, write.status_code) == (403, 403)
        assert read.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"


def test_owner_session(tenant):
    client = tenant.session_client()
    assert client.patch(f"{BASE}/kafka", {"enabled": True}, format="json").status_code == 200


def test_api_key_scopes(tenant):
    _, raw = services.api_key_create(organization=tenant.org, name="k", key_type=KeyType.SECRET,
                                     mode=None, scopes=["contacts:read"])
    assert tenant.client(raw).get(f"{BASE}/kafka").status_code == 403
    _, raw = services.api_key_create(organization=tenant.org, name="s", key_type=KeyType.SECRET,
                                     mode=None, scopes=["event_sinks:read"])
    reader = tenant.client(raw)
    assert reader.get(f"{BASE}/kafka").status_code == 200
    assert reader.patch(f"{BASE}/kafka", {"enabled": True}, format="json").status_code == 403


def test_update_is_audited_and_emitted(tenant, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        tenant.client().patch(f"{BASE}/kafka", {"enabled": True, "credentials": "s3cret"},
                              format="json")
    entry = AuditLogEntry.objects.get(action="event_sink.updated")
    assert entry.organization_id == tenant.org.pk
    assert entry.metadata == {"kind": "kafka", "fields": ["credentials", "enabled"]}
    assert "s3cret" not in str(entry.metadata)
    events = tenant.client().get("/api/v1/events?type=event_sink.updated").json()["data"]
    assert events[0]["data"] == {"kind": "kafka", "enabled": True,
                                 "fields": ["credentials", "enabled"]}


def test_sinks_are_per_tenant(tenant, other_tenant):
    mine = tenant.client().patch(f"{BASE}/kafka", {"enabled": True, "partition_key_path": "id"},
                                 format="json")
    assert mine.status_code == 200
    assert mine.json()["data"]["enabled"] is True
    theirs = other_tenant.client().get(f"{BASE}/kafka").json()["data"]
    assert theirs["enabled"] is False
    assert theirs["partition_key_path"] == ""
