"""POST/GET /api/v1/numbers/porting (Document 2, 4.4 and 4.10): the letter-of-authorization
origin rule, validation, the stored request and the secret account PIN."""

from __future__ import annotations

from datetime import date, timedelta
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from messaging.numbers.models import PortingRequest
from messaging.numbers.services import add_business_days
from platform_core.audit.models import AuditLogEntry
from platform_core.events.models import Event

from .conftest import PORTING, porting_body, upload_loa

pytestmark = pytest.mark.django_db


def submit(client, body):
    return client.post(PORTING, body, format="json")


def error_of(response) -> dict:
    return response.json()["error"]


def test_submit_stores_request_with_status_and_estimate(tenant):
    client = tenant.client()
    with time_machine.travel("2030-01-04 12:00:00Z", tick=False):  # a Friday
        loa = upload_loa(client)
        response = submit(client, porting_body(loa["url"]))
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["id"].startswith("prt_")
    assert data["status"] == "submitted"
    assert data["numbers"] == ["+14155550123", "+14155550124"]
    assert data["currentCarrier"] == "Verizon"
    assert data["country"] == "US"
    assert data["authorizedSigner"] == "Ann Lee"
    assert data["accountNumber"] == "*******8877"
    assert data["accountPinProvided"] is True
    assert "accountPin" not in data
    assert data["loaFileUrl"] == loa["url"]
    assert data["loa_file_id"] == loa["id"]
    # 7 and 14 business days after Friday 2030-01-04.
    assert data["estimated_completion"] == {"earliest": "2030-01-15", "latest": "2030-01-24",
                                            "business_days": "7-14"}

    detail = client.get(f"{PORTING}/{data['id']}")
    assert detail.status_code == 200
    assert detail.json()["data"] == data
    assert "4321" not in detail.content.decode()

    events = Event.objects.for_organization(tenant.org).filter(type="number.porting.submitted")
    assert [e.data["id"] for e in events] == [data["id"]]
    assert "4321" not in str(events[0].data)
    assert AuditLogEntry.objects.filter(
        organization=tenant.org, action="numbers.porting.submitted", target_id=data["id"]).exists()


def test_account_pin_is_encrypted_at_rest(tenant):
    client = tenant.client()
    data = submit(client, porting_body(upload_loa(client)["url"])).json()["data"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT account_pin FROM numbers_portingrequest WHERE id = %s",
                       [data["id"]])
        stored = cursor.fetchone()[0]
    assert stored
    assert "4321" not in stored
    row = PortingRequest.objects.for_organization(tenant.org).get(pk=data["id"])
    assert row.account_pin == "4321"


def test_pin_is_optional(tenant):
    client = tenant.client()
    body = porting_body(upload_loa(client)["url"])
    del body["accountPin"]
    response = submit(client, body)
    assert response.status_code == 201, response.content
    assert response.json()["data"]["accountPinProvided"] is False


def _with_query(url: str, **changes) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    query.update(changes)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


