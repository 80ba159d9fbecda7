"""Files (Document 2, 2.7, 4.10 and 8): upload, list, presign, signed download, delete."""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import time_machine
from django.conf import settings
from django.core.files.storage import default_storage
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from platform_core.audit.models import AuditLogEntry
from platform_core.files.models import StoredFile

from .conftest import (
    FILES,
    body_of,
    download,
    make_key,
    storage_name_of,
    stored_file,
    upload,
)

MB = 1024 * 1024


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"]["code"] == code, body
    assert body["error"]["status"] == status
    assert body["meta"]["request_id"]
    return body


def issue_fields(body: dict) -> set[str]:
    return {issue["field"] for issue in body["error"]["details"]["issues"]}


def iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


# --- Upload and download -------------------------------------------------------------------


@pytest.mark.parametrize(
    "size", [1024, 3 * MB], ids=["in-memory", "temporary-file"]  # FILE_UPLOAD_MAX_MEMORY_SIZE
)
def test_upload_and_download_round_trip(tenant, media_root, size):
    content = os.urandom(size)
    response = upload(tenant.client(), content, name="report 2024.pdf",
                      content_type="application/pdf", purpose="loa")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["id"].startswith("fil_")
    assert data["purpose"] == "loa"
    assert data["filename"] == "report 2024.pdf"
    assert data["content_type"] == "application/pdf"
    assert data["size"] == size
    assert data["sha256"] == hashlib.sha256(content).hexdigest()
    assert data["created_by"] == tenant.key.pk
    assert data["ttl_ms"] == 3_600_000
    expires = iso(data["expires_at"])
    assert data["expires_at"].endswith("Z")
    assert abs((expires - (datetime.now(UTC) + timedelta(hours=1))).total_seconds()) < 5
    assert data["url"].startswith(f"{settings.PUBLIC_BASE_URL}/api/v1/files/{data['id']}/content?")

    # The bytes are in the storage under MEDIA_ROOT, not in the database.
    name = storage_name_of(tenant, data["id"])
    assert (media_root / name).read_bytes() == content

    # The signed URL works without any credential and streams the exact bytes.
    got = download(data["url"])
    assert got.status_code == 200
    assert body_of(got) == content
    assert got["Content-Type"] == "application/pdf"
    assert got["Content-Disposition"] == 'attachment; filename="report 2024.pdf"'
    assert got["X-Content-Type-Options"] == "nosniff"
    assert got["ETag"] == f'"{data["sha256"]}"'
    parts = urlsplit(data["url"])
    head = APIClient().head(f"{parts.path}?{parts.query}")
    assert head.status_code == 200
    assert head["Content-Length"] == str(size)

    entry = AuditLogEntry.objects.get(action="file.uploaded", target_id=data["id"])
    assert entry.organization_id == tenant.org.pk
    assert entry.actor_id == tenant.key.pk
    assert entry.metadata["size"] == size


def test_download_ignores_accept_header_and_keeps_unicode_filename(tenant):
    response = upload(tenant.client(), b"\x89PNG...", name="café.png",
                      content_type="application/octet-stream")
    data = response.json()["data"]
    assert data["content_type"] == "image/png"  # a generic type is refined by the name
    got = download(data["url"])
    assert got.status_code == 200
    assert got["Content-Disposition"] == "attachment; filename*=utf-8''caf%C3%A9.png"
    parts = urlsplit(data["url"])
    picky = APIClient().get(f"{parts.path}?{parts.query}", HTTP_ACCEPT="image/*")
    assert picky.status_code == 200
    assert body_of(picky) == b"\x89PNG..."


def test_upload_ttl_ms_sets_the_url_lifetime(tenant):
    data = upload(tenant.client(), query="?ttl_ms=120000").json()["data"]
    assert data["ttl_ms"] == 120_000
    expected = datetime.now(UTC) + timedelta(minutes=2)
    assert abs((iso(data["expires_at"]) - expected).total_seconds()) < 5
    clamped = upload(tenant.client(), query="?ttl_ms=5").json()["data"]
    assert clamped["ttl_ms"] == 60_000
    body = assert_error(upload(tenant.client(), query="?ttl_ms=soon"), 400, "VALIDATION_ERROR")
    assert issue_fields(body) == {"ttl_ms"}


