"""GET /verify (list, filters, constant queries), /verify/{id} (no capture of the named
routes), /verify/analytics and /verify/conversion-anomaly."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from messaging.verify.models import Status, Verification
from platform_core.tenancy.context import tenant_context

from .conftest import USER, error_code

pytestmark = pytest.mark.django_db


def _rows(tenant, specs):
    """specs: (to, channel, status, seconds_to_verify or None, days_ago)."""
    now = timezone.now()
    rows = []
    for to, channel, status, seconds, days_ago in specs:
        at = now - timedelta(days=days_ago, minutes=30)
        rows.append(Verification(
            organization=tenant.org, to=to, channel=channel, status=status,
            destination_prefix=to[:5] if to.startswith("+") else "@" + to.split("@")[1],
            created_at=at, expires_at=at + timedelta(minutes=10),
            verified_at=at + timedelta(seconds=seconds) if seconds is not None else None))
    with tenant_context(tenant.org):
        Verification.objects.bulk_create(rows)


def test_list_filters_and_constant_query_count(send, tenant):
    client = tenant.client()
    send({"to": USER})

    def count(params="") -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/api/v1/verify{params}").status_code == 200
        return len(queries)

    few = count()
    for i in range(4):
        send({"to": f"+1415555020{i}", "channel": "whatsapp"})
    assert count() == few
    listed = client.get("/api/v1/verify?channel=whatsapp").json()
    assert len(listed["data"]) == 4
    assert listed["meta"]["pagination"]["has_more"] is False
    assert [v["to"] for v in client.get(f"/api/v1/verify?to=%2B{USER[1:]}").json()["data"]] \
        == [USER]
    assert len(client.get("/api/v1/verify?status=sent").json()["data"]) == 5
    page = client.get("/api/v1/verify?limit=2").json()
    assert len(page["data"]) == 2
    assert page["meta"]["pagination"]["has_more"] is True
    bad = client.get("/api/v1/verify?status=bogus")
    assert (bad.status_code, error_code(bad)) == (400, "VALIDATION_ERROR")


def test_detail_reads_and_named_routes_are_not_captured(send, tenant):
    client = tenant.client()
    data = send({"to": USER}).json()["data"]
    detail = client.get(f"/api/v1/verify/{data['verification_id']}").json()["data"]
    assert detail["verification_id"] == data["verification_id"]
    assert "test_code" not in detail
    assert "code_hash" not in detail
    for path in ("analytics", "conversion-anomaly", "profiles", "configs", "factors/totp"):
        response = client.get(f"/api/v1/verify/{path}")
        assert response.status_code == 200, (path, response.content)
        assert response.json()["data"] != detail
    assert client.get("/api/v1/verify/ver_unknown").status_code == 404


def test_analytics(tenant):
    _rows(tenant, [
        ("+14155550001", "sms", Status.VERIFIED, 20, 1),
        ("+14155550002", "sms", Status.VERIFIED, 40, 2),
        ("+14155550003", "whatsapp", Status.FAILED, None, 3),
        ("+14155550004", "sms", Status.SENT, None, 4),  # lapsed: counts expired
        ("+14155550005", "email", Status.CANCELED, None, 5),
        ("+14155550006", "sms", Status.VERIFIED, 100, 45),  # outside 30 days
    ])
    data = tenant.client().get("/api/v1/verify/analytics").json()["data"]
    assert data["window_days"] == 30
    assert data["total"] == 5
    assert data["by_status"] == {"pending": 0, "sent": 0, "verified": 2, "failed": 1,
                                 "expired": 1, "canceled": 1}
    assert data["by_channel"] == {"sms": 3, "whatsapp": 1, "email": 1}
    assert data["avg_verify_seconds"] == 30.0
    wide = tenant.client().get("/api/v1/verify/analytics?window_days=500").json()["data"]
    assert (wide["window_days"], wide["total"], wide["avg_verify_seconds"]) == (90, 6, 53.333)
    narrow = tenant.client().get("/api/v1/verify/analytics?window_days=0").json()["data"]
    assert narrow["window_days"] == 1


def test_analytics_empty_and_bad_window(tenant):
    data = tenant.client().get("/api/v1/verify/analytics").json()["data"]
    assert (data["total"], data["avg_verify_seconds"]) == (0, None)
    bad = tenant.client().get("/api/v1/verify/analytics?window_days=abc")
    assert (bad.status_code, error_code(bad)) == (400, "VALIDATION_ERROR")


def test_analytics_is_one_aggregate_query(tenant):
    _rows(tenant, [(f"+1415555{i:04d}", "sms", Status.VERIFIED, 5, 1) for i in range(20)])
    with CaptureQueriesContext(connection) as queries:
        tenant.client().get("/api/v1/verify/analytics")
    assert sum("verify_verification" in q["sql"] for q in queries.captured_queries) == 1


def test_conversion_anomaly(tenant):
    healthy = [(f"+1212555{i:04d}", "sms", Status.VERIFIED if i < 18 else Status.EXPIRED,
                10, 1) for i in range(20)]
    pumped = [(f"+4477009{i:04d}", "sms", Status.VERIFIED if i == 0 else Status.EXPIRED,
               10, 1) for i in range(20)]
    _rows(tenant, healthy + pumped)
    with CaptureQueriesContext(connection) as queries:
        response = tenant.client().get("/api/v1/verify/conversion-anomaly")
    assert sum("verify_verification" in q["sql"] for q in queries.captured_queries) == 1
    data = response.json()["data"]
    assert (data["window_days"], data["total_sent"], data["total_verified"]) == (30, 40, 19)
    assert data["baseline_conversion_rate"] == 0.475
    assert data["flagged_destinations"] == 1
    top, other = data["destinations"]
    assert (top["prefix"], top["sent"], top["verified"], top["conversion_rate"]) == (
        "+4477", 20, 1, 0.05)
    assert top["band"] == "high"
    assert top["anomaly"] is True
    assert top["score"] == 0.8947
    assert top["estimated_spend_at_risk_usd"] == pytest.approx(19 * 0.05)
    assert data["estimated_spend_at_risk_usd"] == pytest.approx(19 * 0.05)
    assert (other["prefix"], other["anomaly"], other["band"], other["score"]) == (
        "+1212", False, "low", 0.0)
    assert other["estimated_spend_at_risk_usd"] == 0.0


@pytest.mark.parametrize("value", ["0", "91", "x"])
def test_conversion_anomaly_window_is_validated(tenant, value):
    response = tenant.client().get(f"/api/v1/verify/conversion-anomaly?window_days={value}")
    assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR")


def test_reads_need_verify_read(tenant):
    raw = tenant.client().post("/api/v1/api-keys", {
        "name": "m", "type": "secret", "scopes": ["messages:write"]},
        format="json").json()["data"]["key"]
    for path in ("", "/analytics", "/conversion-anomaly", "/profiles"):
        response = tenant.client(raw).get(f"/api/v1/verify{path}")
        assert (response.status_code, error_code(response)) == (403, "INSUFFICIENT_PERMISSIONS")
