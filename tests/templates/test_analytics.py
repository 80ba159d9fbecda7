"""Template analytics exactly as Document 2, 2.3: totals, rates, campaigns, `degraded`;
the denormalized counters kept from message events; 404 outside the tenant."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from messaging.links.models import LinkClick, ShortLink
from messaging.models import Message
from platform_core.events import bus
from platform_core.events.bus import emit
from platform_core.webhooks.payloads import message_event_data
from templates import analytics
from templates.models import MessageTemplate, TemplateDailyStat, TemplateMessageMark

from .conftest import create, decide, error, wa_body


@pytest.fixture
def template(tenant):
    data = create(tenant, wa_body())
    assert decide(tenant, data["id"]).status_code == 200
    return data


def message(tenant, status="delivered", *, name="order_update", language="en",
            channel="whatsapp", direction="outbound") -> Message:
    return Message.objects.for_organization(tenant.org).create(
        organization=tenant.org, channel=channel, direction=direction, to="+14155550123",
        from_address="+14155550100", body="x", template_name=name, language=language,
        status=status)


def click(tenant, msg: Message, times=1) -> None:
    link = ShortLink.objects.for_organization(tenant.org).create(
        organization=tenant.org, code=f"c{msg.pk[-10:]}", target_url="https://shop.example",
        message_id=msg.pk)
    for _ in range(times):
        LinkClick.objects.for_organization(tenant.org).create(
            organization=tenant.org, link=link, message_id=msg.pk)


def fan_out(tenant, msg: Message, event_type: str) -> None:
    """Emit the message event and run the fan-out now, as the worker would after commit."""
    status = event_type.split(".", 1)[1]
    event = emit(organization=tenant.org, type=event_type, data=message_event_data(
        event_type, message_id=msg.pk, channel=msg.channel, sender=msg.from_address,
        recipient=msg.to, status=status))
    assert bus.dispatch(event.pk)


def analytics_of(client, template_id, alias=True):
    base = "/api/v1/templates" if alias else "/api/v1/messages/templates"
    return client.get(f"{base}/{template_id}/analytics")


def test_totals_and_rates_from_the_live_scan(tenant, template):
    delivered = [message(tenant) for _ in range(2)]
    message(tenant, "failed")
    message(tenant, "sent")
    message(tenant, "undelivered")
    # Not sends, or not this template variant:
    message(tenant, "scheduled")
    message(tenant, "canceled")
    message(tenant, language="fr")
    message(tenant, name="other")
    message(tenant, channel="sms")
    message(tenant, "received", direction="inbound")
    click(tenant, delivered[0], times=3)  # one clicked message, however many clicks
    fan_out(tenant, delivered[1], "message.read")
    response = analytics_of(tenant.client(), template["id"])
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["template"] == {"id": template["id"], "name": "order_update",
                                "channel": "whatsapp", "language": "en", "status": "approved"}
    assert data["totals"] == {"sent": 5, "delivered": 2, "failed": 2, "opened": 1, "clicked": 1}
    assert data["rates"] == {"delivery_rate": 0.5, "open_rate": 0.5, "click_rate": 0.5}
    assert data["campaigns"] == []
    assert data["degraded"] is False
    assert analytics_of(tenant.client(), template["id"], alias=False).json()["data"] == data


def test_rates_are_rounded_to_two_decimals(tenant, template):
    for status in ("delivered", "delivered", "failed"):
        message(tenant, status)
    rates = analytics_of(tenant.client(), template["id"]).json()["data"]["rates"]
    assert rates["delivery_rate"] == 0.67


def test_no_messages_gives_zeros(tenant, template):
    data = analytics_of(tenant.client(), template["id"]).json()["data"]
    assert data["totals"] == dict.fromkeys(("sent", "delivered", "failed", "opened", "clicked"),
                                           0)
    assert data["rates"] == {"delivery_rate": 0.0, "open_rate": 0.0, "click_rate": 0.0}


def test_404_outside_the_tenant(tenant, other_tenant, template):
    error(analytics_of(other_tenant.client(), template["id"]), 404, "NOT_FOUND")
    error(analytics_of(other_tenant.client(), template["id"], alias=False), 404, "NOT_FOUND")
    error(analytics_of(tenant.client(), "tpl_unknown"), 404, "NOT_FOUND")


def test_analytics_needs_templates_read(tenant, template):
    from .conftest import key_client

    assert analytics_of(key_client(tenant, ["templates:read"]), template["id"]).status_code == 200
    error(analytics_of(key_client(tenant, ["contacts:read"]), template["id"]), 403,
          "INSUFFICIENT_PERMISSIONS")


def _stats(tenant) -> dict:
    rows = TemplateDailyStat.objects.for_organization(tenant.org).values(
        "sent", "delivered", "failed", "opened", "clicked")
    totals = dict.fromkeys(("sent", "delivered", "failed", "opened", "clicked"), 0)
    for row in rows:
        for key in totals:
            totals[key] += row[key]
    return totals


def test_counters_follow_message_events_once(tenant, template):
    first, second, third = message(tenant, "queued"), message(tenant, "queued"), message(tenant)
    fan_out(tenant, first, "message.queued")
    fan_out(tenant, first, "message.sent")
    fan_out(tenant, first, "message.delivered")
    fan_out(tenant, first, "message.delivered")  # a repeated receipt
    fan_out(tenant, second, "message.failed")
    fan_out(tenant, third, "message.read")
    event = emit(organization=tenant.org, type="link.clicked",
                 data={"message_id": third.pk, "link_id": "lnk_1"})
    assert bus.dispatch(event.pk)
    assert _stats(tenant) == {"sent": 3, "delivered": 2, "failed": 1, "opened": 1, "clicked": 1}
    # The bus delivers at least once: handling the same event again changes nothing.
    from templates.counters import handle_event

    handle_event(event)
    assert _stats(tenant) == {"sent": 3, "delivered": 2, "failed": 1, "opened": 1, "clicked": 1}
    day = TemplateDailyStat.objects.for_organization(tenant.org).get()
    assert (day.template_id, day.day) == (template["id"], first.created_at.date())


def test_counters_ignore_other_messages(tenant, template):
    for msg in (message(tenant, name="unknown"), message(tenant, channel="sms", name=None),
                message(tenant, "received", direction="inbound")):
        fan_out(tenant, msg, "message.delivered")
    assert not TemplateMessageMark.objects.for_organization(tenant.org).exists()
    assert _stats(tenant)["sent"] == 0


def _slow_scan(monkeypatch):
    original = analytics._scan

    def slow(template):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(0.2)")
        return original(template)

    monkeypatch.setattr(analytics, "_scan", slow)


def test_degraded_when_the_scan_runs_over_its_budget(tenant, template, settings, monkeypatch):
    delivered, failed = message(tenant), message(tenant, "failed")
    fan_out(tenant, delivered, "message.delivered")
    fan_out(tenant, failed, "message.failed")
    message(tenant)  # very recent: no event counted yet
    settings.TEMPLATE_ANALYTICS_SCAN_BUDGET_MS = 50
    _slow_scan(monkeypatch)
    response = analytics_of(tenant.client(), template["id"])
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["degraded"] is True
    assert data["totals"] == {"sent": 2, "delivered": 1, "failed": 1, "opened": 0, "clicked": 0}
    assert data["rates"]["delivery_rate"] == 0.5
    # The connection is still usable and its timeout restored afterwards.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_sleep(0.1)")
    monkeypatch.undo()
    assert analytics_of(tenant.client(), template["id"]).json()["data"]["degraded"] is False


def test_campaign_rows_with_names_and_status(tenant, template, settings, monkeypatch):
    row = MessageTemplate.objects.for_organization(tenant.org).get(pk=template["id"])
    today = timezone.now().date()
    for day, campaign, sent, delivered, clicked in (
            (today, "cmp_a", 10, 8, 2), (today - timedelta(days=1), "cmp_a", 5, 4, 0),
            (today, "cmp_b", 3, 1, 1), (today, "", 2, 2, 0)):
        TemplateDailyStat.objects.for_organization(tenant.org).create(
            organization=tenant.org, template=row, day=day, campaign_id=campaign, sent=sent,
            delivered=delivered, failed=sent - delivered, clicked=clicked)
    previous = analytics._campaign_resolver
    analytics.register_campaign_resolver(
        lambda organization, ids: {"cmp_a": {"name": "Spring sale", "status": "completed"}})
    settings.TEMPLATE_ANALYTICS_SCAN_BUDGET_MS = 50
    _slow_scan(monkeypatch)
    try:
        data = analytics_of(tenant.client(), template["id"]).json()["data"]
    finally:
        analytics.register_campaign_resolver(previous)  # the broadcasts app's resolver
    assert data["degraded"] is True
    assert data["totals"]["sent"] == 20
    first, second = data["campaigns"]
    assert first == {"campaign_id": "cmp_a", "name": "Spring sale", "status": "completed",
                     "totals": {"sent": 15, "delivered": 12, "failed": 3, "opened": 0,
                                "clicked": 2},
                     "rates": {"delivery_rate": 0.8, "open_rate": 0.0, "click_rate": 0.17}}
    assert (second["campaign_id"], second["name"], second["status"]) == ("cmp_b", None, None)


def test_template_sends_over_http_feed_the_scan_and_the_counters(
        tenant, template, settings, monkeypatch, django_capture_on_commit_callbacks):
    """End to end in test mode: POST /api/v1/messages with the template; the sandbox walks
    the lifecycle; analytics counts the same whether it scans or reads the counters."""
    client = tenant.client()
    variables = {"1": "A-42", "2": "Ann", "3": "Monday"}
    with django_capture_on_commit_callbacks(execute=True):
        for to in ("+14155550123", "+15005550009"):  # the second fails at once (sandbox)
            response = client.post("/api/v1/messages", {
                "channel": "whatsapp", "to": to, "template_name": "order_update",
                "language": "en", "variables": variables}, format="json")
            assert response.status_code == 202, response.content
    live = analytics_of(client, template["id"]).json()["data"]
    assert live["degraded"] is False
    assert live["totals"] == {"sent": 2, "delivered": 1, "failed": 1, "opened": 0, "clicked": 0}
    assert live["rates"]["delivery_rate"] == 0.5
    settings.TEMPLATE_ANALYTICS_SCAN_BUDGET_MS = 50
    _slow_scan(monkeypatch)
    counted = analytics_of(client, template["id"]).json()["data"]
    assert counted["degraded"] is True
    assert counted["totals"] == live["totals"]
