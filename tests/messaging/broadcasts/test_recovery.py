"""What the message pipeline's sweep does after a worker was killed: a provider call that
never recorded its answer ends `failed` (`DISPATCH_INTERRUPTED`, never sent twice), and a
sandbox delivery receipt that was lost is re-sent, as a carrier retries its webhook; both
move a broadcast's counters like any transition."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from messaging import services as messaging
from messaging.models import Message
from platform_core.tenancy.context import tenant_context

from .conftest import get_broadcast, make_contacts, make_list, recount

pytestmark = pytest.mark.django_db


def _queued(tenant, to: str, **fields) -> Message:
    with tenant_context(tenant.org):
        return Message.objects.create(organization=tenant.org, channel="sms", to=to,
                                      from_address="+15005550006", body="Hi",
                                      provider="sandbox", **fields)


def test_an_interrupted_provider_call_fails_once_the_lease_is_over(tenant, commit, settings):
    settings.MESSAGING_DISPATCH_LEASE_SECONDS = 120
    claimed = _queued(tenant, "+14155550123", status="queued",
                      dispatched_at=timezone.now())
    answered = _queued(tenant, "+14155550124", status="queued",
                       dispatched_at=timezone.now(), provider_message_id="SMabc")
    with commit():
        assert messaging.messages_dispatch_due()["interrupted"] == 0
    with time_machine.travel(timezone.now() + timedelta(seconds=121)), commit():
        assert messaging.messages_dispatch_due()["interrupted"] == 1
    with tenant_context(tenant.org):
        claimed.refresh_from_db()
        answered.refresh_from_db()
    assert (claimed.status, claimed.error_code) == ("failed", "DISPATCH_INTERRUPTED")
    # The provider had answered `queued` with its id: its receipts will come.
    assert answered.status == "queued"


def test_a_lost_sandbox_receipt_is_sent_again(tenant, commit, settings):
    settings.MESSAGING_SANDBOX_RECEIPT_GRACE_SECONDS = 10
    sent_at = timezone.now()
    lost = _queued(tenant, "+14155550123", status="sent", sent_at=sent_at,
                   dispatched_at=sent_at)
    silent = _queued(tenant, "+15005550010", status="sent", sent_at=sent_at,
                     dispatched_at=sent_at)  # the no-receipt magic number
    with commit():
        assert messaging.messages_dispatch_due()["sandbox_receipts"] == 0
    with time_machine.travel(sent_at + timedelta(seconds=15)), commit():
        assert messaging.messages_dispatch_due()["sandbox_receipts"] == 1
    with tenant_context(tenant.org):
        lost.refresh_from_db()
        silent.refresh_from_db()
    assert lost.status == "delivered"
    assert silent.status == "sent"


def test_sweeps_move_broadcast_counters(tenant, post_broadcast, commit, settings, monkeypatch):
    """A broadcast whose messages were stranded by a dead worker still ends exact."""
    settings.MESSAGING_DISPATCH_LEASE_SECONDS = 60
    settings.MESSAGING_SANDBOX_RECEIPT_GRACE_SECONDS = 10
    from messaging.providers import sandbox

    monkeypatch.setattr(sandbox.SandboxProvider, "after_send", lambda self, m, r: None)
    contact_list = make_list(tenant, make_contacts(tenant, 3))
    broadcast_id = post_broadcast({"name": "Stranded", "channel": "sms", "body": "Hi",
                                   "audience": {"list_id": contact_list.pk}}).json()["data"]["id"]
    counters = get_broadcast(tenant, broadcast_id)["counters"]
    assert (counters["sent"], counters["delivered"]) == (3, 0)  # receipts lost
    # One message was claimed by a send task that died before the provider answered.
    with tenant_context(tenant.org):
        message = Message.objects.filter(campaign_id=broadcast_id).first()
        Message.objects.filter(pk=message.pk).update(status="queued", sent_at=None,
                                                     provider_message_id=None)
    from messaging.broadcasts.models import Broadcast, BroadcastRecipient

    with tenant_context(tenant.org):
        Broadcast.objects.filter(pk=broadcast_id).update(sent=2)
        BroadcastRecipient.objects.filter(message_id=message.pk).update(status="queued")
    with time_machine.travel(timezone.now() + timedelta(seconds=61)), commit():
        counts = messaging.messages_dispatch_due()
    assert (counts["interrupted"], counts["sandbox_receipts"]) == (1, 2)
    data = get_broadcast(tenant, broadcast_id)
    assert data["counters"]["delivered"] == 2
    assert data["counters"]["failed"] == 1
    assert data["counters"] == recount(tenant, broadcast_id)
