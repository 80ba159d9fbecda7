"""Ads over HTTP (test mode, the sandbox ad platform): connection, campaigns, conversions,
lead ingestion and audiences."""

from __future__ import annotations

import hashlib

import pytest

from ads.models import AdAccount, AdLead
from contacts.models import Contact
from platform_core.tenancy.context import tenant_context
from tests.platform_core.identity.conftest import add_member, session_for

pytestmark = pytest.mark.django_db
BASE = "/api/v1/ads"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def connected(tenant):
    client = tenant.client()
    response = client.post(f"{BASE}/connect", {"access_token": "EAAB-secret-token",
                                               "ad_account_id": "act_1234"}, format="json")
    assert response.status_code == 201, response.content
    return client


def test_channel_unavailable_before_connecting(tenant):
    client = tenant.client()
    assert client.get(f"{BASE}/status").json()["data"]["connected"] is False
    for path, body in (("campaigns", {"name": "x", "daily_budget": 500}),
                       ("conversions", {"event": "lead", "user_data": {"email": "a@b.co"}}),
                       ("conversions/test", {}), ("leads/ingest", {"leads": []}),
                       ("audiences", {"name": "a", "segment_id": "seg_x"})):
        response = client.post(f"{BASE}/{path}", body, format="json")
        assert response.status_code == 400, path
        assert response.json()["error"]["code"] == "CHANNEL_UNAVAILABLE"
    assert client.put(f"{BASE}/conversions/dataset", {"dataset_id": "ds_1"},
                      format="json").json()["error"]["code"] == "CHANNEL_UNAVAILABLE"


def test_connect_status_and_token_encrypted(tenant, connected):
    status = connected.get(f"{BASE}/status").json()["data"]
    assert status["connected"] is True
    assert status["currency"] == "USD"
    assert status["ad_account_id"] == "1234"
    assert "EAAB-secret-token" not in str(status)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT access_token FROM ads_adaccount")
        assert "EAAB-secret-token" not in cursor.fetchone()[0]
    with tenant_context(tenant.org):
        assert AdAccount.objects.get().access_token == "EAAB-secret-token"
    # One account per organization: connecting again replaces it.
    connected.post(f"{BASE}/oauth/exchange", {"code": "abc", "redirect_uri":
                                              "https://app.example.com/cb",
                                              "ad_account_id": "999"}, format="json")
    assert connected.get(f"{BASE}/status").json()["data"]["connected_via"] == "oauth"
    with tenant_context(tenant.org):
        assert AdAccount.objects.count() == 1


def test_refused_token_and_code(tenant):
    client = tenant.client()
    bad = client.post(f"{BASE}/connect", {"access_token": "sandbox-invalid",
                                          "ad_account_id": "1"}, format="json")
    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "AD_PLATFORM_ERROR"
    denied = client.post(f"{BASE}/oauth/exchange", {"code": "sandbox-denied", "redirect_uri":
                                                    "https://a.example.com/cb",
                                                    "ad_account_id": "1"}, format="json")
    assert denied.status_code == 422
    assert client.post(f"{BASE}/connect", {"access_token": "t", "ad_account_id": "act_x"},
                       format="json").status_code == 422


def test_writes_need_owner_or_admin(tenant, connected):
    developer = session_for(tenant, add_member(tenant, "developer"))
    assert developer.get(f"{BASE}/status").status_code == 200
    assert developer.post(f"{BASE}/campaigns", {"name": "x", "daily_budget": 500},
                          format="json").status_code == 403
    viewer = session_for(tenant, add_member(tenant, "viewer"))
    assert viewer.get(f"{BASE}/campaigns").status_code == 200


def test_campaign_lifecycle(connected):
    created = connected.post(f"{BASE}/campaigns", {"name": "Spring", "channel": "instagram",
                                                   "daily_budget": 2500}, format="json")
    assert created.status_code == 201
    campaign = created.json()["data"]
    assert campaign["id"].startswith("adc_")
    assert campaign["status"] == "paused"
    active = connected.put(f"{BASE}/campaigns/{campaign['id']}", {"status": "active"},
                           format="json")
    assert active.json()["data"]["status"] == "active"
    assert connected.get(f"{BASE}/campaigns/{campaign['id']}").json()["data"]["status"] == \
        "active"
    assert [c["id"] for c in connected.get(f"{BASE}/campaigns").json()["data"]] == [
        campaign["id"]]
    assert connected.put(f"{BASE}/campaigns/{campaign['id']}", {"status": "deleted"},
                         format="json").status_code == 422
    assert connected.delete(f"{BASE}/campaigns/{campaign['id']}").status_code == 204
    assert connected.get(f"{BASE}/campaigns/{campaign['id']}").status_code == 404


