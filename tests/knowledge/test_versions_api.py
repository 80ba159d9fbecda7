"""Document versions (Document 3, 2.2, 3 and 4.3): immutable snapshots on every content
change, the versions list, diff (difflib counts and unified hunks, 422 over the size cap)
and rollback (202, head snapshotted first, new head re-indexed)."""

from __future__ import annotations

import pytest

from knowledge.models import Chunk, DocumentVersion
from platform_core.audit.models import AuditLogEntry
from platform_core.tenancy.context import tenant_context

from .helpers import KB, create_kb
from .manage_helpers import chunk_ids, create_connector, documents, page, set_pages, sync

pytestmark = pytest.mark.django_db

V1 = "# Refunds\n\nRefunds within 30 days.\nThe card is credited in five days.\nAsk support."
V2 = ("# Refunds\n\nRefunds within 60 days.\nThe card is credited in five days.\nAsk support."
      "\nKeep the receipt.")


@pytest.fixture
def versioned(tenant, django_capture_on_commit_callbacks):
    """A document at version 2 (a connector brought V1, then V2)."""
    client, capture = tenant.client(), django_capture_on_commit_callbacks
    kb = create_kb(client)
    connector = create_connector(client, kb, [page("p1", "Refunds", V1)])
    sync(client, kb, connector["id"], capture)
    set_pages(client, kb, connector["id"], [page("p1", "Refunds", V2)])
    sync(client, kb, connector["id"], capture)
    doc = documents(client, kb)["Refunds"]
    return client, kb, doc, f"{KB}/{kb}/documents/{doc['id']}"


def test_content_change_snapshots_the_head(versioned, tenant):
    client, _, doc, base = versioned
    assert doc["version"] == 2
    assert doc["status"] == "ready"
    response = client.get(f"{base}/versions")
    assert response.status_code == 200, response.content
    items = response.json()["data"]
    assert [(i["version"], i["is_head"], i["replaced_by"]) for i in items] == [
        (2, True, None), (1, False, "sync")]
    assert items[1]["content_retained"] is True
    assert items[1]["size_bytes"] == len(V1.encode())
    assert items[1]["superseded_at"] is not None
    with tenant_context(tenant.org):
        snapshot = DocumentVersion.objects.get(document_id=doc["id"], version=1)
        assert snapshot.content == V1
        snapshot.content = "tampered"
        with pytest.raises(ValueError, match="immutable"):
            snapshot.save()


def test_diff_counts_and_unified_hunks(versioned):
    client, _, _, base = versioned
    response = client.get(f"{base}/versions/diff", {"from": 1, "to": 2})
    assert response.status_code == 200, response.content
    body = response.json()["data"]
    assert (body["from_version"], body["to_version"]) == (1, 2)
    assert (body["added"], body["removed"], body["unchanged"]) == (2, 1, 4)
    assert body["hunks"] == [{"header": "@@ -1,5 +1,6 @@", "lines": [
        " # Refunds", " ", "-Refunds within 30 days.", "+Refunds within 60 days.",
        " The card is credited in five days.", " Ask support.", "+Keep the receipt."]}]
    backwards = client.get(f"{base}/versions/diff", {"from": 2, "to": 1}).json()["data"]
    assert (backwards["added"], backwards["removed"]) == (1, 2)
    same = client.get(f"{base}/versions/diff", {"from": 2, "to": 2}).json()["data"]
    assert (same["added"], same["removed"], same["unchanged"], same["hunks"]) == (0, 0, 6, [])


@pytest.mark.parametrize("query", [{"from": 1}, {"to": 1}, {"from": 0, "to": 1},
                                   {"from": "x", "to": 1}, {"from": 1, "to": 9}])
