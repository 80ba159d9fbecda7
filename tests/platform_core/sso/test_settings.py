"""GET/PATCH /api/v1/settings/saml and /settings/scim (0-conventions.md section 2)."""

from __future__ import annotations

import pytest
from django.conf import settings

from platform_core.audit.models import AuditLogEntry
from platform_core.identity.models import User

from .idp import TestIdP, make_keypair

URL = "/api/v1/settings/saml"


def _admin_session(tenant):
    response = tenant.client().post(
        "/api/v1/users",
        {
            "email": f"admin-{tenant.org.slug}@example.com",
            "name": "Admin",
            "role": "admin",
            "password": "Another-Horse-7-battery",
        },
        format="json",
    )
    assert response.status_code == 201
    user = User.objects.get(email=f"admin-{tenant.org.slug}@example.com")
    return tenant.session_client(user, "Another-Horse-7-battery")


def _fields(idp: TestIdP, **extra) -> dict:
    return {
        "idp_entity_id": idp.entity_id,
        "idp_sso_url": idp.sso_url,
        "idp_x509_cert": idp.cert_pem,
        **extra,
    }


def test_get_defaults_with_sp_addresses(tenant):
    data = tenant.session_client().get(URL).json()["data"]
    base = f"{settings.PUBLIC_BASE_URL}/auth/saml/{tenant.org.slug}"
    assert data["enabled"] is False
    assert data["sp_entity_id"] == f"{base}/metadata"
    assert data["acs_url"] == f"{base}/callback"
    assert data["metadata_url"] == f"{base}/metadata"
    assert {
        "idp_entity_id",
        "idp_sso_url",
        "idp_slo_url",
        "idp_x509_cert",
        "idp_metadata_xml",
    } <= set(data)


def test_owner_enables_with_a_passing_connection_test(tenant, idp):
    response = tenant.session_client().patch(URL, _fields(idp, enabled=True), format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["enabled"] is True
    assert data["idp_entity_id"] == idp.entity_id
    assert "BEGIN CERTIFICATE" in data["idp_x509_cert"]
    assert "BEGIN CERTIFICATE" in data["sp_certificate"]
    entry = AuditLogEntry.objects.get(organization=tenant.org, action="saml.settings_updated")
    assert entry.metadata["enabled"] is True


def test_metadata_xml_instead_of_the_fields(tenant, idp):
    owner = tenant.session_client()
    response = owner.patch(
        URL, {"enabled": True, "idp_metadata_xml": idp.metadata_xml}, format="json"
    )
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert (data["idp_entity_id"], data["idp_sso_url"]) == (idp.entity_id, idp.sso_url)
    both = owner.patch(
        URL,
        {"idp_metadata_xml": idp.metadata_xml, "idp_sso_url": "https://x.example.test"},
        format="json",
    )
    assert both.status_code == 422
    assert both.json()["error"]["code"] == "VALIDATION_ERROR"


def test_only_the_owner_may_change_it(tenant, idp):
    admin = _admin_session(tenant)
    # An API key acts as admin, not owner; an admin's session neither.
    for client in (tenant.client(), admin):
        response = client.patch(URL, _fields(idp, enabled=True), format="json")
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"
    assert admin.get(URL).status_code == 200  # admins may read it
    assert tenant.client().get(URL).status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"idp_sso_url": "https://idp.example.test/sso", "idp_x509_cert": "PEM?"}, "idp_x509_cert"),
        ({"idp_metadata_xml": "<not-metadata/>"}, "idp_metadata_xml"),
        ({"idp_metadata_xml": "<!DOCTYPE x [<!ENTITY a 'b'>]><x>&a;</x>"}, "idp_metadata_xml"),
    ],
    ids=["bad-certificate", "bad-metadata", "xml-entities"],
)
def test_unparsable_idp_data_is_refused(tenant, body, field):
    response = tenant.session_client().patch(URL, {"enabled": True, **body}, format="json")
    assert response.status_code == 422
    issues = response.json()["error"]["details"]["issues"]
    assert issues[0]["field"] == field


def test_enabling_runs_the_connection_test(tenant, idp):
    owner = tenant.session_client()
    # Stored while disabled: incomplete data is fine.
    partial = owner.patch(URL, {"idp_entity_id": idp.entity_id}, format="json")
    assert partial.status_code == 200
    response = owner.patch(URL, {"enabled": True}, format="json")
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "SAML_CONNECTION_TEST_FAILED"
    assert {i["field"] for i in error["details"]["issues"]} == {"idp_sso_url", "idp_x509_cert"}
    assert owner.get(URL).json()["data"]["enabled"] is False

    _key, expired = make_keypair("old-idp", days=10, offset_days=-30)
    response = owner.patch(URL, _fields(idp, enabled=True, idp_x509_cert=expired), format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "SAML_CONNECTION_TEST_FAILED"
    assert "expired" in response.json()["error"]["message"]


def test_changing_the_idp_while_enabled_is_tested_again(tenant, idp):
    owner = tenant.session_client()
    assert owner.patch(URL, _fields(idp, enabled=True), format="json").status_code == 200
    response = owner.patch(URL, {"idp_sso_url": ""}, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "SAML_CONNECTION_TEST_FAILED"
    assert owner.patch(URL, {"enabled": False}, format="json").json()["data"]["enabled"] is False


def test_scim_settings_shape(tenant):
    data = tenant.session_client().get("/api/v1/settings/scim").json()["data"]
    assert data == {
        "enabled": False,
        "token_last4": "",
        "token_created_at": None,
        "max_role": "admin",
        "group_role_map": {},
        "base_url": f"{settings.PUBLIC_BASE_URL}/scim/v2/{tenant.org.slug}",
    }
    response = tenant.session_client().patch(
        "/api/v1/settings/scim", {"enabled": True}, format="json"
    )
    assert response.status_code == 422
