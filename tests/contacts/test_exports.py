"""Contact exports: the streamed download (CSV and XLSX, at most 10,000 rows, roles, audit,
formula-injection safety) and the background job (progress, file, events, failure)."""

from __future__ import annotations

import csv
import io
from urllib.parse import urlsplit

import pytest
from openpyxl import load_workbook
from rest_framework.test import APIClient

from contacts import exports
from contacts.models import Contact, ExportJob
from platform_core.audit.models import AuditLogEntry
from platform_core.events.models import Event
from platform_core.files.models import StoredFile
from platform_core.identity import services as identity_services
from platform_core.identity.models import KeyMode, KeyType
from platform_core.tenancy.context import tenant_context
from tests.contacts.helpers import (
    bulk_contacts,
    client_with_role,
    error_code,
    make_contact,
    make_list,
)

pytestmark = pytest.mark.django_db

EXPORT = "/api/v1/contacts/export"
BULK = "/api/v1/contacts/bulk/export"
JOBS = "/api/v1/contacts/exports"


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    root = tmp_path / "media"
    root.mkdir()
    settings.MEDIA_ROOT = str(root)
    return root


def body_of(response) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return response.content


def parse_csv(response) -> list[dict]:
    text = body_of(response).decode("utf-8")
    assert text.startswith("\ufeff")
    return list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))


def export(client, body=None, **query):
    suffix = "&".join(f"{k}={v}" for k, v in query.items())
    return client.post(f"{EXPORT}{'?' + suffix if suffix else ''}", body or {}, format="json")


# --- Streamed export --------------------------------------------------------------------------


def test_csv_has_every_custom_field_and_is_streamed(tenant):
    make_contact(tenant, first_name="Ann", phone="+14155550123", email="ann@x.com",
                 custom_fields={"plan": "pro", "seats": 3}, tags=["vip", "beta"])
    make_contact(tenant, first_name="Bob", custom_fields={"region": "eu", "trial": True})
    make_contact(tenant, first_name="Cy")
    response = export(tenant.client(), filename="my list")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="my list.csv"'
    assert response["X-Export-Rows"] == "3"
    rows = parse_csv(response)
    assert list(rows[0]) == ["id", "first_name", "last_name", "phone", "email", "tags",
                             "created_at", "updated_at", "custom_fields.plan",
                             "custom_fields.region", "custom_fields.seats",
                             "custom_fields.trial"]
    by_name = {r["first_name"]: r for r in rows}
    # safe_cell quotes a leading "+" (platform_core.exports); the number itself is intact.
    assert by_name["Ann"]["phone"].lstrip("'") == "+14155550123"
    assert by_name["Ann"]["tags"] == "vip; beta"
    assert by_name["Ann"]["custom_fields.seats"] == "3"
    assert by_name["Ann"]["custom_fields.region"] == ""
    assert by_name["Bob"]["custom_fields.trial"] == "true"
    assert by_name["Cy"]["custom_fields.plan"] == ""


def test_csv_neutralizes_formulas(tenant):
    make_contact(tenant, first_name="=HYPERLINK(\"http://evil\")", last_name="+SUM(A1)",
                 custom_fields={"note": "@cmd", "n": -5}, tags=["-x"])
    row = parse_csv(export(tenant.client()))[0]
    assert row["first_name"].startswith("'=")
    assert row["last_name"].startswith("'+")
    assert row["custom_fields.note"] == "'@cmd"
    assert row["custom_fields.n"] == "-5"  # numbers stay numbers
    assert row["tags"] == "'-x"


