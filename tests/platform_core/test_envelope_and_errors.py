"""Success and error envelopes (Document 1, 2.1) on every kind of response."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

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
