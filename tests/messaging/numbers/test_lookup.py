"""GET /api/v1/numbers/lookup/{phoneNumber} (Document 2, 4.4): offline, with phonenumbers."""

from __future__ import annotations

from urllib.parse import quote

import pytest

pytestmark = pytest.mark.django_db

LOOKUP = "/api/v1/numbers/lookup/"


def lookup(client, number: str):
    return client.get(LOOKUP + quote(number, safe=""))


def test_mobile_number_with_carrier_and_time_zone(tenant):
    response = lookup(tenant.client(), "+33612345678")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["valid"] is True
    assert data["possible"] is True
    assert data["validation_errors"] == []
    assert data["e164"] == "+33612345678"
    assert data["national_format"] == "06 12 34 56 78"
    assert data["international_format"] == "+33 6 12 34 56 78"
    assert data["country_code"] == 33
    assert data["region"] == "FR"
    assert data["type"] == "mobile"
    assert data["carrier"] == "SFR"
    assert data["time_zones"] == ["Europe/Paris"]


def test_us_number_types_and_unknown_carrier(tenant):
    data = lookup(tenant.client(), "+14155552671").json()["data"]
    assert (data["valid"], data["region"], data["country_code"]) == (True, "US", 1)
    assert data["type"] == "fixed_line_or_mobile"
    assert data["carrier"] is None  # no carrier data for portable NANP ranges
    assert data["time_zones"] == ["America/Los_Angeles"]
    assert data["location"] == "San Francisco, CA"
    assert lookup(tenant.client(), "+18005550199").json()["data"]["type"] == "toll_free"


def test_plus_sign_unencoded_in_path(tenant):
    response = tenant.client().get(LOOKUP + "+442071838750")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["e164"] == "+442071838750"
    assert data["type"] == "fixed_line"
    assert data["region"] == "GB"


def test_national_input_uses_organization_default_country(tenant):
    data = lookup(tenant.client(), "(415) 555-0123").json()["data"]
    assert data["e164"] == "+14155550123"
    tenant.org.default_country = "GB"
    tenant.org.save()
    data = lookup(tenant.client(), "020 7183 8750").json()["data"]
    assert data["valid"] is True
    assert data["e164"] == "+442071838750"


@pytest.mark.parametrize(("number", "error"), [
    ("12", "TOO_SHORT"),
    ("not-a-number", "NOT_A_NUMBER"),
    ("+999123456", "INVALID_COUNTRY_CODE"),
    ("+1415555012345678", "TOO_LONG"),
    ("+14150000000", "INVALID_NUMBER"),
])
def test_invalid_number_answers_valid_false(tenant, number, error):
    response = lookup(tenant.client(), number)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["valid"] is False
    assert data["validation_errors"] == [error]
    assert data["e164"] is None
    assert data["type"] is None
    assert data["time_zones"] == []


def test_overlong_input_is_422(tenant):
    response = lookup(tenant.client(), "1" * 65)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_lookup_needs_credentials_and_scope(tenant, anon):
    assert lookup(anon, "+14155550123").status_code == 401
    from platform_core.identity import services
    from platform_core.identity.models import KeyMode, KeyType

    _key, raw = services.api_key_create(organization=tenant.org, name="c", key_type=KeyType.SECRET,
                                        mode=KeyMode.TEST, scopes=["contacts:read"])
    response = lookup(tenant.client(raw), "+14155550123")
    assert response.status_code == 403
    _key, raw = services.api_key_create(organization=tenant.org, name="n", key_type=KeyType.SECRET,
                                        mode=KeyMode.TEST, scopes=["numbers:read"])
    assert lookup(tenant.client(raw), "+14155550123").status_code == 200
