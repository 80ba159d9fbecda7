"""Contract tests of the live adapter: every call to Google's RCS management and RBM APIs,
made to a real local HTTP server standing in for Google (fake_google.py), with the
organization's encrypted `rcs` provider account."""

from __future__ import annotations

import pytest
from django.db import connection

from messaging.providers.models import ProviderAccount
from messaging.rcs.models import RcsCatalogProduct
from platform_core.net import http
from platform_core.tenancy.context import tenant_context
from tests.conftest import make_tenant

from . import fake_google
from .conftest import BASE, error, ok

pytestmark = pytest.mark.django_db
CONFIG_AGENT = "account_default_agent"


@pytest.fixture
def google(settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    settings.PROVIDER_HTTP_BACKOFF_BASE = 0.01
    settings.PROVIDER_HTTP_BACKOFF_MAX = 0.02
    settings.PROVIDER_HTTP_MAX_ATTEMPTS = 2
    settings.PROVIDER_BREAKER_THRESHOLD = 1000
    server = fake_google.start()
    yield server
    server.close()
    http.close_connections()


@pytest.fixture
def live(db, google):
    tenant = make_tenant(sandbox=False)
    response = tenant.client().put("/api/v1/providers/rcs", {
        "provider": "rcs_business", "base_url": google.url,
        "credentials": {"access_token": fake_google.TOKEN},
        "config": {"agent_id": CONFIG_AGENT}}, format="json")
    assert response.status_code in (200, 201), response.content
    return tenant


@pytest.fixture
def call(live, commit):
    def do(method: str, path: str, body=None):
        with commit():
            fn = getattr(live.client(), method.lower())
            if body is None:
                return fn(f"{BASE}{path}")
            return fn(f"{BASE}{path}", body, format="json")

    return do


def _bot(call, **fields) -> dict:
    brand = ok(call("POST", "/brands", {"name": "Acme", "website": "https://acme.example",
                                        "contact_name": "Ann",
                                        "contact_email": "ann@acme.example"}), 201)
    return ok(call("POST", "/bots", {"brand_id": brand["id"], "display_name": "Acme Bot",
                                     "description": "Orders", "phone": "+14155550100",
                                     "website": "https://acme.example",
                                     "carriers": ["T-Mobile", "Verizon"], **fields}), 201)


def test_credentials_are_encrypted_at_rest(live):
    with tenant_context(live.org):
        account = ProviderAccount.objects.get(channel="rcs")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT credentials_encrypted FROM {ProviderAccount._meta.db_table} "
                       "WHERE id = %s", [account.pk])
        (stored,) = cursor.fetchone()
    assert stored
    assert fake_google.TOKEN not in stored
    assert account.credentials["access_token"] == fake_google.TOKEN


def test_brand_submit_registers_the_brand(call, google):
    brand = ok(call("POST", "/brands", {"name": "Acme"}), 201)
    assert google.requests == []  # a draft is ours only
    submitted = ok(call("POST", f"/brands/{brand['id']}/submit"))
    (seen,) = google.hits("POST", "/v1/brands")
    assert seen.headers["Authorization"] == f"Bearer {fake_google.TOKEN}"
    assert seen.json == {"displayName": "Acme"}
    # Google has no brand review: it stays submitted until one of its agents is verified.
    assert submitted["status"] == "submitted"
    assert ok(call("GET", f"/brands/{brand['id']}"))["status"] == "submitted"


def test_agent_create_update_delete(call, google):
    bot = _bot(call)
    brand_call, agent_call = google.hits("POST", "/v1/brands")
    assert brand_call.json == {"displayName": "Acme"}  # the brand is registered first
    assert agent_call.path == "/v1/brands/b1/agents"
    body = agent_call.json
    assert body["displayName"] == "Acme Bot"
    rbm = body["rcsBusinessMessagingAgent"]
    assert rbm["description"] == "Orders"
    assert rbm["phoneNumbers"] == [{"phoneNumber": {"number": "+14155550100"},
                                    "label": "Call us"}]
    assert rbm["websites"][0]["uri"] == "https://acme.example"
    assert rbm["agentUseCase"] == "MULTI_USE"
    ok(call("PUT", "/bots", {"id": bot["id"], "display_name": "Acme Orders",
                             "color": "#102030"}))
    (patch,) = google.hits("PATCH")
    assert patch.path == "/v1/brands/b1/agents/a2_agent"
    assert patch.query["updateMask"] == [
        "displayName,rcsBusinessMessagingAgent.color"]
    assert patch.json["rcsBusinessMessagingAgent"]["color"] == "#102030"
    assert call("DELETE", f"/bots/{bot['id']}").status_code == 204
    (deleted,) = google.hits("DELETE")
    assert deleted.path == "/v1/brands/b1/agents/a2_agent"


def test_verify_launch_and_quality(call, google):
    bot = _bot(call)
    brand_id = bot["brand_id"]
    ok(call("POST", f"/brands/{brand_id}/submit"))
    pending = ok(call("POST", f"/bots/{bot['id']}/verify"))
    assert pending["verification_status"] == "pending"
    (verification,) = google.hits("POST", ":requestVerification")
    assert verification.json["agentVerificationContact"]["brandContactEmailAddress"] == \
        "ann@acme.example"
    (launch,) = google.hits("POST", ":requestLaunch")
    assert launch.json == {"agentLaunch": {"rcsBusinessMessaging": {"launchDetails": {
        "T-Mobile": {}, "Verizon": {}}}}}
    quality = ok(call("GET", f"/bots/{bot['id']}/quality"))
    assert (quality["verification_status"], quality["launched"]) == ("pending", False)
    assert quality["carrier_statuses"] == {"T-Mobile": {"status": "PENDING"},
                                           "Verizon": {"status": "PENDING"}}
    # Google decides: verified, launched on one carrier.
    google.verification_state = "VERIFICATION_STATE_VERIFIED"
    google.launch_states["T-Mobile"] = "LAUNCH_STATE_LAUNCHED"
    quality = ok(call("GET", f"/bots/{bot['id']}/quality"))
    assert quality == {
        "bot_id": bot["id"], "display_name": "Acme Bot", "brand_name": "Acme",
        "status": "launched", "verification_status": "verified", "launched": True,
        "carrier_statuses": {"T-Mobile": {"status": "LAUNCHED"},
                             "Verizon": {"status": "PENDING"}},
        "carriers_launched": 1, "carriers_total": 2}
    assert len(google.hits("GET", "/verification")) == 2
    # The brand counts as verified once one of its agents is.
    assert ok(call("GET", f"/brands/{brand_id}"))["status"] == "verified"


