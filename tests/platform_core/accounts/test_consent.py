"""POST /api/v1/auth/consent: a signed-in person's acceptance, one row per user."""

from __future__ import annotations

from rest_framework.test import APIClient

from platform_core.accounts.models import ConsentRecord
from platform_core.audit.models import AuditLogEntry

from .conftest import PASSWORD, assert_error

URL = "/api/v1/auth/consent"
BODY = {"terms_version": "2024-05-01", "privacy_version": "2024-04-12", "locale": "fr-CA"}


def test_session_records_versions_moment_locale_ip_and_user_agent(tenant, member):
    client = tenant.session_client(member, PASSWORD)
    response = client.post(URL, BODY, format="json", REMOTE_ADDR="203.0.113.9",
                           HTTP_USER_AGENT="Mozilla/5.0 (consent test)")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["terms_version"] == "2024-05-01"
    assert data["privacy_version"] == "2024-04-12"
    assert data["locale"] == "fr-CA"
    assert data["ip_address"] == "203.0.113.9"
    assert data["user_agent"] == "Mozilla/5.0 (consent test)"
    assert data["user_id"] == member.pk
    record = ConsentRecord.objects.get(user=member)
    assert record.accepted_at is not None
    assert record.organization_id == tenant.org.pk
    assert AuditLogEntry.objects.filter(action="consent.accepted", actor_id=member.pk).exists()
    assert client.get(URL).json()["data"]["id"] == record.pk


def test_posting_again_updates_the_record_in_place(tenant, member):
    client = tenant.session_client(member, PASSWORD)
    first = client.post(URL, BODY, format="json").json()["data"]
    second = client.post(URL, {"terms_version": "2025-01-01", "privacy_version": "2025-01-02"},
                         format="json", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9",
                         REMOTE_ADDR="198.51.100.20", HTTP_USER_AGENT="second agent")
    assert second.status_code == 200, second.content
    data = second.json()["data"]
    assert data["id"] == first["id"]
    assert data["terms_version"] == "2025-01-01"
    assert data["locale"] == "de-DE"  # from Accept-Language when the body names none
    assert data["ip_address"] == "198.51.100.20"
    assert data["user_agent"] == "second agent"
    assert data["accepted_at"] > first["accepted_at"]
    assert ConsentRecord.objects.filter(user=member).count() == 1


def test_each_person_has_their_own_record(tenant, member):
    tenant.session_client(member, PASSWORD).post(URL, BODY, format="json")
    tenant.session_client().post(URL, BODY, format="json")
    assert ConsentRecord.objects.count() == 2


def test_api_keys_are_refused(tenant):
    body = assert_error(tenant.client().post(URL, BODY, format="json"), 403,
                        "INSUFFICIENT_PERMISSIONS")
    assert "session" in body["error"]["message"]
    assert ConsentRecord.objects.count() == 0


def test_anonymous_is_refused(db):
    assert_error(APIClient().post(URL, BODY, format="json"), 401, "UNAUTHORIZED")


def test_versions_are_required(tenant):
    body = assert_error(tenant.session_client().post(URL, {"locale": "en"}, format="json"), 422,
                        "VALIDATION_ERROR")
    fields = {i["field"] for i in body["error"]["details"]["issues"]}
    assert fields == {"terms_version", "privacy_version"}


def test_malformed_locale_is_refused(tenant):
    response = tenant.session_client().post(URL, {**BODY, "locale": "<script>"}, format="json")
    assert_error(response, 422, "VALIDATION_ERROR")


def test_no_record_yet_is_not_found(tenant):
    assert_error(tenant.session_client().get(URL), 404, "NOT_FOUND")
