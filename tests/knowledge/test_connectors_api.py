"""Connectors (Document 3, 4.2 and 4.3) with the sandbox doubles: the catalog and its
filters, per-base CRUD with credentials encrypted and never returned, roles, sync now,
incremental sync (unchanged pages are not rewritten or re-embedded), the beat drain."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.db import connection

from knowledge.connectors import tasks
from knowledge.connectors.models import Connector
from platform_core.audit.models import AuditLogEntry
from platform_core.identity import services as identity
from platform_core.identity.models import User
from platform_core.tenancy.context import tenant_context
from platform_core.tenancy.models import Membership, Role

from .helpers import KB, create_kb
from .manage_helpers import (
    NOTION_CREDENTIALS,
    chunk_ids,
    connector_state,
    create_connector,
    documents,
    page,
    set_pages,
    sync,
)

pytestmark = pytest.mark.django_db
CATALOG = "/api/v1/ai/kb/connectors"
T0 = dt.datetime(2026, 3, 1, 9, tzinfo=dt.UTC)


# --- The catalog ---------------------------------------------------------------------------


def test_catalog_lists_five_systems_with_filters(tenant):
    client = tenant.client()
    response = client.get(CATALOG)
    assert response.status_code == 200, response.content
    entries = response.json()["data"]
    assert [e["id"] for e in entries] == ["confluence", "notion", "google_drive", "sharepoint",
                                          "zendesk_guide"]
    assert {e["status"] for e in entries} == {"available"}
    zendesk = entries[-1]
    assert (zendesk["category"], zendesk["credential_fields"], zendesk["config_fields"]) == (
        "help_center", ["email", "api_token"], ["subdomain"])
    wiki = client.get(CATALOG, {"category": "wiki"}).json()["data"]
    assert [e["id"] for e in wiki] == ["confluence", "notion"]
    found = client.get(CATALOG, {"search": "SHAREPOINT"}).json()["data"]
    assert [e["id"] for e in found] == ["sharepoint"]
    assert client.get(CATALOG, {"search": "Drive", "category": "wiki"}).json()["data"] == []
    for query in ({"category": "crm"}, {"status": "broken"}):
        bad = client.get(CATALOG, query)
        assert bad.status_code == 422, query
        assert bad.json()["error"]["code"] == "VALIDATION_ERROR"


def test_catalog_status_follows_the_organizations_connectors(tenant, other_tenant):
    client = tenant.client()
    create_connector(client, create_kb(client))
    connected = client.get(CATALOG, {"status": "connected"}).json()["data"]
    assert [e["id"] for e in connected] == ["notion"]
    available = client.get(CATALOG, {"status": "available"}).json()["data"]
    assert len(available) == 4
    assert client.get(f"{CATALOG}/notion").json()["data"]["status"] == "connected"
    # Another organization's connectors are not this one's.
    assert other_tenant.client().get(f"{CATALOG}/notion").json()["data"]["status"] == \
        "available"


def test_catalog_detail(tenant):
    client = tenant.client()
    body = client.get(f"{CATALOG}/confluence").json()["data"]
    assert (body["id"], body["name"], body["category"]) == ("confluence", "Confluence", "wiki")
    assert body["config_fields"] == ["site_url", "space_id"]
    missing = client.get(f"{CATALOG}/dropbox")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "NOT_FOUND"


# --- Per-base connectors -------------------------------------------------------------------


def test_create_encrypts_credentials_and_never_returns_them(tenant):
    client = tenant.client()
    kb = create_kb(client)
    response = client.post(f"{KB}/{kb}/connectors", {
        "type": "zendesk_guide", "config": {"subdomain": "acme", "locale": "en-us"},
        "credentials": {"email": "ops@acme.test", "api_token": "zd-very-secret"},
        "sync_interval_minutes": 60}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()["data"]
    assert "zd-very-secret" not in response.content.decode()
    assert (body["type"], body["name"], body["status"], body["sync_status"]) == (
        "zendesk_guide", "Zendesk Guide", "active", "never")
    assert body["credentials_configured"] is True
    assert body["credential_fields"] == ["api_token", "email"]
    assert body["config"] == {"subdomain": "acme", "locale": "en-us"}
    assert body["next_sync_at"] is not None  # scheduled: due at once
    listed = client.get(f"{KB}/{kb}/connectors")
    assert listed.status_code == 200
    assert "zd-very-secret" not in listed.content.decode()
    with connection.cursor() as cursor:
        cursor.execute("SELECT credentials_encrypted FROM knowledge_connector WHERE id = %s",
                       [body["id"]])
        stored = cursor.fetchone()[0]
    assert "zd-very-secret" not in stored
    assert "ops@acme.test" not in stored
    with tenant_context(tenant.org):
        assert Connector.objects.get(pk=body["id"]).credentials["api_token"] == "zd-very-secret"
    assert AuditLogEntry.objects.filter(action="knowledge_connector.created",
                                        target_id=body["id"]).exists()


@pytest.mark.parametrize("body", [
    {"type": "dropbox", "credentials": {"token": "x"}},
    {"type": "notion"},                                                   # no credentials
    {"type": "notion", "credentials": {}},
    {"type": "notion", "credentials": {"token": ""}},
    {"type": "notion", "credentials": {"token": "x", "password": "y"}},  # unknown field
    {"type": "confluence", "credentials": {"email": "a@b.c", "api_token": "t"},
     "config": {"space_id": "1"}},                                        # no site_url
    {"type": "confluence", "credentials": {"email": "a@b.c", "api_token": "t"},
     "config": {"site_url": "ftp://x", "space_id": "1"}},
    {"type": "notion", "credentials": {"token": "x"}, "config": {"colour": "red"}},
    {"type": "notion", "credentials": {"token": "x"}, "sync_interval_minutes": 5},
    {"type": "notion", "credentials": {"token": "x"}, "sync_interval_minutes": 10081},
    {"type": "notion", "credentials": {"token": "x"}, "status": "deleted"},
    {"type": "notion", "credentials": {"token": "x"}, "config": {"sandbox_pages": "nope"}},
])
def test_create_validation(tenant, body):
    client = tenant.client()
    response = client.post(f"{KB}/{create_kb(client)}/connectors", body, format="json")
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_update_and_delete(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    connector = create_connector(client, kb, [page("p1", "One", "# One\n\nText one.")])
    url = f"{KB}/{kb}/connectors/{connector['id']}"
    response = client.patch(url, {"name": "Team wiki", "status": "paused",
                                  "credentials": {"token": "rotated-token"},
                                  "sync_interval_minutes": 120}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()["data"]
    assert (body["name"], body["status"], body["sync_interval_minutes"]) == (
        "Team wiki", "paused", 120)
    assert "rotated-token" not in response.content.decode()
    with tenant_context(tenant.org):
        assert Connector.objects.get(pk=connector["id"]).credentials == {
            "token": "rotated-token"}
    for bad in ({"credentials": {"nope": "x"}}, {"sync_interval_minutes": 1},
                {"config": {"site_url": "https://x"}}):
        assert client.patch(url, bad, format="json").status_code == 422, bad
    paused = client.post(f"{url}/sync")
    assert paused.status_code == 409
    assert paused.json()["error"]["code"] == "KNOWLEDGE_CONNECTOR_PAUSED"
    assert client.patch(url, {"status": "active"}, format="json").status_code == 200
    sync(client, kb, connector["id"], django_capture_on_commit_callbacks)
    assert client.delete(url).status_code == 204
    assert client.get(f"{KB}/{kb}/connectors").json()["data"] == []
    assert "One" in documents(client, kb)  # the documents it brought stay
    assert client.delete(url).status_code == 404
    assert client.patch(f"{KB}/{kb}/connectors/kbc_nope", {"name": "x"},
                        format="json").status_code == 404
    assert client.get(f"{KB}/kb_nope/connectors").status_code == 404


def _member(tenant, role: str):
    user = User.objects.create_user(f"{role}-{tenant.org.slug}@example.com",
                                    "Correct-Horse-9-battery")
    Membership.objects.for_organization(tenant.org).create(organization=tenant.org,
                                                           user=user, role=role)
    return tenant.session_client(user, "Correct-Horse-9-battery")


@pytest.mark.parametrize(("role", "allowed"), [(Role.DEVELOPER, True), (Role.ADMIN, True),
                                               (Role.AGENT, False), (Role.VIEWER, False)])
def test_roles_to_add(tenant, role, allowed):
    kb = create_kb(tenant.client())
    client = _member(tenant, role)
    response = client.post(f"{KB}/{kb}/connectors",
                           {"type": "notion", "credentials": NOTION_CREDENTIALS},
                           format="json")
    assert response.status_code == (201 if allowed else 403), response.content
    assert client.get(f"{KB}/{kb}/connectors").status_code == 200  # listing: knowledge:read


def test_read_only_key_lists_but_cannot_add(tenant):
    kb = create_kb(tenant.client())
    _, raw = identity.api_key_create(organization=tenant.org, name="reader", key_type="secret",
                                     mode=None, scopes=["knowledge:read"])
    reader = tenant.client(raw)
    assert reader.get(f"{KB}/{kb}/connectors").status_code == 200
    assert reader.get(CATALOG).status_code == 200
    response = reader.post(f"{KB}/{kb}/connectors",
                           {"type": "notion", "credentials": NOTION_CREDENTIALS}, format="json")
    assert response.status_code == 403


def test_list_has_bounded_queries(tenant, django_assert_max_num_queries):
    client = tenant.client()
    kb = create_kb(client)
    for _ in range(5):
        create_connector(client, kb)
    with django_assert_max_num_queries(10):
        response = client.get(f"{KB}/{kb}/connectors")
    assert len(response.json()["data"]) == 5


# --- Sync ----------------------------------------------------------------------------------


def test_sandbox_double_default_pages(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    connector = client.post(f"{KB}/{kb}/connectors", {
        "type": "confluence", "config": {"site_url": "https://acme.atlassian.net",
                                         "space_id": "42"},
        "credentials": {"email": "a@acme.test", "api_token": "t"}}, format="json").json()["data"]
    state = sync(client, kb, connector["id"], django_capture_on_commit_callbacks)
    assert state["sync_status"] == "succeeded"
    assert state["last_sync_stats"] == {"pages": 3, "created": 3, "updated": 0, "unchanged": 0,
                                        "removed": 0}
    docs = documents(client, kb)
    assert sorted(docs) == [f"Sandbox confluence page {n}" for n in (1, 2, 3)]
    assert {(d["source_type"], d["status"], d["version"]) for d in docs.values()} == {
        ("connector", "ready", 1)}


def test_incremental_sync(tenant, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    client = tenant.client()
    kb = create_kb(client)
    pages = [page("a", "Alpha", "# Alpha\n\nAlpha text."),
             page("b", "Beta", "# Beta\n\nBeta text."),
             page("c", "Gamma", "# Gamma\n\nGamma text.")]
    connector = create_connector(client, kb, pages)["id"]
    sync(client, kb, connector, capture)
    first = documents(client, kb)
    chunks = {name: chunk_ids(tenant, d["id"]) for name, d in first.items()}
    assert all(chunks.values())

    again = sync(client, kb, connector, capture)
    assert again["last_sync_stats"] == {"pages": 3, "created": 0, "updated": 0,
                                        "unchanged": 3, "removed": 0}
    assert {name: chunk_ids(tenant, d["id"]) for name, d in first.items()} == chunks

    set_pages(client, kb, connector, [
        page("a", "Alpha", "# Alpha\n\nAlpha text, revised."),   # changed
        page("b", "Beta renamed", "# Beta\n\nBeta text."),       # renamed only
        page("d", "Delta", "# Delta\n\nDelta text.")])           # new; c is gone
    state = sync(client, kb, connector, capture)
    assert state["last_sync_stats"] == {"pages": 3, "created": 1, "updated": 1,
                                        "unchanged": 1, "removed": 1}
    docs = documents(client, kb)
    assert sorted(docs) == ["Alpha", "Beta renamed", "Delta"]
    assert (docs["Alpha"]["version"], docs["Alpha"]["status"]) == (2, "ready")
    assert not set(chunk_ids(tenant, docs["Alpha"]["id"])) & set(chunks["Alpha"])
    # Unchanged text: same document, same version, same chunks (not re-embedded).
    assert docs["Beta renamed"]["id"] == first["Beta"]["id"]
    assert docs["Beta renamed"]["version"] == 1
    assert chunk_ids(tenant, docs["Beta renamed"]["id"]) == chunks["Beta"]


def test_sync_now_is_a_no_op_while_queued(tenant):
    client = tenant.client()
    kb = create_kb(client)
    connector = create_connector(client, kb)["id"]
    # Outside a commit capture the queued task never runs: the first stays queued.
    first = client.post(f"{KB}/{kb}/connectors/{connector}/sync")
    assert first.status_code == 202
    assert first.json()["data"]["sync_status"] == "queued"
    second = client.post(f"{KB}/{kb}/connectors/{connector}/sync")
    assert second.status_code == 202
    assert AuditLogEntry.objects.filter(action="knowledge_connector.sync_requested").count() == 1


def test_scheduled_sync_through_the_beat_drain(tenant, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    client = tenant.client()
    kb = create_kb(client)
    with time_machine.travel(T0, tick=False):
        scheduled = create_connector(client, kb, [page("a", "Alpha", "# A\n\nText.")],
                                     sync_interval_minutes=60)["id"]
        manual = create_connector(client, kb, [page("m", "Manual", "# M\n\nText.")])["id"]
        with capture(execute=True):
            assert tasks.sync_due_connectors() == 1
    state = connector_state(client, kb, scheduled)
    assert (state["sync_status"], state["last_sync_stats"]["created"]) == ("succeeded", 1)
    assert state["next_sync_at"].startswith("2026-03-01T10:00:00")
    assert connector_state(client, kb, manual)["sync_status"] == "never"
    with time_machine.travel(T0 + dt.timedelta(minutes=59), tick=False), capture(execute=True):
        assert tasks.sync_due_connectors() == 0
    set_pages(client, kb, scheduled, [page("a", "Alpha", "# A\n\nNew text.")])
    with time_machine.travel(T0 + dt.timedelta(minutes=61), tick=False), capture(execute=True):
        assert tasks.sync_due_connectors() == 1
    state = connector_state(client, kb, scheduled)
    assert state["last_sync_stats"]["updated"] == 1
    assert documents(client, kb)["Alpha"]["version"] == 2


def test_drain_takes_every_due_connector_in_batches(tenant, monkeypatch,
                                                    django_capture_on_commit_callbacks):
    from knowledge.connectors import services

    monkeypatch.setattr(services, "DRAIN_BATCH", 2)
    client = tenant.client()
    kb = create_kb(client)
    with time_machine.travel(T0, tick=False):
        ids = [create_connector(client, kb, [page(f"p{n}", f"Page {n}", f"# P\n\nText {n}.")],
                                sync_interval_minutes=30)["id"] for n in range(5)]
        with django_capture_on_commit_callbacks(execute=True):
            assert tasks.sync_due_connectors() == 5
    assert {connector_state(client, kb, i)["sync_status"] for i in ids} == {"succeeded"}
    assert len(documents(client, kb)) == 5


def test_paused_connectors_are_not_scheduled(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    with time_machine.travel(T0, tick=False):
        create_connector(client, kb, sync_interval_minutes=30, status="paused")
        with django_capture_on_commit_callbacks(execute=True):
            assert tasks.sync_due_connectors() == 0