def test_upload_is_idempotent(tenant):
    client = tenant.client()
    first = upload(client, b"once", HTTP_IDEMPOTENCY_KEY="upload-1")
    again = upload(client, b"once", HTTP_IDEMPOTENCY_KEY="upload-1")
    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["data"]["id"] == first.json()["data"]["id"]
    assert StoredFile.objects.for_organization(tenant.org).count() == 1


def test_session_user_can_upload(tenant):
    response = upload(tenant.session_client(), b"from the dashboard")
    assert response.status_code == 201, response.content
    assert response.json()["data"]["created_by"] == tenant.owner.pk


# --- Limits and validation -------------------------------------------------------------------


def test_file_just_over_25_mb_is_refused(tenant, media_root, settings, tmp_path):
    assert settings.FILE_UPLOAD_MAX_BYTES == 25 * MB
    spool = tmp_path / "spool"
    spool.mkdir()
    settings.FILE_UPLOAD_TEMP_DIR = str(spool)
    body = assert_error(upload(tenant.client(), b"\0" * (25 * MB + 1), name="big.bin"),
                        413, "FILE_TOO_LARGE")
    assert body["error"]["details"]["max_bytes"] == 25 * MB
    assert not StoredFile.objects.for_organization(tenant.org).exists()
    assert list(media_root.rglob("*")) == []
    assert list(spool.iterdir()) == []  # the partial temporary file is gone too
    assert not AuditLogEntry.objects.filter(action="file.uploaded").exists()


def test_file_of_exactly_25_mb_is_accepted(tenant, media_root):
    response = upload(tenant.client(), b"\0" * (25 * MB), name="exact.bin")
    assert response.status_code == 201, response.content
    assert response.json()["data"]["size"] == 25 * MB


def test_body_declared_beyond_any_upload_is_refused_before_reading(tenant, settings):
    settings.FILE_UPLOAD_MAX_BYTES = 1024
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    # 100 KB is beyond file + fields + framing allowance: refused from Content-Length.
    assert_error(upload(tenant.client(), b"x" * 100_000), 413, "FILE_TOO_LARGE")
    # Within the allowance but over the per-file limit: stopped while streaming.
    assert_error(upload(tenant.client(), b"x" * 2000), 413, "FILE_TOO_LARGE")
    assert upload(tenant.client(), b"x" * 1024).status_code == 201


@pytest.mark.parametrize(
    ("content", "purpose", "fields"),
    [
        (None, "loa", {"file"}),
        (b"data", None, {"purpose"}),
        (b"data", "", {"purpose"}),
        (None, None, {"file", "purpose"}),
    ],
    ids=["no-file", "no-purpose", "blank-purpose", "neither"],
)
def test_missing_fields_answer_422_naming_them(tenant, content, purpose, fields):
    body = assert_error(upload(tenant.client(), content, purpose=purpose), 422,
                        "VALIDATION_ERROR")
    assert issue_fields(body) == fields
    assert not StoredFile.objects.for_organization(tenant.org).exists()


def test_file_sent_as_a_plain_field_is_not_a_file(tenant):
    response = tenant.client().post("/api/v1/files/upload", {"file": "not a file",
                                                              "purpose": "x"},
                                    format="multipart")
    assert issue_fields(assert_error(response, 422, "VALIDATION_ERROR")) == {"file"}


def test_json_body_is_not_an_upload(tenant):
    response = tenant.client().post("/api/v1/files/upload", {"purpose": "x"}, format="json")
    assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE")


# --- List, read ------------------------------------------------------------------------------


def test_list_paginates_newest_first_and_filters_by_purpose(tenant, other_tenant):
    made = [stored_file(tenant, purpose="loa" if i % 3 == 0 else "mms_attachment").pk
            for i in range(12)]
    stored_file(other_tenant, purpose="loa")
    client = tenant.client()

    seen, cursor = [], None
    while True:
        response = client.get(FILES, {"limit": 5, **({"cursor": cursor} if cursor else {})})
        assert response.status_code == 200, response.content
        page = response.json()
        seen += [item["id"] for item in page["data"]]
        cursor = page["meta"]["pagination"]["cursor"]
        if not page["meta"]["pagination"]["has_more"]:
            break
    assert seen == list(reversed(made))

    first = client.get(FILES, {"purpose": "loa"}).json()
    assert [i["id"] for i in first["data"]] == [pk for pk in reversed(made[::3])]
    assert {i["purpose"] for i in first["data"]} == {"loa"}
    assert first["meta"]["pagination"]["total"] == 4
    item = first["data"][0]
    assert set(item) == {"id", "purpose", "filename", "content_type", "size", "sha256",
                         "created_by", "created_at", "url", "expires_at", "ttl_ms"}
    assert client.get(FILES, {"purpose": "nothing"}).json()["data"] == []


