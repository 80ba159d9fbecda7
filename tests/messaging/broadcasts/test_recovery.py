"""What the timed drain does after a worker was killed mid-batch (its claims are settled
from the send journal: an answer is applied, a call that started ends `failed` with
`DISPATCH_INTERRUPTED` and is never sent twice, a call that never started is sent), and
the sandbox receipts swept when due; both move a broadcast's counters like any
transition."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from messaging import services as messaging
from messaging.models import Message
from messaging.sending import journal
from platform_core.tenancy.context import tenant_context

from .conftest import get_broadcast, make_contacts, make_list, recount

pytestmark = pytest.mark.django_db


def _queued(tenant, to: str, **fields) -> Message:
    with tenant_context(tenant.org):
        return Message.objects.create(organization=tenant.org, channel="sms", to=to,
                                      from_address="+15005550006", body="Hi",
                                      provider="sandbox", **fields)


@pytest.fixture
def provider_calls(monkeypatch):
    """The sandbox provider's calls, by message id."""
    from messaging.providers.sandbox import SandboxProvider

    calls: list[str] = []
    real = SandboxProvider.send

    def spy(self, message, account):
        calls.append(message.pk)
        return real(self, message, account)

    monkeypatch.setattr(SandboxProvider, "send", spy)
    return calls


def test_a_killed_batch_is_settled_from_the_journal_once_the_lease_is_over(
        tenant, commit, settings, provider_calls):
    """Four claims a killed worker left: the provider answered one (journal), one call had
    started, one never started, one the provider took `queued` (its id stored)."""
    settings.MESSAGING_DISPATCH_LEASE_SECONDS = 120
    now = timezone.now()
    answered = _queued(tenant, "+14155550121", status="queued", dispatched_at=now)
    started = _queued(tenant, "+14155550122", status="queued", dispatched_at=now)
    never = _queued(tenant, "+14155550123", status="queued", dispatched_at=now)
    accepted = _queued(tenant, "+14155550124", status="queued", dispatched_at=now,
                       provider_message_id="SMabc")
    journal.record(starting=started.pk)
    journal.record(answered=(answered.pk, {"status": "sent", "provider": "sandbox",
                                           "provider_message_id": "SBXjournal"}))
    with commit():
        assert messaging.messages_dispatch_due()["interrupted"] == 0  # the lease holds
    with time_machine.travel(now + timedelta(seconds=121)), commit():
        assert messaging.messages_dispatch_due()["interrupted"] == 1
    with tenant_context(tenant.org):
        for message in (answered, started, never, accepted):
            message.refresh_from_db()
    # The journal's answer is applied (then the receipt, which has no delay here).
    assert (answered.status, answered.provider_message_id) == ("delivered", "SBXjournal")
    # The call that started may have reached the provider: never sent again.
    assert (started.status, started.error_code) == ("failed", "DISPATCH_INTERRUPTED")
    # The one never called was released and sent by the next batch, once.
    assert never.status == "delivered"
    assert provider_calls == [never.pk]
    # The provider had answered `queued` with its id: its receipts will come.
    assert accepted.status == "queued"
    assert journal.read([answered.pk, started.pk, never.pk]) == {}


def test_sandbox_receipts_are_swept_when_due(tenant, commit, settings):
    settings.MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS = 10
    sent_at = timezone.now()
    due = _queued(tenant, "+14155550123", status="sent", sent_at=sent_at,
                  dispatched_at=sent_at)
    silent = _queued(tenant, "+15005550010", status="sent", sent_at=sent_at,
                     dispatched_at=sent_at)  # the no-receipt magic number
    with commit():
        assert messaging.messages_dispatch_due()["sandbox_receipts"] == 0
    with time_machine.travel(sent_at + timedelta(seconds=10)), commit():
        assert messaging.messages_dispatch_due()["sandbox_receipts"] == 1
    with time_machine.travel(sent_at + timedelta(seconds=30)), commit():
        assert messaging.messages_dispatch_due()["sandbox_receipts"] == 0  # never twice
    with tenant_context(tenant.org):
        due.refresh_from_db()
        silent.refresh_from_db()
    assert due.status == "delivered"
    assert silent.status == "sent"


def test_sweeps_move_broadcast_counters(tenant, post_broadcast, commit, settings, monkeypatch):
    """A broadcast whose messages were stranded by a dead worker still ends exact."""
    settings.MESSAGING_DISPATCH_LEASE_SECONDS = 60
    settings.MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS = 10  # receipts due later
    contact_list = make_list(tenant, make_contacts(tenant, 3))
    broadcast_id = post_broadcast({"name": "Stranded", "channel": "sms", "body": "Hi",
                                   "audience": {"list_id": contact_list.pk}}).json()["data"]["id"]
    counters = get_broadcast(tenant, broadcast_id)["counters"]
    assert (counters["sent"], counters["delivered"]) == (3, 0)  # receipts not due yet
    # One message was claimed by a batch that died during its provider call.
    with tenant_context(tenant.org):
        message = Message.objects.filter(campaign_id=broadcast_id).first()
        Message.objects.filter(pk=message.pk).update(status="queued", sent_at=None,
                                                     provider_message_id=None)
    from messaging.broadcasts.models import Broadcast, BroadcastRecipient

    with tenant_context(tenant.org):
        Broadcast.objects.filter(pk=broadcast_id).update(sent=2)
        BroadcastRecipient.objects.filter(message_id=message.pk).update(status="queued")
    journal.record(starting=message.pk)
    with time_machine.travel(timezone.now() + timedelta(seconds=61)), commit():
        counts = messaging.messages_dispatch_due()
    assert (counts["interrupted"], counts["sandbox_receipts"]) == (1, 2)
    data = get_broadcast(tenant, broadcast_id)
    assert data["counters"]["delivered"] == 2
    assert data["counters"]["failed"] == 1
    assert data["counters"] == recount(tenant, broadcast_id)
