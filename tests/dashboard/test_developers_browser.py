"""The developers screens in a real browser against daphne: an API key created in the page
works with httpx until it is revoked there; a webhook endpoint pointing at a real loopback
receiver shows its deliveries with request and answer, and a replay reaches the receiver
again; the event feed shows a new event live."""

from __future__ import annotations

import os

import httpx
import pytest

from platform_core.tenancy.context import tenant_context
from platform_core.webhooks.models import WebhookDelivery
from tests.browser import BROWSER_TEST
from tests.conftest import make_tenant
from tests.platform_core.webhooks.receivers import start_receiver

from .conftest import shot

pytestmark = [*BROWSER_TEST, pytest.mark.django_db(transaction=True)]

# daphne (started once for this module) inherits these: the receiver is on loopback, and
# a delivery fails after two attempts in one drain (one retry slot of 0 s), so a test can
# see a failed delivery and replay it without waiting for the retry schedule.
DAPHNE_ENV = {"ALLOW_PRIVATE_WEBHOOK_TARGETS": "true", "WEBHOOK_RETRY_SCHEDULE": "0",
              "WEBHOOK_TIMEOUT_SECONDS": "3"}


@pytest.fixture(scope="module", autouse=True)
def _daphne_env():
    """Set before `dashboard_server` starts (module autouse fixtures come first)."""
    previous = {name: os.environ.get(name) for name in DAPHNE_ENV}
    os.environ.update(DAPHNE_ENV)
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def receiver():
    r = start_receiver()
    yield r
    r.close()


def _create_contact(server: str, raw_key: str, email: str) -> dict:
    response = httpx.post(f"{server}/api/v1/contacts", headers={"X-API-Key": raw_key},
                          json={"first_name": "Ada", "email": email}, timeout=30)
    assert response.status_code == 201, response.text
    return response.json()["data"]


def test_api_key_created_in_the_page_works_with_httpx_until_revoked(page_as, dashboard_server):
    tenant = make_tenant()
    page = page_as(tenant.owner, tenant.org, "/dashboard/developers/api-keys")
    page.fill("#key-name", "Reporting job")
    page.check("input[name=scopes][value='*']")
    page.click("#key-form button[type=submit]")
    key_input = page.locator("#new-api-key")
    key_input.wait_for()
    raw = key_input.input_value()
    key_id = key_input.get_attribute("data-key-id")
    assert raw.startswith("svc_test_")  # a sandbox organization's default mode
    row = page.locator(f"#key-list tr[data-key-id='{key_id}']")
    assert "Reporting job" in row.inner_text()
    assert raw not in row.inner_text()  # the list shows the prefix and last four only
    shot(page, "developers-keys")

    url = f"{dashboard_server}/api/v1/organization"
    response = httpx.get(url, headers={"X-API-Key": raw}, timeout=30)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["slug"] == tenant.org.slug

    page.on("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Revoke").click()
    page.locator(f"#key-list tr[data-key-id='{key_id}'] .badge.bad").wait_for()
    response = httpx.get(url, headers={"X-API-Key": raw}, timeout=30)
    assert response.status_code == 401
    # Reloading never shows the key again.
    page.reload()
    assert page.locator("#new-api-key").count() == 0
    assert raw not in page.content()


def test_webhook_delivery_log_shows_request_and_answer_and_replay_reaches_the_receiver(
        page_as, dashboard_server, receiver):
    tenant = make_tenant()
    receiver.mode = "500"
    page = page_as(tenant.owner, tenant.org, "/dashboard/developers/webhooks")
    page.fill("#new-url", receiver.url)
    page.fill("#new-events", "contact.created")
    page.fill("#new-description", "Local receiver")
    page.click("#endpoint-form button[type=submit]")
    assert page.locator("#new-endpoint-secret").input_value().startswith("whsec_")
    assert page.locator("#endpoint-list").get_by_text(receiver.url).is_visible()

    contact = _create_contact(dashboard_server, tenant.raw_key, "ada@example.com")
    # Both attempts reached the receiver and were answered 500: the delivery failed.
    assert len(receiver.requests) == 2
    assert receiver.requests[0].json["data"]["contact"]["id"] == contact["id"]

    page.click("text=Open the endpoint and its delivery log")
    failed_row = page.locator("#delivery-log tr[data-status=failed]")
    failed_row.get_by_role("link", name="contact.created").click()
    detail = page.locator("#delivery-detail")
    assert detail.locator("#delivery-response-status").inner_text() == "500"
    assert contact["id"] in detail.locator("#delivery-request-body").inner_text()
    assert detail.locator("#delivery-response-body").inner_text().startswith("xxxx")
    assert detail.locator("table.attempts tbody tr").count() == 2

    receiver.mode = "ok"
    page.click("#delivery-replay")
    detail.get_by_text("Replayed as event").wait_for()
    assert detail.locator("#delivery-response-status").inner_text() == "200"
    page.locator("#delivery-log tr[data-status=succeeded]").wait_for()
    assert len(receiver.requests) == 3
    replayed = receiver.requests[-1].json
    assert replayed["data"] == receiver.requests[0].json["data"]
    assert replayed["id"] != receiver.requests[0].json["id"]
    with tenant_context(tenant.org):
        replay = WebhookDelivery.objects.get(event_id=replayed["id"])
    assert replay.status == "succeeded"
    assert replay.replay_of_id is not None
    shot(page, "developers-webhooks")


def test_event_feed_lists_recent_events_then_shows_a_new_one_live(page_as, dashboard_server):
    tenant = make_tenant()
    first = _create_contact(dashboard_server, tenant.raw_key, "first@example.com")
    page = page_as(tenant.owner, tenant.org, "/dashboard/developers/events")
    rows = page.locator("#event-rows tr[data-event-id]")
    assert first["id"] in rows.first.text_content()  # data in a closed <details>
    page.wait_for_selector("body[data-live-ready]")

    second = _create_contact(dashboard_server, tenant.raw_key, "second@example.com")
    page.wait_for_function(
        "id => document.querySelector('#event-rows tr[data-event-id]')"
        ".textContent.includes(id)", arg=second["id"])
    newest = rows.first
    assert newest.get_attribute("data-event-type") == "contact.created"
    assert "new-row" in newest.get_attribute("class")  # written by developers.js
    newest.locator("summary").click()
    assert second["id"] in newest.locator("pre").inner_text()
    assert page.locator("#live-state").inner_text() == "(live)"
    # The API docs link of the area opens the OpenAPI reference.
    assert page.locator("#api-docs-link").get_attribute("href") == "/api/docs"
    assert httpx.get(f"{dashboard_server}/api/docs", timeout=30).status_code == 200
    shot(page, "developers-events")