def test_list_query_count_is_constant(tenant, django_assert_max_num_queries):
    client = tenant.client()
    stored_file(tenant)
    client.get(FILES)  # warm the credential cache, if any
    with CaptureQueriesContext(connection) as few:
        assert client.get(FILES).status_code == 200
    for _ in range(15):
        stored_file(tenant)
    with CaptureQueriesContext(connection) as many:
        response = client.get(FILES)
    assert len(response.json()["data"]) == 16
    assert len(many) == len(few)
    with django_assert_max_num_queries(6):
        client.get(FILES, {"purpose": "mms_attachment", "limit": 5})


def test_detail_has_metadata_and_default_signed_url(tenant):
    made = stored_file(tenant, b"abc", name="notes.txt", purpose="kb_document")
    response = tenant.client().get(f"{FILES}/{made.pk}")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["id"] == made.pk
    assert data["filename"] == "notes.txt"
    assert data["content_type"] == "text/plain"
    assert data["size"] == 3
    assert data["ttl_ms"] == 3_600_000
    assert body_of(download(data["url"])) == b"abc"
    assert_error(tenant.client().get(f"{FILES}/fil_UNKNOWN"), 404, "NOT_FOUND")


# --- Presign -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "ttl_ms"),
    [
        ({}, 3_600_000),
        ({"ttl_ms": "120000"}, 120_000),
        ({"ttl_ms": "1000"}, 60_000),
        ({"ttl_ms": "-5"}, 60_000),
        ({"ttl_ms": "604800001"}, 604_800_000),
        ({"ttl_ms": str(10**30)}, 604_800_000),
    ],
    ids=["default", "explicit", "below-minimum", "negative", "above-maximum", "huge"],
)
def test_presign_defaults_and_clamps(tenant, query, ttl_ms):
    made = stored_file(tenant)
    now = datetime(2030, 1, 1, tzinfo=UTC)
    with time_machine.travel(now, tick=False):
        response = tenant.client().get(f"{FILES}/{made.pk}/presign", query)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert set(data) == {"url", "expires_at", "ttl_ms"}
    assert data["ttl_ms"] == ttl_ms
    assert iso(data["expires_at"]) == now + timedelta(milliseconds=ttl_ms)
    assert data["expires_at"].endswith("Z")
    assert parse_qs(urlsplit(data["url"]).query)["expires"] == [
        str(int((now + timedelta(milliseconds=ttl_ms)).timestamp()))]


@pytest.mark.parametrize("raw", ["abc", "1.5", "60000ms", "1e6", "60_000", " 60000"])
def test_presign_rejects_a_non_integer_ttl(tenant, raw):
    made = stored_file(tenant)
    body = assert_error(tenant.client().get(f"{FILES}/{made.pk}/presign", {"ttl_ms": raw}),
                        400, "VALIDATION_ERROR")
    assert issue_fields(body) == {"ttl_ms"}


def test_presign_unknown_id_is_404(tenant):
    assert_error(tenant.client().get(f"{FILES}/fil_01NOPE/presign"), 404, "NOT_FOUND")


def test_presigned_url_works_until_it_expires(tenant):
    made = stored_file(tenant, b"short-lived")
    start = datetime.now(UTC)
    with time_machine.travel(start, tick=False):
        url = tenant.client().get(f"{FILES}/{made.pk}/presign",
                                  {"ttl_ms": "60000"}).json()["data"]["url"]
    with time_machine.travel(start + timedelta(seconds=59), tick=False):
        response = download(url)
        assert response.status_code == 200
        assert body_of(response) == b"short-lived"
    with time_machine.travel(start + timedelta(seconds=62), tick=False):
        body = assert_error(download(url), 403, "URL_EXPIRED")
    assert body["meta"]["docs_url"].endswith("/errors/URL_EXPIRED")


