"""Segment CSV exports: streaming, the 50,000-row cap and `X-Export-Truncated`, masking
both ways, formula-injection safety, JSON errors before streaming."""

from __future__ import annotations

import csv
import io

import pytest

from contacts.segments import selectors
from contacts.segments.masking import mask_email, mask_phone
from platform_core.audit.models import AuditLogEntry
from platform_core.tenancy.context import tenant_context

from .helpers import EXPORT, SEGMENTS, api_key, contact, create_segment, member_client, rule, tree

EVERYONE = tree()
# The shared CSV writer quotes every cell starting with "+" (platform_core.exports, OWASP's
# rule), E.164 phones included: the number itself is intact after the guard quote.
PHONE = "+14155554567"  # a bare E.164 number is not quoted (platform_core/exports.py)
MASKED_PHONE = "'+1******4567"


def _rows(response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.content if not response.streaming else ""
    assert response.streaming
    text = b"".join(response.streaming_content).decode("utf-8").lstrip("\ufeff")
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def ann(tenant):
    return contact(tenant, first_name="Ann", last_name="Lee", phone="+14155554567",
                   email="john@example.com", tags=["vip", "gold"])


def test_streams_csv_as_an_attachment(tenant, ann):
    response = tenant.client().post(EXPORT, {"filters": EVERYONE, "filename": "My VIPs"},
                                    format="json")
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == 'attachment; filename="My-VIPs.csv"'
    assert not response.has_header("X-Export-Truncated")
    rows = _rows(response)
    assert rows == [{"id": ann.pk, "first_name": "Ann", "last_name": "Lee",
                     "phone": PHONE, "email": "john@example.com", "tags": "vip;gold",
                     "created_at": ann.created_at.isoformat()}]


def test_default_filename(tenant, ann):
    response = tenant.client().post(EXPORT, {"filters": EVERYONE}, format="json")
    assert response["Content-Disposition"].startswith('attachment; filename="segment-export-')


def test_only_matching_contacts_are_exported(tenant, ann):
    contact(tenant, first_name="Bob", tags=["x"])
    rows = _rows(tenant.client().post(EXPORT, {"filters": tree(rule("tags", "eq", "vip"))},
                                      format="json"))
    assert [r["id"] for r in rows] == [ann.pk]


def test_masked_without_the_reveal_permission(tenant, ann):
    reader = tenant.client(api_key(tenant, ["contacts:read"]))
    rows = _rows(reader.post(EXPORT, {"filters": EVERYONE}, format="json"))
    assert rows[0]["phone"] == MASKED_PHONE
    assert rows[0]["email"] == "j***@example.com"
    with tenant_context(tenant.org):
        entry = AuditLogEntry.objects.get(action="segment.exported")
    assert entry.metadata == {"rows": 1, "truncated": False, "masked": True}


@pytest.mark.parametrize(("who", "revealed"), [
    ("star-key", True),
    ("reveal-key", True),
    ("read-key", False),
    ("owner-session", True),
    ("admin-session", True),
    ("developer-session", False),
    ("viewer-session", False),
])
def test_reveal_permission(tenant, ann, who, revealed):
    client = {
        "star-key": lambda: tenant.client(),
        "reveal-key": lambda: tenant.client(api_key(tenant, ["contacts:read",
                                                             "contacts:reveal"])),
        "read-key": lambda: tenant.client(api_key(tenant, ["contacts:read"])),
        "owner-session": lambda: tenant.session_client(),
        "admin-session": lambda: member_client(tenant, "admin"),
        "developer-session": lambda: member_client(tenant, "developer"),
        "viewer-session": lambda: member_client(tenant, "viewer"),
    }[who]()
    row = _rows(client.post(EXPORT, {"filters": EVERYONE}, format="json"))[0]
    assert (row["phone"], row["email"]) == (
        (PHONE, "john@example.com") if revealed else (MASKED_PHONE, "j***@example.com")
    )


def test_mask_shapes():
    assert mask_phone("+14155554567") == "+1******4567"
    assert mask_phone("+442071838750") == "+44******8750"
    assert mask_phone("") == ""
    assert mask_email("john@example.com") == "j***@example.com"
    assert mask_email("") == ""


def test_limit_caps_and_sets_the_truncated_header(tenant):
    for i in range(3):
        contact(tenant, first_name=f"P{i}")
    capped = tenant.client().post(EXPORT, {"filters": EVERYONE, "limit": 2}, format="json")
    assert capped["X-Export-Truncated"] == "true"
    assert len(_rows(capped)) == 2
    exact = tenant.client().post(EXPORT, {"filters": EVERYONE, "limit": 3}, format="json")
    assert not exact.has_header("X-Export-Truncated")
    assert len(_rows(exact)) == 3


def test_the_hard_cap_truncates(tenant, monkeypatch):
    monkeypatch.setattr(selectors, "EXPORT_MAX_ROWS", 4)
    for i in range(5):
        contact(tenant, first_name=f"P{i}")
    response = tenant.client().post(EXPORT, {"filters": EVERYONE}, format="json")
    assert response["X-Export-Truncated"] == "true"
    assert len(_rows(response)) == 4


def test_limit_above_50000_is_refused(tenant):
    response = tenant.client().post(EXPORT, {"filters": EVERYONE, "limit": 50_001},
                                    format="json")
    assert response.status_code == 422
    assert response.json()["error"]["details"]["issues"][0]["field"] == "limit"


def test_formula_injection_is_neutralized(tenant):
    contact(tenant, first_name='=HYPERLINK("http://evil.example","x")', last_name="+SUM(1)",
            tags=["@cmd"])
    row = _rows(tenant.client().post(EXPORT, {"filters": EVERYONE}, format="json"))[0]
    assert row["first_name"] == '\'=HYPERLINK("http://evil.example","x")'
    assert row["last_name"] == "'+SUM(1)"
    assert row["tags"] == "'@cmd"


def test_errors_before_streaming_are_json_envelopes(tenant):
    client = tenant.client()
    bad = client.post(EXPORT, {"filters": tree(rule("nope", "eq", 1))}, format="json",
                      HTTP_ACCEPT="text/csv")
    assert bad.status_code == 422
    assert bad["Content-Type"].startswith("application/json")
    assert bad.json()["error"]["details"]["issues"][0]["field"] == "filters.rules.0.field"
    missing = client.post(EXPORT, {}, format="json", HTTP_ACCEPT="text/csv")
    assert missing.status_code == 422
    assert missing.json()["error"]["code"] == "VALIDATION_ERROR"
    denied = tenant.client(api_key(tenant, ["files:read"])).post(
        EXPORT, {"filters": EVERYONE}, format="json", HTTP_ACCEPT="text/csv")
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"


def test_accept_text_csv_streams(tenant, ann):
    response = tenant.client().post(EXPORT, {"filters": EVERYONE}, format="json",
                                    HTTP_ACCEPT="text/csv")
    assert len(_rows(response)) == 1


def test_large_exports_stream_in_chunks(tenant):
    from contacts.models import Contact

    Contact.objects.for_organization(tenant.org).bulk_create([
        Contact(organization=tenant.org, first_name=f"Person {i}", last_name="x" * 40,
                email=f"p{i}@example.com") for i in range(3000)
    ])
    response = tenant.client().post(EXPORT, {"filters": EVERYONE}, format="json")
    chunks = list(response.streaming_content)
    assert len(chunks) > 2  # written as it is read, not built in memory
    assert b"".join(chunks).count(b"\n") == 3001


def test_other_tenants_contacts_are_not_exported(tenant, other_tenant, ann):
    assert _rows(other_tenant.client().post(EXPORT, {"filters": EVERYONE}, format="json")) == []


def test_saved_segment_export(tenant, ann):
    contact(tenant, first_name="Bob", tags=["x"])
    seg = create_segment(tenant, tree(rule("tags", "eq", "vip")))
    response = tenant.client().get(f"{SEGMENTS}/{seg['id']}/export.csv",
                                   HTTP_ACCEPT="text/csv")
    assert response["Content-Disposition"] == f'attachment; filename="segment-{seg["id"]}.csv"'
    rows = _rows(response)
    assert [r["id"] for r in rows] == [ann.pk]
    assert rows[0]["email"] == "john@example.com"
    masked = _rows(tenant.client(api_key(tenant, ["contacts:read"])).get(
        f"{SEGMENTS}/{seg['id']}/export.csv"))
    assert masked[0]["email"] == "j***@example.com"
    with tenant_context(tenant.org):
        assert AuditLogEntry.objects.filter(action="segment.exported",
                                            target_id=seg["id"]).exists()
