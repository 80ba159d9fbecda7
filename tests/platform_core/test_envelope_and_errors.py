"""Success and error envelopes (Document 1, 2.1) on every kind of response."""

from __future__ import annotations

import re

import pytest
from django.test import Client, override_settings

from platform_core import errors

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def assert_error(response, status: int, code: str):
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error", "meta"}
    assert body["error"]["code"] == code
    assert body["error"]["status"] == status
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    meta = body["meta"]
    assert meta["request_id"] == response["X-Request-Id"]
    assert ISO.match(meta["timestamp"])
    assert meta["docs_url"].endswith(f"/errors/{code}")
    return body


def test_success_envelope_carries_request_id_and_timestamp(tenant):
    response = tenant.client().get("/api/v1/organization")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"data", "meta"}
    assert body["data"]["id"] == tenant.org.pk
    assert body["meta"]["request_id"] == response["X-Request-Id"]
    assert body["meta"]["request_id"].startswith("req_")
    assert ISO.match(body["meta"]["timestamp"])
    assert "pagination" not in body["meta"]


def test_unknown_route_answers_404_envelope(anon):
    assert_error(anon.get("/api/v1/no-such-thing"), 404, "NOT_FOUND")
    assert_error(anon.get("/totally/elsewhere"), 404, "NOT_FOUND")


def test_unknown_id_answers_404_envelope(tenant):
    assert_error(tenant.client().get("/api/v1/api-keys/key_DOESNOTEXIST"), 404, "NOT_FOUND")


def test_method_not_allowed_answers_405_envelope(tenant):
    assert_error(tenant.client().delete("/api/v1/organization"), 405, "METHOD_NOT_ALLOWED")


def test_unauthenticated_answers_401_envelope(anon):
    body = assert_error(anon.get("/api/v1/organization"), 401, "UNAUTHORIZED")
    assert body["error"]["details"] == {}


def test_malformed_json_is_400_validation_error(tenant):
    response = tenant.client().generic(
        "PATCH", "/api/v1/organization", "{not json", content_type="application/json"
    )
    body = assert_error(response, 400, "VALIDATION_ERROR")
    assert body["error"]["details"]["issues"][0]["field"] == "body"


def test_field_validation_lists_issues_by_field(tenant):
    response = tenant.client().patch(
        "/api/v1/organization", {"timezone": "Mars/Olympus", "default_country": "ZZ"}, format="json"
    )
    body = assert_error(response, 422, "VALIDATION_ERROR")
    fields = {issue["field"] for issue in body["error"]["details"]["issues"]}
    assert fields == {"timezone", "default_country"}
    assert all(issue["message"] for issue in body["error"]["details"]["issues"])


