"""Organization settings: GET/PATCH /api/v1/organization (0-conventions.md section 2)."""

from __future__ import annotations

import pytest

from platform_core.audit.models import AuditLogEntry
from platform_core.tenancy.models import Organization

from .conftest import add_member, assert_error, session_for

URL = "/api/v1/organization"


def test_get(tenant):
    data = tenant.client().get(URL).json()["data"]
    assert set(data) == {
        "id",
        "name",
        "slug",
        "sandbox",
        "timezone",
        "currency",
        "default_country",
        "created_at",
    }
    assert (data["id"], data["slug"], data["sandbox"]) == (tenant.org.pk, tenant.org.slug, True)


def test_patch_every_field(tenant):
    body = {
        "name": "Renamed",
        "timezone": "Europe/Berlin",
        "currency": "eur",
        "default_country": "de",
        "sandbox": False,
    }
    response = tenant.session_client().patch(URL, body, format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert (
        data["name"],
        data["timezone"],
        data["currency"],
        data["default_country"],
        data["sandbox"],
    ) == ("Renamed", "Europe/Berlin", "EUR", "DE", False)
    org = Organization.objects.get(pk=tenant.org.pk)
    assert (org.name, org.timezone, org.currency, org.default_country) == (
        "Renamed",
        "Europe/Berlin",
        "EUR",
        "DE",
    )
    assert AuditLogEntry.objects.filter(
        organization=tenant.org, action="organization.updated"
    ).exists()


def test_changes_show_through_cached_credentials(tenant):
    client = tenant.client()
    assert client.get(URL).json()["data"]["name"] != "Fresh"
    client.patch(URL, {"name": "Fresh"}, format="json")
    assert client.get(URL).json()["data"]["name"] == "Fresh"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("timezone", "Mars/Olympus"),
        ("timezone", "../../etc/passwd"),
        ("timezone", ""),
        ("timezone", "localtime"),
        ("timezone", "utc"),
        ("default_country", "XX"),
        ("default_country", "USA"),
        ("default_country", "AC"),
        ("default_country", "1A"),
        ("currency", "EURO"),
        ("currency", "E1R"),
        ("name", ""),
        ("sandbox", "maybe"),
    ],
)
def test_invalid_values_are_422(tenant, field, value):
    response = tenant.client().patch(URL, {field: value}, format="json")
    body = assert_error(response, 422, "VALIDATION_ERROR")
    assert body["error"]["details"]["issues"][0]["field"] == field
    assert Organization.objects.get(pk=tenant.org.pk).timezone == "UTC"


def test_slug_and_id_are_read_only(tenant):
    response = tenant.client().patch(URL, {"slug": "hijack", "id": "org_x"}, format="json")
    assert response.status_code == 200
    assert response.json()["data"]["slug"] == tenant.org.slug


@pytest.mark.parametrize("role", ["viewer", "agent", "developer"])
def test_non_admin_roles_cannot_patch(tenant, role):
    client = session_for(tenant, add_member(tenant, role))
    assert client.get(URL).status_code == 200
    assert_error(client.patch(URL, {"name": "x"}, format="json"), 403, "INSUFFICIENT_PERMISSIONS")


def test_admin_can_patch(tenant):
    client = session_for(tenant, add_member(tenant, "admin"))
    assert client.patch(URL, {"name": "By admin"}, format="json").status_code == 200


def test_other_tenant_unaffected(tenant, other_tenant):
    assert tenant.client().patch(URL, {"name": "Only mine"}, format="json").status_code == 200
    assert tenant.client().get(URL).json()["data"]["name"] == "Only mine"
    assert other_tenant.client().get(URL).json()["data"]["name"] != "Only mine"


@pytest.mark.parametrize("country", ["AQ", "gb", "FR"])
def test_iso_countries_accepted(tenant, country):
    response = tenant.client().patch(URL, {"default_country": country}, format="json")
    assert response.status_code == 200
    assert response.json()["data"]["default_country"] == country.upper()