def test_diff_validation(versioned, query):
    client, _, _, base = versioned
    response = client.get(f"{base}/versions/diff", query)
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_rollback_snapshots_head_and_reindexes(versioned, tenant,
                                               django_capture_on_commit_callbacks):
    client, kb, doc, base = versioned
    before = chunk_ids(tenant, doc["id"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{base}/rollback", {"version": 1}, format="json")
    assert response.status_code == 202, response.content
    head = response.json()["data"]
    assert (head["id"], head["version"], head["status"]) == (doc["id"], 3, "processing")
    assert documents(client, kb)["Refunds"]["status"] == "ready"  # re-indexed
    after = chunk_ids(tenant, doc["id"])
    assert after
    assert not set(after) & set(before)
    with tenant_context(tenant.org):
        texts = " ".join(Chunk.objects.filter(document_id=doc["id"]).values_list("text",
                                                                                flat=True))
    assert "30 days" in texts
    assert "60 days" not in texts
    items = client.get(f"{base}/versions").json()["data"]
    assert [(i["version"], i["replaced_by"]) for i in items] == [
        (3, None), (2, "rollback"), (1, "sync")]
    same = client.get(f"{base}/versions/diff", {"from": 1, "to": 3}).json()["data"]
    assert (same["added"], same["removed"]) == (0, 0)
    assert AuditLogEntry.objects.filter(action="knowledge_document.version_created",
                                        target_id=doc["id"],
                                        metadata__reason="rollback").exists()


@pytest.mark.parametrize(("body", "code"), [({"version": 2}, "VALIDATION_ERROR"),
                                            ({"version": 7}, "VALIDATION_ERROR"),
                                            ({"version": 0}, "VALIDATION_ERROR"),
                                            ({}, "VALIDATION_ERROR")])
def test_rollback_validation(versioned, body, code):
    client, _, _, base = versioned
    response = client.post(f"{base}/rollback", body, format="json")
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == code


def test_content_over_the_cap_is_not_retained(tenant, settings,
                                              django_capture_on_commit_callbacks):
    settings.KNOWLEDGE_VERSION_MAX_BYTES = 100
    client, capture = tenant.client(), django_capture_on_commit_callbacks
    kb = create_kb(client)
    big = "# Big\n\n" + "A long line of policy text.\n" * 10  # over 100 bytes
    connector = create_connector(client, kb, [page("p1", "Big", big)])
    sync(client, kb, connector["id"], capture)
    set_pages(client, kb, connector["id"], [page("p1", "Big", "# Big\n\nShort now.")])
    sync(client, kb, connector["id"], capture)
    doc = documents(client, kb)["Big"]
    base = f"{KB}/{kb}/documents/{doc['id']}"
    items = client.get(f"{base}/versions").json()["data"]
    assert [(i["version"], i["content_retained"]) for i in items] == [(2, True), (1, False)]
    diff = client.get(f"{base}/versions/diff", {"from": 1, "to": 2})
    assert diff.status_code == 422, diff.content
    assert diff.json()["error"]["code"] == "KNOWLEDGE_VERSION_NOT_RETAINED"
    rollback = client.post(f"{base}/rollback", {"version": 1}, format="json")
    assert rollback.status_code == 422
    assert rollback.json()["error"]["code"] == "KNOWLEDGE_VERSION_NOT_RETAINED"
    assert documents(client, kb)["Big"]["version"] == 2  # nothing moved


def test_versions_list_pages_with_bounded_queries(versioned, tenant,
                                                  django_assert_max_num_queries,
                                                  django_capture_on_commit_callbacks):
    client, _, _, base = versioned
    for version in (1, 2, 1):  # three rollbacks: heads 3, 4 and 5
        with django_capture_on_commit_callbacks(execute=True):
            assert client.post(f"{base}/rollback", {"version": version},
                               format="json").status_code == 202
    with django_assert_max_num_queries(12):
        first = client.get(f"{base}/versions", {"limit": 2})
    body = first.json()
    assert [i["version"] for i in body["data"]] == [5, 4, 3]  # the head, then 2 snapshots
    cursor = body["meta"]["pagination"]["cursor"]
    rest = client.get(f"{base}/versions", {"limit": 2, "cursor": cursor}).json()["data"]
    assert [i["version"] for i in rest] == [2, 1]


def test_unknown_document_or_base(tenant):
    client = tenant.client()
    kb = create_kb(client)
    assert client.get(f"{KB}/{kb}/documents/kbd_nope/versions").status_code == 404
    assert client.get(f"{KB}/kb_nope/documents/kbd_nope/versions").status_code == 404
    assert client.post(f"{KB}/{kb}/documents/kbd_nope/rollback", {"version": 1},
                       format="json").status_code == 404


def test_diff_with_a_head_over_the_cap(tenant, settings, django_capture_on_commit_callbacks):
    settings.KNOWLEDGE_VERSION_MAX_BYTES = 100
    client, capture = tenant.client(), django_capture_on_commit_callbacks
    kb = create_kb(client)
    connector = create_connector(client, kb, [page("p1", "Doc", "# Doc\n\nShort.")])
    sync(client, kb, connector["id"], capture)
    set_pages(client, kb, connector["id"],
              [page("p1", "Doc", "# Doc\n\n" + "Grown far past the cap.\n" * 10)])
    sync(client, kb, connector["id"], capture)
    doc = documents(client, kb)["Doc"]
    response = client.get(f"{KB}/{kb}/documents/{doc['id']}/versions/diff",
                          {"from": 1, "to": 2})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "KNOWLEDGE_VERSION_NOT_RETAINED"
    # The small first version is still retained, so it can be rolled back to.
    with capture(execute=True):
        rollback = client.post(f"{KB}/{kb}/documents/{doc['id']}/rollback", {"version": 1},
                               format="json")
    assert rollback.status_code == 202, rollback.content
    items = client.get(f"{KB}/{kb}/documents/{doc['id']}/versions").json()["data"]
    assert [(i["version"], i["content_retained"]) for i in items] == [
        (3, True), (2, False), (1, True)]