def test_filters_list_q_tags_and_ids(tenant):
    ann = make_contact(tenant, first_name="Ann", email="ann@acme.com", tags=["vip"])
    bob = make_contact(tenant, first_name="Bob", email="bob@acme.com", tags=["vip", "beta"])
    cy = make_contact(tenant, first_name="Cy", email="cy@other.org", tags=["beta"])
    contact_list = make_list(tenant, members=[ann, cy])
    client = tenant.client()

    def exported(body):
        response = export(client, body)
        assert response.status_code == 200, response.content
        return {r["id"] for r in parse_csv(response)}

    assert exported({"list_id": contact_list.pk}) == {ann.pk, cy.pk}
    assert exported({"q": "email:*@acme.com"}) == {ann.pk, bob.pk}
    assert exported({"tags": ["vip", "beta"]}) == {bob.pk}
    assert exported({"contact_ids": [ann.pk, bob.pk], "tags": ["beta"]}) == {bob.pk}
    assert exported({"list_id": contact_list.pk, "q": "tag:beta"}) == {cy.pk}


def test_filters_that_match_nothing_export_an_empty_file(tenant,
                                                          django_capture_on_commit_callbacks):
    """`contact_ids: []` can match no row at all (the ORM refuses to build its SQL): an
    export of no rows, never a 500."""
    make_contact(tenant, first_name="Ann", email="ann@acme.com", custom_fields={"plan": "x"})
    for body in ({"contact_ids": []}, {"contact_ids": [], "tags": ["vip"], "q": "ann"}):
        response = export(tenant.client(), body)
        assert response.status_code == 200, response.content
        assert parse_csv(response) == []
    job = run_bulk(tenant, django_capture_on_commit_callbacks, {"contact_ids": []})
    detail = tenant.client().get(f"{JOBS}/{job['id']}").json()["data"]
    assert (detail["status"], detail["rows_total"]) == ("succeeded", 0)


def test_errors_before_streaming_are_json(tenant, other_tenant):
    foreign_list = make_list(other_tenant)
    client = tenant.client()
    for response in (
        export(client, {"list_id": "lst_unknown"}),
        export(client, {"list_id": foreign_list.pk}),
        export(client, {"q": "tag:"}),
        export(client, {"tags": "vip"}),
    ):
        assert response.status_code == 422, response.content
        assert response["Content-Type"].startswith("application/json")
        assert error_code(response) == "VALIDATION_ERROR"
    bad_format = export(client, format="pdf")
    assert bad_format.status_code == 400
    assert error_code(bad_format) == "VALIDATION_ERROR"


def test_row_limit(tenant):
    bulk_contacts(tenant, exports.EXPORT_MAX_ROWS)
    at_limit = export(tenant.client())
    assert at_limit.status_code == 200
    assert len(parse_csv(at_limit)) == exports.EXPORT_MAX_ROWS
    bulk_contacts(tenant, 1)
    over = export(tenant.client(), {}, format="xlsx")
    assert over.status_code == 422
    assert over["Content-Type"].startswith("application/json")
    assert error_code(over) == "EXPORT_TOO_LARGE"
    assert over.json()["error"]["details"] == {"limit": 10_000,
                                               "bulk_export": "/api/v1/contacts/bulk/export"}
    # A filter bringing it under the limit is fine.
    assert export(tenant.client(), {"q": "Person1"}).status_code == 200


def test_xlsx(tenant):
    make_contact(tenant, first_name="=1+1", email="ann@x.com", custom_fields={"seats": 3})
    response = export(tenant.client(), format="xlsx", filename="../../etc/passwd")
    assert response.status_code == 200
    assert response["Content-Type"] == exports.CONTENT_TYPES["xlsx"]
    assert 'filename="passwd.xlsx"' in response["Content-Disposition"]
    sheet = load_workbook(io.BytesIO(body_of(response))).active
    rows = list(sheet.iter_rows(values_only=False))
    header = [c.value for c in rows[0]]
    assert header[-1] == "custom_fields.seats"
    first_name = rows[1][header.index("first_name")]
    assert first_name.value == "=1+1"
    assert first_name.data_type == "s"  # text, never a formula
    assert rows[1][header.index("custom_fields.seats")].value == 3