def _with_netloc(url: str, scheme: str, netloc: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((scheme, netloc, parts.path, parts.query, ""))


@pytest.mark.parametrize("mutate", [
    pytest.param(lambda u: _with_netloc(u, "https", "evil.example.com"), id="other-host"),
    pytest.param(lambda u: _with_netloc(u, "https", "localhost:8000"), id="other-scheme"),
    pytest.param(lambda u: _with_netloc(u, "http", "localhost:8001"), id="other-port"),
    pytest.param(lambda u: _with_netloc(u, "http", "user@localhost:8000"), id="userinfo"),
    pytest.param(lambda u: u.replace("/content?", "/presign?"), id="other-path"),
    pytest.param(lambda u: _with_query(u, signature="0" * 64), id="bad-signature"),
    pytest.param(lambda u: u.split("?")[0], id="unsigned"),
    pytest.param(lambda u: _with_query(u, expires=str(int(parse_qs(urlsplit(u).query)
                                                          ["expires"][0]) + 3600)),
                 id="stretched-expiry"),
    pytest.param(lambda u: "https://files.example.com/loa.pdf", id="foreign-url"),
])
def test_loa_url_must_be_issued_by_our_file_upload(tenant, mutate):
    client = tenant.client()
    loa = upload_loa(client)
    response = submit(client, porting_body(mutate(loa["url"])))
    assert response.status_code == 422, response.content
    error = error_of(response)
    assert error["code"] == "LOA_URL_INVALID_ORIGIN"
    assert error["details"]["field"] == "loaFileUrl"
    assert not PortingRequest.objects.for_organization(tenant.org).exists()


def test_expired_loa_url_is_refused(tenant):
    client = tenant.client()
    loa = upload_loa(client, query="?ttl_ms=60000")
    with time_machine.travel(timezone.now() + timedelta(seconds=120), tick=True):
        response = submit(client, porting_body(loa["url"]))
    assert response.status_code == 422
    assert error_of(response)["details"]["reason"] == "expired"


def test_presigned_url_of_the_file_is_accepted(tenant):
    client = tenant.client()
    loa = upload_loa(client)
    presigned = client.get(f"/api/v1/files/{loa['id']}/presign").json()["data"]["url"]
    response = submit(client, porting_body(presigned))
    assert response.status_code == 201, response.content
    assert response.json()["data"]["loa_file_id"] == loa["id"]


def test_genuine_url_of_another_organizations_file_is_refused(tenant, other_tenant):
    foreign = upload_loa(other_tenant.client())
    response = submit(tenant.client(), porting_body(foreign["url"]))
    assert response.status_code == 422
    assert error_of(response)["code"] == "LOA_URL_INVALID_ORIGIN"
    assert error_of(response)["details"]["reason"] == "file"


def test_numbers_must_be_e164_of_the_country(tenant):
    client = tenant.client()
    url = upload_loa(client)["url"]
    response = submit(client, porting_body(url, numbers=["+14155550123", "4155550124"]))
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "INVALID_PHONE_NUMBER"
    assert error["details"]["field"] == "numbers[1]"

    response = submit(client, porting_body(url, numbers=["+442071838750"]))
    assert response.status_code == 422
    assert error_of(response)["details"]["issues"][0]["field"] == "numbers[0]"

    response = submit(client, porting_body(url, numbers=[]))
    assert response.status_code == 422
    assert error_of(response)["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("missing", ["numbers", "currentCarrier", "country", "authorizedSigner",
                                     "accountNumber", "loaFileUrl"])
def test_required_fields(tenant, missing):
    client = tenant.client()
    body = porting_body(upload_loa(client)["url"])
    del body[missing]
    response = submit(client, body)
    assert response.status_code == 422
    issues = error_of(response)["details"]["issues"]
    assert [i["field"] for i in issues] == [missing]


def test_duplicate_numbers_collapse_and_active_request_conflicts(tenant):
    client = tenant.client()
    url = upload_loa(client)["url"]
    first = submit(client, porting_body(url, numbers=["+14155550123", "+1 415 555 0123"]))
    assert first.status_code == 201, first.content
    assert first.json()["data"]["numbers"] == ["+14155550123"]
    again = submit(client, porting_body(url, numbers=["+14155550199", "+14155550123"]))
    assert again.status_code == 409
    assert error_of(again)["details"] == {"porting_request_id": first.json()["data"]["id"],
                                          "numbers": ["+14155550123"]}


def test_list_filters_and_query_count(tenant, django_assert_max_num_queries):
    client = tenant.client()
    url = upload_loa(client)["url"]
    ids = [submit(client, porting_body(url, numbers=[f"+1415555010{i}"])).json()["data"]["id"]
           for i in range(3)]
    PortingRequest.objects.for_organization(tenant.org).filter(pk=ids[0]).update(
        status="completed")
    with django_assert_max_num_queries(6):
        response = client.get(PORTING)
    assert response.status_code == 200
    assert [row["id"] for row in response.json()["data"]] == ids[::-1]
    submitted = client.get(PORTING, {"status": "submitted"}).json()["data"]
    assert [row["id"] for row in submitted] == ids[:0:-1]
    assert client.get(PORTING, {"status": "nope"}).status_code == 400


def test_viewer_cannot_submit(tenant):
    from platform_core.identity import services
    from platform_core.identity.models import KeyMode, KeyType

    _key, raw = services.api_key_create(organization=tenant.org, name="ro", key_type=KeyType.SECRET,
                                        mode=KeyMode.TEST, scopes=["numbers:read"])
    response = submit(tenant.client(raw), porting_body(upload_loa(tenant.client())["url"]))
    assert response.status_code == 403


def test_business_days_skip_weekends():
    assert add_business_days(date(2030, 1, 4), 1) == date(2030, 1, 7)  # Fri -> Mon
    assert add_business_days(date(2030, 1, 5), 5) == date(2030, 1, 11)  # Sat -> Fri