def test_s3_storage_hands_out_its_own_presigned_url(tenant, settings):
    made = stored_file(tenant, b"in the bucket", name="photo.jpg")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": "engage-files", "access_key": "AKIDEXAMPLE",
                "secret_key": "not-a-secret", "region_name": "us-east-1",
                "endpoint_url": "http://127.0.0.1:9", "signature_version": "s3v4",
            },
        },
    }
    data = tenant.client().get(f"{FILES}/{made.pk}/presign",
                               {"ttl_ms": "120000"}).json()["data"]
    assert data["ttl_ms"] == 120_000
    query = parse_qs(urlsplit(data["url"]).query)
    assert urlsplit(data["url"]).path == f"/engage-files/{made.storage_name}"
    assert query["X-Amz-Expires"] == ["120"]
    assert query["response-content-disposition"] == ['attachment; filename="photo.jpg"']


# --- Signatures --------------------------------------------------------------------------------


def _with_query(url: str, **changes) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    query.update(changes)
    query = {k: v for k, v in query.items() if v is not None}
    return parts._replace(query=urlencode(query)).geturl()


def test_tampered_signatures_are_refused(tenant):
    first = stored_file(tenant, b"first")
    second = stored_file(tenant, b"second")
    url = tenant.client().get(f"{FILES}/{first.pk}").json()["data"]["url"]
    query = parse_qs(urlsplit(url).query)
    signature, expires = query["signature"][0], int(query["expires"][0])
    flipped = ("0" if signature[0] != "0" else "1") + signature[1:]

    attempts = [
        _with_query(url, signature=flipped),
        _with_query(url, expires=str(expires + 3600)),  # stretched lifetime
        _with_query(url, signature=None),
        _with_query(url, expires=None),
        _with_query(url, signature=signature.upper()),
        _with_query(url, expires="soon"),
        url.replace(first.pk, second.pk),  # the signature of another file
    ]
    for attempt in attempts:
        assert_error(download(attempt), 403, "URL_SIGNATURE_INVALID")
    assert body_of(download(url)) == b"first"


def test_content_route_needs_a_signature_even_with_a_key(tenant):
    made = stored_file(tenant)
    response = tenant.client().get(f"{FILES}/{made.pk}/content")
    assert_error(response, 403, "URL_SIGNATURE_INVALID")


# --- Delete --------------------------------------------------------------------------------------


def test_delete_removes_the_object_and_answers_404_afterwards(
    tenant, media_root, django_capture_on_commit_callbacks
):
    data = upload(tenant.client(), b"to be removed").json()["data"]
    name = storage_name_of(tenant, data["id"])
    assert default_storage.exists(name)
    client = tenant.client()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.delete(f"{FILES}/{data['id']}")
    assert response.status_code == 204
    assert response.content == b""
    assert not default_storage.exists(name)
    assert not (media_root / name).exists()

    assert_error(client.get(f"{FILES}/{data['id']}"), 404, "NOT_FOUND")
    assert_error(client.get(f"{FILES}/{data['id']}/presign"), 404, "NOT_FOUND")
    assert_error(client.delete(f"{FILES}/{data['id']}"), 404, "NOT_FOUND")
    assert_error(download(data["url"]), 404, "NOT_FOUND")  # a URL handed out earlier
    entry = AuditLogEntry.objects.get(action="file.deleted", target_id=data["id"])
    assert entry.actor_id == tenant.key.pk


# --- Scopes ---------------------------------------------------------------------------------------


def test_read_only_key_can_read_but_not_upload_or_delete(tenant):
    made = stored_file(tenant)
    reader = tenant.client(make_key(tenant, ["files:read"]))
    assert reader.get(FILES).status_code == 200
    assert reader.get(f"{FILES}/{made.pk}").status_code == 200
    assert reader.get(f"{FILES}/{made.pk}/presign").status_code == 200
    body = assert_error(upload(reader), 403, "INSUFFICIENT_PERMISSIONS")
    assert body["error"]["details"]["required_scope"] == "files:write"
    assert_error(reader.delete(f"{FILES}/{made.pk}"), 403, "INSUFFICIENT_PERMISSIONS")
    assert StoredFile.objects.for_organization(tenant.org).count() == 1


def test_write_key_can_upload_and_key_without_files_scope_cannot_list(tenant):
    writer = tenant.client(make_key(tenant, ["files:write"]))
    assert upload(writer).status_code == 201
    assert writer.get(FILES).status_code == 200  # write implies read
    other = tenant.client(make_key(tenant, ["contacts:read"]))
    assert_error(other.get(FILES), 403, "INSUFFICIENT_PERMISSIONS")


def test_anonymous_callers_are_refused(anon):
    assert_error(anon.get(FILES), 401, "UNAUTHORIZED")
    assert_error(upload(anon), 401, "UNAUTHORIZED")