@override_settings(ROOT_URLCONF="tests.platform_core.crash_urls")
def test_unhandled_exception_answers_500_envelope_and_logs(tenant, caplog):
    response = tenant.client().get("/test/crash")
    body = assert_error(response, 500, "INTERNAL_ERROR")
    assert "boom" not in body["error"]["message"]  # internals are logged, not shown
    assert any("boom" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


@override_settings(ROOT_URLCONF="tests.platform_core.crash_urls")
@pytest.mark.django_db(transaction=True)
def test_database_failure_answers_db_error(tenant_factory):
    tenant = tenant_factory()
    assert_error(tenant.client().get("/test/db-crash"), 500, "DB_ERROR")



@pytest.mark.django_db(transaction=True)  # autocommit, as under gunicorn
@pytest.mark.parametrize(("path", "body"), [
    ("/api/v1/events/track",
     '{"event": "x", "contact_email": "a@b.co", "properties": {"a": "x\\u0000y"}}'),
    ("/api/v1/contacts",
     '{"email": "nul@b.co", "custom_fields": {"note": "x\\u0000y"}}'),
])
def test_a_value_the_database_cannot_store_is_a_validation_error(tenant_factory, path, body):
    """A NUL inside a JSON value passes the serializers but not PostgreSQL: the write is
    refused as the caller's input (422), never a 500, and nothing is stored."""
    client = tenant_factory().client()
    before = client.get("/api/v1/contacts").json()["data"]
    response = client.post(path, body, content_type="application/json")
    payload = assert_error(response, 422, "VALIDATION_ERROR")
    assert "cannot be stored" in payload["error"]["message"]
    assert client.get("/api/v1/contacts").json()["data"] == before

def test_request_id_header_adopts_wellformed_inbound_id(tenant):
    response = tenant.client().get("/api/v1/organization", HTTP_X_REQUEST_ID="proxy-abc-12345")
    assert response["X-Request-Id"] == "proxy-abc-12345"
    assert response.json()["meta"]["request_id"] == "proxy-abc-12345"
    response = tenant.client().get("/api/v1/organization", HTTP_X_REQUEST_ID="bad id\n")
    assert response["X-Request-Id"].startswith("req_")


def test_docs_url_redirects_307_to_listing_anchor(anon):
    response = anon.get("/errors/NOT_FOUND")
    assert response.status_code == 307
    assert response["Location"] == "/reference/error-codes#NOT_FOUND"


def test_error_listing_page_has_every_registered_code_with_anchor(anon):
    response = anon.get("/reference/error-codes")
    assert response.status_code == 200
    html = response.content.decode()
    codes = errors.all_codes()
    assert len(codes) > 20
    for entry in codes:
        assert f'id="{entry.code}"' in html
        assert f'id="{entry.code.lower()}"' in html  # anchors are case-insensitive


def test_registry_refuses_unknown_codes():
    with pytest.raises(KeyError):
        errors.APIError("NOT_A_REGISTERED_CODE")


def test_delete_answers_204_with_empty_body(tenant):
    created = tenant.client().post(
        "/api/v1/api-keys", {"name": "tmp", "scopes": ["contacts:read"]}, format="json"
    )
    response = tenant.client().delete(f"/api/v1/api-keys/{created.json()['data']['id']}")
    assert response.status_code == 204
    assert response.content == b""


# --- Whatever the method, route or failure: the envelope ----------------------------------

UNKNOWN_PATHS = ["/api/v1/agentz", "/api/v1/no/such/route", "/api/elsewhere",
                 "/scim/v2", "/scim/nothing-here", "/auth/nothing-here",
                 "/auth/saml/x/y/z", "/api/v1/inbound/nowhere/org"]
EVERY_METHOD = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]


@pytest.mark.parametrize("path", UNKNOWN_PATHS)
def test_every_method_on_an_unknown_path_answers_the_404_envelope(tenant, path):
    """The CSRF check never decides an API answer (credentials are headers, not cookies),
    even for a browser-like client that enforces it and carries a session cookie."""
    client = Client(enforce_csrf_checks=True)
    client.cookies["sessionid"] = "anything"
    for method in EVERY_METHOD:
        response = client.generic(method, path, b'{"a": 1}', content_type="application/json",
                                  HTTP_X_API_KEY=tenant.raw_key)
        assert_error(response, 404, "NOT_FOUND")
    head = client.head(path, HTTP_X_API_KEY=tenant.raw_key)
    assert head.status_code == 404
    assert head["Content-Type"].startswith("application/json")


def test_admin_console_keeps_its_csrf_check():
    client = Client(enforce_csrf_checks=True)
    response = client.post("/admin/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403  # Django's own check, for the cookie session


def test_too_many_form_fields_answers_400_envelope(tenant, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    body = "&".join(f"f{i}=v" for i in range(50))
    response = tenant.client().generic("POST", "/api/v1/contacts", body,
                                       content_type="application/x-www-form-urlencoded")
    error = assert_error(response, 400, "VALIDATION_ERROR")["error"]
    assert "fields" in error["message"]


def test_malformed_multipart_bodies_answer_the_envelope(tenant):
    """A multipart body with no parts is an empty form (the endpoint's own validation
    answers); one that cannot be parsed is a 400 envelope that does not claim to be JSON."""
    empty = tenant.client().generic("POST", "/api/v1/files/upload", b"--boundary--\r\n",
                                    content_type="multipart/form-data; boundary=boundary")
    assert_error(empty, 422, "VALIDATION_ERROR")
    for content_type in ("multipart/form-data", "multipart/form-data; boundary=",
                         "multipart/form-data; boundary=\x00"):
        response = tenant.client().generic("POST", "/api/v1/files/upload", b"x",
                                           content_type=content_type)
        error = assert_error(response, 400, "VALIDATION_ERROR")["error"]
        assert error["message"] == "The request body could not be parsed."
