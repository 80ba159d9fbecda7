"""The fault mix of issue 13 ("Done means"): six sandbox organizations at once, each with
one webhook endpoint — healthy; 500 twice then 200; a 10 s timeout then 200; a connection
reset then 200; 3 s slow answers; 410 — and 20 sandbox messages each, sent through the API.

The bus runs here (eager); the deliveries run in a real Celery worker process (one, solo,
with its embedded beat sweeping every second) with the production timeout (10 s) and
lease. Every event owed to a receiver that eventually accepts is delivered, each accepted
once (one `webhook-id` once), and the healthy endpoint receives each of its events within
10 s whatever the others do.
"""

from __future__ import annotations

import signal
import time

import pytest
from django.db import transaction

from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context
from platform_core.webhooks import services
from platform_core.webhooks.models import WebhookDelivery

from .receivers import start_receiver
from .workers import Worker, broker_queue, kick_to, new_queue

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True),
              pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")]

# name: (one-shot behaviors first, then the steady mode)
FAULTS = {
    "healthy": ([], "ok"),
    "500-twice": (["500", "500"], "ok"),
    "timeout-once": (["hang"], "ok"),
    "reset-once": (["reset"], "ok"),
    "slow-3s": ([], "slow:3"),
    "gone": ([], "410"),
}
MESSAGES = 20


def _deliveries(tenant) -> list[WebhookDelivery]:
    with tenant_context(tenant.org):
        return list(WebhookDelivery.objects.order_by("id"))


def test_fault_mix(tenant_factory, tmp_path, monkeypatch, private_targets):
    tenants, receivers = {}, {}
    for name, (once, mode) in FAULTS.items():
        receivers[name] = start_receiver()
        receivers[name].queue.extend(once)
        receivers[name].mode = mode
        tenants[name] = tenant_factory()
    worker = None
    try:
        with broker_queue(new_queue("webhooks-fault-mix")) as queue:
            monkeypatch.setattr(services.DRAIN, "kick", kick_to(queue))
            worker = Worker("fault-mix", queue, tmp_path, beat=True, timeout=10, lease=None)
            worker.wait_ready()
            for name, tenant in tenants.items():
                response = tenant.client().post(
                    "/api/v1/webhooks", {"url": receivers[name].url, "events": ["*"]},
                    format="json")
                assert response.status_code == 201, response.content
            # The six organizations send at once, interleaved.
            for i in range(MESSAGES):
                for tenant in tenants.values():
                    with transaction.atomic():
                        response = tenant.client().post(
                            "/api/v1/messages",
                            {"channel": "sms", "to": "+14155550123", "body": f"hello {i}"},
                            format="json")
                    assert response.status_code == 202, response.content

            accepting = {n: t for n, t in tenants.items() if n != "gone"}
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if all(r.status == "succeeded" for t in accepting.values()
                       for r in _deliveries(t)):
                    break
                time.sleep(0.5)
    finally:
        if worker is not None:
            worker.kill(signal.SIGTERM)
        for receiver in receivers.values():
            receiver.close()

    log = worker.log.read_text()
    for name, tenant in accepting.items():
        with tenant_context(tenant.org):
            owed = set(Event.objects.values_list("pk", flat=True))
        rows = _deliveries(tenant)
        # The fan-out owed every event of the organization to its "*" endpoint...
        assert {r.event_id for r in rows} == owed, name
        assert len(owed) >= 3 * MESSAGES  # queued, sent, delivered per message (and more)
        # ...and every one was accepted, exactly once.
        assert [r.status for r in rows] == ["succeeded"] * len(rows), (name, log[-3000:])
        delivered = receivers[name].delivered_event_ids()
        assert sorted(delivered) == sorted(owed), name
        webhook_ids = [r.headers["webhook-id"] for r in receivers[name].requests if r.answered]
        assert len(webhook_ids) == len(set(webhook_ids)), name

    # The healthy endpoint: each event within 10 s of its emission, whatever the others do.
    with tenant_context(tenants["healthy"].org):
        created = {e.pk: e.created_at.timestamp() for e in Event.objects.all()}
    lags = [r.at - created[r.json["id"]] for r in receivers["healthy"].requests if r.answered]
    assert max(lags) <= 10, sorted(lags)[-5:]

    # 410: the endpoint is disabled at once; nothing more is sent to it.
    gone = _deliveries(tenants["gone"])
    assert gone[0].status == "failed"
    assert len(receivers["gone"].requests) <= services.conf.endpoint_concurrency()
    response = tenants["gone"].client().get("/api/v1/webhooks").json()["data"][0]
    assert response["enabled"] is False
