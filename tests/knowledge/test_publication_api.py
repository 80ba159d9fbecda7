"""Publication of a document (Document 3, 2.2, 4.3 and 8): `is_public`, slug rules,
summary, the roles allowed, the audit log."""

from __future__ import annotations

import pytest

from platform_core.audit.models import AuditLogEntry
from platform_core.identity import services as identity
from platform_core.identity.models import User
from platform_core.tenancy.models import Membership, Role

from .helpers import KB, add_markdown, create_kb

pytestmark = pytest.mark.django_db
PASSWORD = "Correct-Horse-9-battery"


@pytest.fixture
def doc(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    document = add_markdown(client, kb, "Refunds", "# Refunds\n\nWithin 30 days.",
                            django_capture_on_commit_callbacks)
    return client, kb, f"{KB}/{kb}/documents/{document['id']}/publication", document


def _member(tenant, role: str):
    user = User.objects.create_user(f"{role}-{tenant.org.slug}@example.com", PASSWORD)
    Membership.objects.for_organization(tenant.org).create(organization=tenant.org,
                                                           user=user, role=role)
    return tenant.session_client(user, PASSWORD)


def test_publish_unpublish_and_audit(doc):
    client, _, url, document = doc
    response = client.patch(url, {"is_public": True, "slug": "refund-policy-2",
                                  "summary": "How refunds work."}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()["data"]
    assert (body["id"], body["is_public"], body["slug"], body["summary"]) == (
        document["id"], True, "refund-policy-2", "How refunds work.")
    assert body["published_at"] is not None
    entry = AuditLogEntry.objects.get(action="knowledge_document.publication_changed")
    assert entry.target_id == document["id"]
    assert entry.metadata["before"] == {"is_public": False, "slug": None, "summary": ""}
    assert entry.metadata["after"]["slug"] == "refund-policy-2"
    # Unpublishing: only is_public is needed; the slug and summary stay.
    response = client.patch(url, {"is_public": False}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()["data"]
    assert (body["is_public"], body["slug"], body["summary"]) == (
        False, "refund-policy-2", "How refunds work.")
    assert AuditLogEntry.objects.filter(
        action="knowledge_document.publication_changed").count() == 2


@pytest.mark.parametrize("body", [
    {},                                             # is_public is required
    {"is_public": True},                            # a slug is required to publish
    {"is_public": True, "slug": ""},
    {"is_public": True, "slug": "Refund-Policy"},   # lowercase only
    {"is_public": True, "slug": "refund policy"},
    {"is_public": True, "slug": "refund_policy"},
    {"is_public": True, "slug": "a" * 201},
    {"is_public": False, "summary": "x" * 2001},
    {"is_public": "maybe"},
])
def test_publication_validation(doc, body):
    client, _, url, _ = doc
    response = client.patch(url, body, format="json")
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_limits_are_inclusive(doc):
    client, _, url, _ = doc
    response = client.patch(url, {"is_public": True, "slug": "a" * 200,
                                  "summary": "s" * 2000}, format="json")
    assert response.status_code == 200, response.content


def test_slug_is_unique_within_a_base(doc, django_capture_on_commit_callbacks):
    client, kb, url, _ = doc
    capture = django_capture_on_commit_callbacks
    assert client.patch(url, {"is_public": True, "slug": "refunds"},
                        format="json").status_code == 200
    second = add_markdown(client, kb, "Other", "# Other\n\nText.", capture)
    response = client.patch(f"{KB}/{kb}/documents/{second['id']}/publication",
                            {"is_public": True, "slug": "refunds"}, format="json")
    assert response.status_code == 409, response.content
    assert response.json()["error"]["code"] == "KNOWLEDGE_SLUG_TAKEN"
    other_kb = create_kb(client, "Other base")
    third = add_markdown(client, other_kb, "Third", "# Third\n\nText.", capture)
    response = client.patch(f"{KB}/{other_kb}/documents/{third['id']}/publication",
                            {"is_public": True, "slug": "refunds"}, format="json")
    assert response.status_code == 200, response.content


@pytest.mark.parametrize(("role", "allowed"), [(Role.ADMIN, True), (Role.DEVELOPER, True),
                                               (Role.AGENT, False), (Role.VIEWER, False)])
def test_roles(doc, tenant, role, allowed):
    _, _, url, _ = doc
    response = _member(tenant, role).patch(url, {"is_public": True, "slug": "ok"},
                                           format="json")
    assert response.status_code == (200 if allowed else 403), response.content


def test_needs_knowledge_write_scope(doc, tenant):
    _, _, url, _ = doc
    _, raw = identity.api_key_create(organization=tenant.org, name="reader", key_type="secret",
                                     mode=None, scopes=["knowledge:read"])
    response = tenant.client(raw).patch(url, {"is_public": True, "slug": "ok"}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"
