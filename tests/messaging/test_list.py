"""GET /api/v1/messages (cursor, filters, constant queries) and GET /api/v1/messages/{id}."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from messaging.models import Message

from .conftest import BUSINESS, USER, USER_2

pytestmark = pytest.mark.django_db

URL = "/api/v1/messages"


def seed(tenant, count: int, **fields) -> list[Message]:
    base = {"channel": "sms", "direction": "outbound", "to": USER, "from_address": BUSINESS,
            "body": "x", "status": "delivered"}
    rows = [Message(organization=tenant.org, **{**base, **fields}) for _ in range(count)]
    return Message.objects.for_organization(tenant.org).bulk_create(rows)


def ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [m["id"] for m in response.json()["data"]]


def test_newest_first_with_cursor(tenant):
    rows = seed(tenant, 7)
    client = tenant.client()
    first = client.get(URL, {"limit": 5})
    assert ids(first) == [m.pk for m in sorted(rows, key=lambda m: m.pk, reverse=True)][:5]
    meta = first.json()["meta"]["pagination"]
    assert meta["has_more"] is True
    assert meta["total"] == 7
    second = client.get(URL, {"limit": 5, "cursor": meta["cursor"]})
    assert len(ids(second)) == 2
    assert second.json()["meta"]["pagination"]["has_more"] is False


def test_filters(tenant):
    delivered = seed(tenant, 2)
    failed = seed(tenant, 1, status="failed", error_code="30003")
    whatsapp = seed(tenant, 1, channel="whatsapp", to=USER_2)
    inbound = seed(tenant, 1, direction="inbound", status="received", to=BUSINESS,
                   from_address=USER)
    old = seed(tenant, 1, created_at=timezone.now() - timedelta(days=10))
    client = tenant.client()
    assert set(ids(client.get(URL, {"status": "failed"}))) == {failed[0].pk}
    assert set(ids(client.get(URL, {"status": "failed,received"}))) == {failed[0].pk,
                                                                         inbound[0].pk}
    assert set(ids(client.get(URL, {"channel": "whatsapp"}))) == {whatsapp[0].pk}
    assert set(ids(client.get(URL, {"direction": "inbound"}))) == {inbound[0].pk}
    assert set(ids(client.get(URL, {"to": "(415) 555-0124"}))) == {whatsapp[0].pk}
    assert set(ids(client.get(URL, {"from": USER}))) == {inbound[0].pk}
    recent = (timezone.now() - timedelta(days=1)).isoformat()
    assert old[0].pk not in ids(client.get(URL, {"created_after": recent}))
    assert set(ids(client.get(URL, {"created_before": recent}))) == {old[0].pk}
    day = (timezone.now() - timedelta(days=10)).date().isoformat()
    assert set(ids(client.get(URL, {"created_after": day, "created_before": day}))) == {
        old[0].pk}
    combined = client.get(URL, {"status": "delivered", "channel": "sms",
                                "direction": "outbound", "created_after": recent})
    assert set(ids(combined)) == {m.pk for m in delivered}


@pytest.mark.parametrize(("params", "field"), [
    ({"status": "lost"}, "status"),
    ({"channel": "fax"}, "channel"),
    ({"direction": "sideways"}, "direction"),
    ({"created_after": "yesterday"}, "created_after"),
    ({"created_before": "2026-02-30"}, "created_before"),
])
def test_bad_filters_are_400(tenant, params, field):
    response = tenant.client().get(URL, params)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert response.json()["error"]["details"]["issues"][0]["field"] == field


def test_list_queries_are_constant(tenant, django_assert_max_num_queries):
    seed(tenant, 3, status="failed")
    client = tenant.client()
    params = {"status": "failed", "channel": "sms", "created_after": "2020-01-01", "limit": 50}
    client.get(URL, params)  # warm the credential cache
    # One page query, plus the capped total when there is more than a page.
    with django_assert_max_num_queries(2):
        assert len(ids(client.get(URL, params))) == 3
    seed(tenant, 60, status="failed", fallback=["sms"], metadata={"fallback": {"x": 1}})
    with django_assert_max_num_queries(2):
        assert len(ids(client.get(URL, params))) == 50
    with django_assert_max_num_queries(2):
        assert len(ids(client.get(URL, {**params, "limit": 5}))) == 5


def test_detail(tenant, send):
    data = send({"channel": "sms", "to": USER, "body": "x"}).json()["data"]
    detail = tenant.client().get(f"{URL}/{data['id']}")
    assert detail.status_code == 200
    assert detail.json()["data"]["id"] == data["id"]
    assert detail.json()["data"]["status"] == "delivered"
    assert tenant.client().get(f"{URL}/msg_NOPE").status_code == 404


def test_templates_routes_are_not_captured(tenant):
    """GET /messages/templates belongs to the templates family, not /messages/{id}."""
    response = tenant.client().get(f"{URL}/templates")
    assert response.status_code == 200, response.content
