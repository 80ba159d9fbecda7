"""RCS analytics: per-template volume and per-day sent/delivered/read over the message
records (one aggregation each), the READ receipt recorded by the inbound pipeline."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from messaging.inbound.items import ReceiptItem
from messaging.inbound.pipeline import process
from messaging.models import Message
from platform_core.tenancy.context import tenant_context

from .conftest import error, ok

pytestmark = pytest.mark.django_db
NOW = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)


def _message(tenant, *, template=None, status="delivered", days_ago=0, read=False,
             channel="rcs", direction="outbound", provider_id=None):
    created = NOW - timedelta(days=days_ago)
    with tenant_context(tenant.org):
        return Message.objects.create(
            organization=tenant.org, channel=channel, direction=direction, to="+14155550123",
            body="x", template_name=template, status=status, provider="rcs_business",
            provider_message_id=provider_id, created_at=created,
            sent_at=created if status in ("sent", "delivered") else None,
            delivered_at=created if status == "delivered" else None,
            metadata={"read_at": created.isoformat()} if read else {})


def test_template_analytics(api, tenant, django_assert_max_num_queries):
    for _ in range(3):
        _message(tenant, template="order_ready", read=True)
    _message(tenant, template="order_ready", status="failed")
    _message(tenant, template="promo", status="sent")
    _message(tenant, status="delivered")
    _message(tenant, status="queued")
    _message(tenant, template="old", days_ago=40)            # outside the default window
    _message(tenant, template="sms_one", channel="sms")      # another channel
    _message(tenant, template="in", direction="inbound", status="received")
    with time_machine.travel(NOW, tick=False), django_assert_max_num_queries(8):
        data = ok(api("GET", "/analytics/templates"))
    assert data["days"] == 30
    assert data["templates"] == [
        {"template_name": "order_ready", "messages": 4, "sent": 3, "delivered": 3, "read": 3,
         "failed": 1},
        {"template_name": "(no template)", "messages": 2, "sent": 1, "delivered": 1, "read": 0,
         "failed": 0},
        {"template_name": "promo", "messages": 1, "sent": 1, "delivered": 0, "read": 0,
         "failed": 0},
    ]
    with time_machine.travel(NOW, tick=False):
        wide = ok(api("GET", "/analytics/templates?days=90"))["templates"]
    assert {r["template_name"] for r in wide} == {"order_ready", "(no template)", "promo", "old"}


def test_daily_analytics(api, tenant):
    _message(tenant, read=True)
    _message(tenant, status="sent")
    _message(tenant, days_ago=2)
    _message(tenant, days_ago=2, status="failed")
    with time_machine.travel(NOW, tick=False):
        data = ok(api("GET", "/analytics/daily?days=7"))
    assert data["days"] == 7
    assert data["daily"] == [
        {"date": (NOW - timedelta(days=2)).date().isoformat(), "messages": 2, "sent": 1,
         "delivered": 1, "read": 0, "failed": 1},
        {"date": NOW.date().isoformat(), "messages": 2, "sent": 2, "delivered": 1, "read": 1,
         "failed": 0},
    ]


@pytest.mark.parametrize("query", ["days=0", "days=91", "days=abc", "days=-1"])
def test_window_validation(api, query):
    error(api("GET", f"/analytics/daily?{query}"), 422, "VALIDATION_ERROR")
    error(api("GET", f"/analytics/templates?{query}"), 422, "VALIDATION_ERROR")


def test_read_receipt_is_counted(api, tenant):
    message = _message(tenant, status="sent", provider_id="rbm-msg-1")
    with tenant_context(tenant.org):
        process(organization=tenant.org, items=[ReceiptItem(
            provider="rcs_business", provider_message_id="rbm-msg-1", status="delivered",
            raw={"eventType": "READ", "messageId": "rbm-msg-1"})])
        message.refresh_from_db()
    assert message.status == "delivered"
    assert "read_at" in message.metadata
    with time_machine.travel(NOW, tick=False):
        (row,) = ok(api("GET", "/analytics/daily"))["daily"]
    assert (row["delivered"], row["read"]) == (1, 1)