class TestConversions:
    def test_dataset_rules(self, connected):
        bad = connected.put(f"{BASE}/conversions/dataset", {"dataset_id": "ds 1!"},
                            format="json")
        assert bad.status_code == 422
        assert connected.post(f"{BASE}/conversions/test").json()["error"]["code"] == \
            "CHANNEL_UNAVAILABLE"
        ok = connected.put(f"{BASE}/conversions/dataset", {"dataset_id": "ds_1-A"},
                           format="json")
        assert ok.json()["data"]["dataset_id"] == "ds_1-A"
        test = connected.post(f"{BASE}/conversions/test")
        assert test.status_code == 200
        assert test.json()["data"]["events_received"] == 1

    def test_identifiers_are_normalised_and_hashed(self, connected):
        connected.put(f"{BASE}/conversions/dataset", {"dataset_id": "ds1"}, format="json")
        response = connected.post(f"{BASE}/conversions", {
            "event": "registration", "messaging_channel": "messenger",
            "user_data": {"email": "  Ada@Example.COM ", "phone": "+1 (415) 555-0123",
                          "ctwa_clid": "ARAkLkA"}}, format="json")
        assert response.status_code == 200, response.content
        data = response.json()["data"]
        assert data["event_name"] == "CompleteRegistration"
        assert data["user_data"]["em"] == [sha("ada@example.com")]
        assert data["user_data"]["ph"] == [sha("14155550123")]
        assert data["user_data"]["ctwa_clid"] == "ARAkLkA"

    @pytest.mark.parametrize(("event", "name"), [("lead", "Lead"), ("purchase", "Purchase"),
                                                 ("appointment", "Schedule"),
                                                 ("contact", "Contact")])
    def test_event_mapping(self, connected, event, name):
        connected.put(f"{BASE}/conversions/dataset", {"dataset_id": "ds1"}, format="json")
        data = connected.post(f"{BASE}/conversions", {
            "event": event, "user_data": {"external_id": "u-1"}}, format="json").json()["data"]
        assert data["event_name"] == name

    def test_identifier_required(self, connected):
        connected.put(f"{BASE}/conversions/dataset", {"dataset_id": "ds1"}, format="json")
        response = connected.post(f"{BASE}/conversions", {"event": "lead", "user_data": {}},
                                  format="json")
        assert response.status_code == 422


def test_lead_ingestion_counts(tenant, connected):
    batch = {"entry": [{"changes": [
        {"field": "leadgen", "value": {"leadgen_id": "1001", "form_id": "f1"}},
        {"field": "leadgen", "value": {"leadgen_id": "1001", "form_id": "f1"}},
        {"field": "leadgen", "value": {"leadgen_id": "fail-7", "form_id": "f1"}},
        {"field": "leadgen", "value": {"leadgen_id": "nocontact-1", "form_id": "f1"}},
        {"field": "leadgen", "value": {"leadgen_id": "inline-1", "field_data": [
            {"name": "email", "values": ["inline@example.com"]}]}},
    ]}]}
    first = connected.post(f"{BASE}/leads/ingest", batch, format="json").json()["data"]
    assert first == {"received": 5, "fetched": 2, "fetch_failures": 1, "skipped_no_contact": 1,
                     "created": 2, "updated": 0, "duplicates": 1}
    with tenant_context(tenant.org):
        assert Contact.objects.filter(email="lead-1001@example.com").exists()
        assert AdLead.objects.get(leadgen_id="fail-7").status == "pending"
    again = connected.post(f"{BASE}/leads/ingest", {"leads": [{"id": "1001"}]},
                           format="json").json()["data"]
    assert again["updated"] == 1
    assert again["created"] == 0


def test_audiences_sync_hashed_members(tenant, connected, monkeypatch):
    from contacts.segments.models import Segment, SegmentMembership

    with tenant_context(tenant.org):
        segment = Segment.objects.create(organization=tenant.org, name="VIP", kind="static")
        for i in range(3):
            contact = Contact.objects.create(organization=tenant.org, email=f"v{i}@example.com",
                                             phone=f"+1415555010{i}")
            SegmentMembership.objects.create(organization=tenant.org, segment=segment,
                                             contact=contact)
    created = connected.post(f"{BASE}/audiences", {"name": "VIP", "segment_id": segment.pk},
                             format="json")
    assert created.status_code == 201, created.content
    audience = created.json()["data"]["id"]
    result = connected.post(f"{BASE}/audiences/{audience}/sync", {}, format="json")
    assert result.json()["data"] == {"mode": "add", "matched": 3, "sent": 3,
                                     "num_received": 3, "truncated": False}
    monkeypatch.setattr("ads.services.MAX_SYNC", 2)
    capped = connected.post(f"{BASE}/audiences/{audience}/sync", {"mode": "remove"},
                            format="json").json()["data"]
    assert capped["truncated"] is True
    assert capped["sent"] == 2
    assert [a["id"] for a in connected.get(f"{BASE}/audiences").json()["data"]] == [audience]
    assert connected.post(f"{BASE}/audiences", {"name": "x", "segment_id": "seg_nope"},
                          format="json").status_code == 422
    assert connected.delete(f"{BASE}/audiences/{audience}").status_code == 204
    assert connected.get(f"{BASE}/audiences").json()["data"] == []


def test_beat_fetches_pending_leads_again_until_their_attempts_run_out(tenant, connected):
    from ads.tasks import retry_pending_leads

    with tenant_context(tenant.org):
        # A lead whose fetch failed earlier (a transient outage) and one that keeps failing.
        AdLead.objects.create(organization=tenant.org, leadgen_id="2002", form_id="f1",
                              status="pending", attempts=1)
        AdLead.objects.create(organization=tenant.org, leadgen_id="fail-8", form_id="f1",
                              status="pending", attempts=8)
    assert retry_pending_leads() == 1
    with tenant_context(tenant.org):
        recovered = AdLead.objects.get(leadgen_id="2002")
        assert recovered.status == "ingested"
        assert Contact.objects.filter(pk=recovered.contact_id,
                                      email="lead-2002@example.com").exists()
        assert AdLead.objects.get(leadgen_id="fail-8").attempts == 9
    assert retry_pending_leads() == 0  # the failing one is tried once more (attempt 10)...
    with tenant_context(tenant.org):
        assert AdLead.objects.get(leadgen_id="fail-8").attempts == 10
    assert retry_pending_leads() == 0  # ...and then left alone
    with tenant_context(tenant.org):
        assert AdLead.objects.get(leadgen_id="fail-8").attempts == 10