def test_accept_header_does_not_matter(tenant):
    make_contact(tenant, first_name="a")
    response = tenant.client().post(EXPORT, {}, format="json", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200


@pytest.mark.parametrize(("role", "allowed"), [("owner", True), ("admin", True),
                                               ("developer", True), ("agent", False),
                                               ("viewer", False)])
def test_roles(tenant, role, allowed):
    make_contact(tenant, first_name="a")
    client = client_with_role(tenant, role)
    for response in (export(client), client.post(BULK, {}, format="json"),
                     client.get(JOBS)):
        if allowed:
            assert response.status_code in (200, 202), response.content
        else:
            assert response.status_code == 403
            assert error_code(response) == "INSUFFICIENT_PERMISSIONS"


def test_scoped_key_acts_as_developer(tenant):
    _key, raw = identity_services.api_key_create(
        organization=tenant.org, name="ro", key_type=KeyType.SECRET,
        mode=KeyMode.TEST if tenant.org.sandbox else KeyMode.LIVE, scopes=["contacts:read"],
    )
    assert export(tenant.client(raw)).status_code == 200
    _key, other = identity_services.api_key_create(
        organization=tenant.org, name="msg", key_type=KeyType.SECRET,
        mode=KeyMode.TEST if tenant.org.sandbox else KeyMode.LIVE, scopes=["messages:read"],
    )
    assert export(tenant.client(other)).status_code == 403


def test_export_is_audited(tenant):
    bulk_contacts(tenant, 4)
    export(tenant.client(), {"q": "bulk"}, format="csv")
    entry = AuditLogEntry.objects.get(organization=tenant.org, action="contact.exported")
    assert entry.metadata["rows"] == 4
    assert entry.metadata["format"] == "csv"
    assert entry.metadata["filters"]["q"] == "bulk"


def test_export_reads_rows_through_a_chunked_iterator(tenant, monkeypatch):
    """Rows stream from `.iterator(chunk_size=2000)`: never a list of every row."""
    bulk_contacts(tenant, 3)
    from django.db.models.query import QuerySet

    calls = []
    original = QuerySet.iterator

    def spy(self, chunk_size=None):
        if self.model is Contact:
            calls.append(chunk_size)
        return original(self, chunk_size=chunk_size)

    monkeypatch.setattr(QuerySet, "iterator", spy)
    assert len(parse_csv(export(tenant.client()))) == 3
    assert calls == [exports.CHUNK_SIZE]


# --- Background export -----------------------------------------------------------------------


def download(url: str) -> bytes:
    parts = urlsplit(url)
    response = APIClient().get(f"{parts.path}?{parts.query}")
    assert response.status_code == 200
    return body_of(response)


def run_bulk(tenant, django_capture_on_commit_callbacks, body=None):
    with django_capture_on_commit_callbacks(execute=True):
        response = tenant.client().post(BULK, body or {}, format="json")
    assert response.status_code == 202, response.content
    return response.json()["data"]


def test_bulk_export_runs_and_offers_the_file(tenant, django_capture_on_commit_callbacks):
    bulk_contacts(tenant, 25, custom_fields={"plan": "pro"})
    make_contact(tenant, first_name="Other", email="o@x.com")
    job = run_bulk(tenant, django_capture_on_commit_callbacks,
                   {"q": "email:*@bulk.example.com", "filename": "big"})
    assert job["id"].startswith("exp_")
    assert job["status"] == "queued"
    detail = tenant.client().get(f"{JOBS}/{job['id']}").json()["data"]
    assert detail["status"] == "succeeded"
    assert (detail["rows_done"], detail["rows_total"], detail["progress"]) == (25, 25, 1.0)
    assert detail["filename"] == "big.csv"
    assert detail["download_url"]
    rows = list(csv.DictReader(io.StringIO(download(detail["download_url"]).decode().lstrip(
        "\ufeff"))))
    assert len(rows) == 25
    assert rows[0]["custom_fields.plan"] == "pro"
    with tenant_context(tenant.org):
        stored = StoredFile.objects.get(pk=detail["file_id"])
        assert stored.purpose == "contact_export"
        event = Event.objects.get(type="contact.export.completed")
        assert event.data["export_id"] == job["id"]
        assert event.data["rows"] == 25


def test_bulk_export_xlsx_and_list(tenant, django_capture_on_commit_callbacks):
    bulk_contacts(tenant, 3)
    job = run_bulk(tenant, django_capture_on_commit_callbacks, {"format": "xlsx"})
    detail = tenant.client().get(f"{JOBS}/{job['id']}").json()["data"]
    assert detail["status"] == "succeeded"
    sheet = load_workbook(io.BytesIO(download(detail["download_url"]))).active
    assert sheet.max_row == 4
    listed = tenant.client().get(JOBS).json()["data"]
    assert [j["id"] for j in listed] == [job["id"]]


def test_bulk_export_bad_filters_create_no_job(tenant):
    response = tenant.client().post(BULK, {"list_id": "lst_unknown"}, format="json")
    assert response.status_code == 422
    bad_format = tenant.client().post(BULK, {"format": "pdf"}, format="json")
    assert bad_format.status_code == 422
    with tenant_context(tenant.org):
        assert not ExportJob.objects.exists()


def _assert_failed_cleanly(tenant, job_id, media_root):
    detail = tenant.client().get(f"{JOBS}/{job_id}").json()["data"]
    assert detail["status"] == "failed"
    assert detail["download_url"] is None
    assert detail["error"]
    assert detail["file_id"] is None
    with tenant_context(tenant.org):
        assert not StoredFile.objects.filter(purpose="contact_export").exists()
        assert Event.objects.filter(type="contact.export.failed").count() == 1
        assert not Event.objects.filter(type="contact.export.completed").exists()
    assert not [p for p in media_root.rglob("*") if p.is_file()]
    return detail


def test_writer_failing_midway_leaves_a_failed_job(tenant, monkeypatch, media_root,
                                                   django_capture_on_commit_callbacks):
    bulk_contacts(tenant, 10)
    monkeypatch.setattr(exports, "PROGRESS_EVERY", 2)
    seen_progress = []
    real_write = exports.write_export

    def failing(target, fmt, header, rows):
        def five_then_fail():
            for i, row in enumerate(rows):
                if i == 5:
                    with tenant_context(tenant.org):
                        seen_progress.append(ExportJob.objects.get().rows_done)
                    raise OSError("disk full")
                yield row
        real_write(target, fmt, header, five_then_fail())

    monkeypatch.setattr(exports, "write_export", failing)
    job = run_bulk(tenant, django_capture_on_commit_callbacks)
    assert seen_progress == [4]  # progress was being reported when it broke
    detail = _assert_failed_cleanly(tenant, job["id"], media_root)
    assert detail["rows_done"] < detail["rows_total"] == 10


def test_failure_when_marking_success_removes_the_file(tenant, monkeypatch, media_root,
                                                       django_capture_on_commit_callbacks):
    bulk_contacts(tenant, 3)
    real_emit = exports.emit

    def emit(**kwargs):
        if kwargs["type"] == "contact.export.completed":
            raise RuntimeError("outbox down")
        return real_emit(**kwargs)

    monkeypatch.setattr(exports, "emit", emit)
    job = run_bulk(tenant, django_capture_on_commit_callbacks)
    _assert_failed_cleanly(tenant, job["id"], media_root)


def test_a_claimed_job_is_not_run_twice(tenant, django_capture_on_commit_callbacks):
    bulk_contacts(tenant, 2)
    job = run_bulk(tenant, django_capture_on_commit_callbacks)
    from contacts.tasks import run_contact_export

    assert run_contact_export(job["id"], tenant.org.pk) == "succeeded"
    with tenant_context(tenant.org):
        assert StoredFile.objects.filter(purpose="contact_export").count() == 1
