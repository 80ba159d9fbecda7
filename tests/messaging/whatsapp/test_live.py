"""The live adapter by contract: every Graph call it makes, checked on a real loopback HTTP
server standing in for graph.facebook.com (method, path, query, body, headers), and Meta's
documented errors mapped to our codes."""

from __future__ import annotations

import json

import pytest

from messaging.providers.models import ProviderAccount
from messaging.services import message_dispatch
from platform_core.net import http
from platform_core.tenancy.context import tenant_context
from tests.conftest import make_tenant

from . import graph_fake
from .conftest import (
    BUSINESS,
    USER,
    WABA,
    code,
    connect,
    data,
    messages,
    post_webhook,
    wa_message,
    with_app_secret,
)

pytestmark = pytest.mark.django_db

PHONE = graph_fake.NUMBERS[0]["id"]
BEARER = f"Bearer {graph_fake.TOKEN}"


@pytest.fixture
def graph(settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    settings.PROVIDER_HTTP_MAX_ATTEMPTS = 1
    settings.PROVIDER_HTTP_TIMEOUT = 5
    settings.PROVIDER_BREAKER_THRESHOLD = 1000
    fake = graph_fake.start()
    settings.WHATSAPP_GRAPH_BASE_URL = fake.url
    settings.WHATSAPP_APP_ID = graph_fake.APP_ID
    settings.WHATSAPP_APP_SECRET = graph_fake.APP_SECRET
    yield fake
    fake.close()
    http.close_connections()


@pytest.fixture
def live(graph):
    tenant = make_tenant(sandbox=False)
    connect(tenant, phone_number_id=PHONE)
    graph.seen.clear()
    return tenant


def _only(graph, fragment: str, method: str):
    hits = graph.hits(fragment, method)
    assert len(hits) == 1, [(s.method, s.path) for s in graph.seen]
    return hits[0]


def test_connect_exchanges_the_code_reads_numbers_and_subscribes(graph):
    tenant = make_tenant(sandbox=False)
    rows = connect(tenant, phone_number_id=PHONE)
    assert {r["phone_number_id"] for r in rows} == {n["id"] for n in graph_fake.NUMBERS}
    exchange, numbers, subscribe = graph.seen
    assert (exchange.method, exchange.path) == ("GET", "/v20.0/oauth/access_token")
    assert exchange.query == {"client_id": [graph_fake.APP_ID],
                              "client_secret": [graph_fake.APP_SECRET],
                              "code": ["signup-code-123"]}
    assert "authorization" not in exchange.headers
    assert (numbers.method, numbers.path) == ("GET", f"/v20.0/{WABA}/phone_numbers")
    assert numbers.query["fields"] == [
        "id,display_phone_number,verified_name,quality_rating"]
    assert numbers.headers["authorization"] == BEARER
    assert (subscribe.method, subscribe.path) == ("POST", f"/v20.0/{WABA}/subscribed_apps")
    with tenant_context(tenant.org):
        account = ProviderAccount.objects.for_organization(tenant.org).get(channel="whatsapp")
    assert account.credentials["access_token"] == graph_fake.TOKEN
    assert (account.provider, account.config["phone_number_id"]) == ("whatsapp_cloud", PHONE)


def test_profile_calls(live, graph):
    client = live.client()
    profile = data(client.get("/api/v1/whatsapp/business-profile"))
    seen = _only(graph, "whatsapp_business_profile", "GET")
    assert seen.path == f"/v20.0/{PHONE}/whatsapp_business_profile"
    assert seen.query["fields"] == [
        "about,address,description,email,profile_picture_url,websites,vertical"]
    assert (profile["about"], profile["vertical"]) == ("Live about", "RETAIL")
    put = client.put("/api/v1/whatsapp/business-profile",
                     {"about": "New about", "email": "hi@acme.example.com"}, format="json")
    assert put.status_code == 202
    update = _only(graph, "whatsapp_business_profile", "POST")
    assert update.json == {"messaging_product": "whatsapp", "about": "New about",
                           "email": "hi@acme.example.com"}
    assert update.headers["content-type"] == "application/json"


def test_catalog_and_product_calls(live, graph):
    client = live.client()
    catalog = data(client.post("/api/v1/whatsapp/catalogs", {"name": "Bikes"}, format="json"))
    create = _only(graph, "owned_product_catalogs", "POST")
    assert create.path == f"/v20.0/{BUSINESS}/owned_product_catalogs"
    assert create.json == {"name": "Bikes", "vertical": "commerce"}
    assert catalog["meta_catalog_id"] == "777000222"
    remote = data(client.get(f"/api/v1/whatsapp/businesses/{BUSINESS}/catalogs"))
    assert remote == [{"id": None, "meta_catalog_id": "777000111", "business_id": BUSINESS,
                       "name": "Remote", "vertical": "commerce", "product_count": 4}]
    assert _only(graph, "owned_product_catalogs", "GET").query["fields"] == [
        "id,name,vertical,product_count"]
    product = data(client.post(f"/api/v1/whatsapp/catalogs/{catalog['id']}/products", {
        "retailer_id": "SKU-1", "name": "Bike", "price": 1000, "currency": "EUR",
        "image_url": "https://cdn.example.com/b.png"}, format="json"))
    add = _only(graph, "/products", "POST")
    assert add.path == "/v20.0/777000222/products"
    assert add.json == {"retailer_id": "SKU-1", "name": "Bike", "price": 1000,
                        "currency": "EUR", "image_url": "https://cdn.example.com/b.png",
                        "availability": "in stock"}
    client.put(f"/api/v1/whatsapp/products/{product['id']}", {
        "retailer_id": "SKU-1", "name": "Bike 2", "price": 900, "currency": "EUR",
        "image_url": "https://cdn.example.com/b.png"}, format="json")
    assert _only(graph, "/888000333", "POST").json["name"] == "Bike 2"
    client.delete(f"/api/v1/whatsapp/products/{product['id']}")
    _only(graph, "/v20.0/888000333", "DELETE")
    client.delete(f"/api/v1/whatsapp/catalogs/{catalog['id']}")
    _only(graph, "/v20.0/777000222", "DELETE")


def test_calling_calls(live, graph):
    client = live.client()
    base = f"/api/v1/whatsapp/connections/{PHONE}/calling"
    state = data(client.get(base))
    assert state["status"] == "ENABLED"
    assert _only(graph, "/settings", "GET").path == f"/v20.0/{PHONE}/settings"
    client.get(base)
    assert len(graph.hits("/settings", "GET")) == 1  # cached
    client.post(base + "/enable")
    assert _only(graph, "/settings", "POST").json == {"calling": {"status": "ENABLED"}}
    client.post(base + "/register-webhook")
    client.post(base + "/register-webhook")
    subscription = _only(graph, "/subscriptions", "POST")
    assert subscription.path == f"/v20.0/{graph_fake.APP_ID}/subscriptions"
    assert subscription.headers["authorization"] == (
        f"Bearer {graph_fake.APP_ID}|{graph_fake.APP_SECRET}")
    body = subscription.json
    assert (body["object"], body["fields"]) == ("whatsapp_business_account", "calls")
    assert body["callback_url"].endswith(f"/api/v1/inbound/whatsapp/{live.org.slug}")
    assert body["verify_token"]
    contact = data(client.post("/api/v1/contacts", {"phone": USER}, format="json"))
    perms = data(client.get("/api/v1/whatsapp/calling/permissions",
                            {"contact_id": contact["id"]}))
    assert perms["permission"] == {"status": "granted"}
    assert _only(graph, "call_permissions", "GET").query == {"user_wa_id": [USER.lstrip("+")]}
    graph.seen.clear()
    call = client.post("/api/v1/whatsapp/calling/calls",
                       {"to": USER, "session": {"sdp_type": "offer", "sdp": "v=0"}},
                       format="json")
    assert call.status_code == 201, call.content
    assert data(call)["meta_call_id"] == "wacid.LIVE1"
    start = _only(graph, "/calls", "POST")
    assert start.json == {"messaging_product": "whatsapp", "to": USER.lstrip("+"),
                          "action": "connect", "session": {"sdp_type": "offer", "sdp": "v=0"}}


def test_inbound_call_accept_and_decline_calls(live, graph, anon):
    with_app_secret(live)
    for call_id in ("wacid.IN1", "wacid.IN2"):
        post_webhook(anon, live, "calls", {
            "metadata": {"phone_number_id": PHONE},
            "calls": [{"id": call_id, "from": "14155550123", "to": "15550100001",
                       "event": "connect", "timestamp": "1700000000"}]})
    client = live.client()
    client.post("/api/v1/whatsapp/calling/calls/wacid.IN1/accept",
                {"session": {"sdp_type": "answer", "sdp": "v=0"}}, format="json")
    client.post("/api/v1/whatsapp/calling/calls/wacid.IN2/decline")
    accept, reject = graph.hits("/calls", "POST")
    assert accept.path == f"/v20.0/{PHONE}/calls"
    assert accept.json == {"messaging_product": "whatsapp", "call_id": "wacid.IN1",
                           "action": "accept", "session": {"sdp_type": "answer", "sdp": "v=0"}}
    assert reject.json == {"messaging_product": "whatsapp", "call_id": "wacid.IN2",
                           "action": "reject"}


def test_block_calls(live, graph):
    client = live.client()
    client.post("/api/v1/whatsapp/block-users", {"block_users": [{"user": USER}]},
                format="json")
    client.post("/api/v1/whatsapp/unblock-users", {"block_users": [{"user": USER}]},
                format="json")
    block = _only(graph, "block_users", "POST")
    unblock = _only(graph, "block_users", "DELETE")
    expected = {"messaging_product": "whatsapp", "block_users": [{"user": USER.lstrip("+")}]}
    assert block.path == unblock.path == f"/v20.0/{PHONE}/block_users"
    assert block.json == unblock.json == expected


def test_flow_calls(live, graph):
    from .test_flows import FLOW_JSON

    client = live.client()
    flow = data(client.post("/api/v1/whatsapp/flows",
                            {"name": "Survey", "categories": ["SURVEY", "OTHER"]},
                            format="json"))
    create = _only(graph, "/flows", "POST")
    assert create.path == f"/v20.0/{WABA}/flows"
    assert create.json == {"name": "Survey", "categories": ["SURVEY", "OTHER"]}
    assert flow["meta_flow_id"] == "555000444"
    client.post(f"/api/v1/whatsapp/flows/{flow['id']}/assets", {"flow_json": FLOW_JSON},
                format="json")
    upload = _only(graph, "/assets", "POST")
    assert upload.path == "/v20.0/555000444/assets"
    content_type = upload.headers["content-type"]
    assert content_type.startswith("multipart/form-data; boundary=")
    boundary = content_type.split("boundary=")[1].encode()
    parts = upload.body.split(b"--" + boundary)
    assert any(b'name="asset_type"' in p and b"FLOW_JSON" in p for p in parts)
    assert any(b'name="name"' in p and b"flow.json" in p for p in parts)
    (document,) = [p for p in parts if b'filename="flow.json"' in p]
    assert json.loads(document.split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n", 1)[0]) == FLOW_JSON
    client.post(f"/api/v1/whatsapp/flows/{flow['id']}/publish")
    _only(graph, "/555000444/publish", "POST")
    draft = data(client.post("/api/v1/whatsapp/flows", {"name": "D", "categories": ["OTHER"]},
                             format="json"))
    client.delete(f"/api/v1/whatsapp/flows/{draft['id']}")
    _only(graph, "/v20.0/555000444", "DELETE")


def test_meta_refusing_the_flow_json_is_a_422(live, graph):
    client = live.client()
    flow = data(client.post("/api/v1/whatsapp/flows", {"name": "S", "categories": ["OTHER"]},
                            format="json"))
    from .test_flows import FLOW_JSON

    graph.failures.append((200, {"success": False, "validation_errors": [
        {"error": "INVALID_PROPERTY", "message": "Property 'x' is not allowed"}]}))
    response = client.post(f"/api/v1/whatsapp/flows/{flow['id']}/assets",
                           {"flow_json": FLOW_JSON}, format="json")
    assert response.status_code == 422
    assert "not allowed" in response.json()["error"]["details"]["issues"][0]["message"]


def test_interactive_and_marketing_sends_reach_the_cloud_api(live, graph, anon):
    with_app_secret(live)
    with tenant_context(live.org):  # the message adapter's Graph address (tests only)
        ProviderAccount.objects.for_organization(live.org).filter(channel="whatsapp").update(
            base_url=graph.url)
    post_webhook(anon, live, "messages", wa_message({"id": "wamid.U1", "type": "text",
                                                     "text": {"body": "hi"}}))
    client = live.client()
    response = client.post("/api/v1/whatsapp/messages/send-interactive", {
        "to": USER, "body": "Confirm?", "action": {"buttons": [{"id": "y", "title": "Yes"}]}},
        format="json")
    assert response.status_code == 202, response.content
    message_id = data(response)["message_id"]
    assert message_dispatch(message_id=message_id) == "queued"
    seen = _only(graph, f"/{PHONE}/messages", "POST")
    assert seen.headers["authorization"] == BEARER
    assert seen.json == {"messaging_product": "whatsapp", "recipient_type": "individual",
                         "to": USER.lstrip("+"), "type": "interactive", "interactive": {
                             "type": "button", "body": {"text": "Confirm?"},
                             "action": {"buttons": [{"type": "reply",
                                                     "reply": {"id": "y", "title": "Yes"}}]}}}
    (message,) = messages(live, pk=message_id)
    assert message.provider_message_id.startswith("wamid.LIVE")

    template = client.post("/api/v1/messages/templates", {
        "name": "sale", "channel": "whatsapp", "language": "en", "category": "marketing",
        "components": [{"type": "BODY", "text": "Hi {{1}}"}]}, format="json")
    with tenant_context(live.org):
        from templates.models import MessageTemplate

        MessageTemplate.objects.for_organization(live.org).filter(
            pk=data(template)["id"]).update(status="approved")
    sent = client.post("/api/v1/whatsapp/marketing-messages/send", {
        "to": USER, "template_name": "sale", "language": "en", "variables": {"1": "Kerry"},
        "tracking_id": "cmp-7"}, format="json")
    assert sent.status_code == 202, sent.content
    message_dispatch(message_id=data(sent)["message_id"])
    marketing = _only(graph, "/marketing_messages", "POST")
    assert marketing.path == f"/v20.0/{PHONE}/marketing_messages"
    assert marketing.json["type"] == "template"
    assert marketing.json["biz_opaque_callback_data"] == "cmp-7"
    assert marketing.json["template"]["name"] == "sale"


@pytest.mark.parametrize(("status", "meta_code", "subcode", "ours", "http_status"), [
    (401, 190, 463, "WHATSAPP_TOKEN_EXPIRED", 409),
    (400, 80007, None, "WHATSAPP_RATE_LIMITED", 429),
    (400, 130429, None, "WHATSAPP_RATE_LIMITED", 429),
    (403, 10, None, "WHATSAPP_PERMISSION_DENIED", 403),
    (400, 100, 33, "WHATSAPP_REQUEST_REJECTED", 422),
])
def test_graph_errors_map_to_registered_codes(live, graph, status, meta_code, subcode, ours,
                                              http_status):
    graph.fail_next(status, meta_code, "Graph says no", subcode)
    response = live.client().post("/api/v1/whatsapp/catalogs", {"name": "x"}, format="json")
    assert response.status_code == http_status, response.content
    assert code(response) == ours
    details = response.json()["error"]["details"]
    assert (details["provider_code"], details["fbtrace_id"]) == (meta_code, "AbCdEf")
    with tenant_context(live.org):
        from messaging.whatsapp.models import Catalog

        assert not Catalog.objects.for_organization(live.org).exists()  # nothing stored


def test_unlink_and_disconnect_calls(live, graph):
    client = live.client()
    other = graph_fake.NUMBERS[1]["id"]
    assert client.delete(f"/api/v1/whatsapp/connections/{other}").status_code == 204
    assert _only(graph, "/deregister", "POST").path == f"/v20.0/{other}/deregister"
    assert client.delete("/api/v1/whatsapp/disconnect").status_code == 204
    assert _only(graph, "subscribed_apps", "DELETE").path == f"/v20.0/{WABA}/subscribed_apps"
    with tenant_context(live.org):
        assert not ProviderAccount.objects.for_organization(live.org).exists()
    # Without credentials the live gateway refuses before any call.
    graph.seen.clear()
    response = client.post("/api/v1/whatsapp/flows", {"name": "x", "categories": ["OTHER"]},
                           format="json")
    assert code(response) == "WHATSAPP_NOT_CONNECTED"
    assert graph.seen == []