def test_tester_invite_and_capability(call, google):
    bot = _bot(call)
    ok(call("POST", f"/bots/{bot['id']}/tester-invite", {"phone": "+14155550123"}))
    (tester,) = google.hits("POST", "/testers")
    assert tester.path == "/v1/phones/+14155550123/testers"
    assert tester.query["agentId"] == ["a2_agent"]
    err = error(call("POST", f"/bots/{bot['id']}/tester-invite",
                     {"phone": fake_google.NO_RCS}), 502, "RCS_PROVIDER_ERROR")
    assert err["details"]["provider_status"] == "NOT_FOUND"
    capable = ok(call("GET", f"/capability/{bot['id']}/+14155550123"))
    assert (capable["rcs_enabled"], capable["features"][0]) == (True, "RICHCARD_STANDALONE")
    (probe,) = google.hits("GET", "/capabilities")
    assert probe.query["agentId"] == ["a2_agent"]
    assert probe.query["requestId"][0]
    not_capable = ok(call("GET", f"/capability/{bot['id']}/{fake_google.NO_RCS}"))
    assert not_capable["rcs_enabled"] is False
    ok(call("GET", f"/capability/{bot['id']}/+14155550123"))  # cached: no new call
    assert len(google.hits("GET", "/capabilities")) == 2


def test_reach_scan_probes_in_bulk(call, google, live):
    from contacts.models import Contact
    from contacts.segments.models import Segment, SegmentMembership

    bot = _bot(call)
    with tenant_context(live.org):
        segment = Segment.objects.create(organization=live.org, name="All")
        for phone in ("+14155550101", "+14155550102", fake_google.NO_RCS):
            contact = Contact.objects.create(organization=live.org, phone=phone)
            SegmentMembership.objects.create(organization=live.org, segment=segment,
                                             contact=contact)
    scan = ok(call("POST", "/reach-scan", {"segment_id": segment.pk, "bot_id": bot["id"]}))
    assert scan["by_status"] == {"capable": 2, "not_capable": 1, "no_phone": 0}
    (batch,) = google.hits("POST", "/v1/users:batchGet")
    assert sorted(batch.json["users"]) == sorted(["+14155550101", "+14155550102",
                                                  fake_google.NO_RCS])
    assert batch.json["agentId"] == "a2_agent"


def test_send_catalog_goes_to_google_as_a_carousel(call, google, live):
    with tenant_context(live.org):
        for i in range(2):
            RcsCatalogProduct.objects.create(organization=live.org, retailer_id=f"S{i}",
                                             name=f"Mug {i}", price="9.00", currency="USD")
    data = ok(call("POST", "/commerce/send-catalog", {"to": "+14155550123"}), 202)
    assert data["provider"] == "rcs_business"
    (sent,) = google.hits("POST", "/agentMessages")
    assert sent.path == "/v1/phones/+14155550123/agentMessages"
    assert sent.query["agentId"] == [CONFIG_AGENT]
    carousel = sent.json["contentMessage"]["richCard"]["carouselCard"]
    assert [c["title"] for c in carousel["cardContents"]] == ["Mug 0", "Mug 1"]


def test_provider_refusal_stores_nothing(call, google, live):
    brand = ok(call("POST", "/brands", {"name": "Acme"}), 201)
    google.fail_next.append((400, "INVALID_ARGUMENT"))
    err = error(call("POST", "/bots", {"brand_id": brand["id"], "display_name": "Bot"}), 502,
                "RCS_PROVIDER_ERROR")
    assert err["details"] == {"provider_status": "INVALID_ARGUMENT", "http_status": 400}
    assert ok(call("GET", "/bots")) == []


def test_live_without_an_account_is_503(db, commit):
    tenant = make_tenant(sandbox=False)
    client = tenant.client()
    brand = client.post(f"{BASE}/brands", {"name": "Acme"}, format="json").json()["data"]
    error(client.post(f"{BASE}/brands/{brand['id']}/submit"), 503, "PROVIDER_NOT_WIRED")
    error(client.post(f"{BASE}/bots", {"brand_id": brand["id"], "display_name": "Bot"},
                      format="json"), 503, "PROVIDER_NOT_WIRED")


def test_beat_refresh_reads_google_verdicts(call, google):
    from messaging.rcs.tasks import refresh_agents

    bot = _bot(call)
    ok(call("POST", f"/brands/{bot['brand_id']}/submit"))
    ok(call("POST", f"/bots/{bot['id']}/verify"))
    google.verification_state = "VERIFICATION_STATE_VERIFIED"
    google.launch_states["Verizon"] = "LAUNCH_STATE_LAUNCHED"
    assert refresh_agents() == 1
    read = ok(call("GET", f"/bots/{bot['id']}"))
    assert (read["verification_status"], read["status"], read["launched"]) == (
        "verified", "launched", True)
    assert refresh_agents() == 0  # launched: nothing left to wait for
