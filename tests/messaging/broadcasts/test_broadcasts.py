"""Broadcasts (campaigns) through HTTP: a list and a saved segment with exact counters,
opted-out and invalid recipients skipped, per-recipient variables, throttling per sender,
scheduling, cancel, validation, scopes and the list endpoint."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from contacts.models import Contact
from messaging import services as messaging
from messaging.broadcasts import services, throttle
from messaging.models import Message
from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context
from tests.conftest import make_tenant
from tests.templates.conftest import key_client

from .conftest import (
    BASE,
    campaign_messages,
    get_broadcast,
    load_broadcast,
    make_contacts,
    make_list,
    phone,
    recipients,
    recount,
)

pytestmark = pytest.mark.django_db

SANDBOX_SENDER = "+15005550006"


def error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    payload = response.json()["error"]
    assert payload["code"] == code, payload
    return payload


def stop(tenant, commit, address: str, to: str = SANDBOX_SENDER) -> None:
    """The recipient texts STOP to the sender (the sandbox inbound pipeline)."""
    with commit():
        response = tenant.client().post("/api/v1/sandbox/inbound", {
            "channel": "sms", "from": address, "to": to, "body": "STOP"}, format="json")
    assert response.status_code in (200, 201, 202), response.content


def events_of(tenant, prefix: str) -> list[Event]:
    return list(Event.objects.for_organization(tenant.org).filter(type__startswith=prefix)
                .order_by("created_at", "id"))


def test_broadcast_to_a_list_with_exact_counters(tenant, post_broadcast, commit):
    people = make_contacts(tenant, 4)
    Contact.objects.for_organization(tenant.org).filter(pk=people[3].pk).update(first_name="")
    failing = Contact.objects.for_organization(tenant.org).create(
        organization=tenant.org, first_name="Fay", phone="+15005550009")
    no_phone = Contact.objects.for_organization(tenant.org).create(
        organization=tenant.org, first_name="Mail", email="only@example.com")
    stop(tenant, commit, phone(2))
    contact_list = make_list(tenant, [*people, failing, no_phone])

    response = post_broadcast({
        "name": "Spring sale", "channel": "sms",
        "body": "Hi {{contact.first_name | there}}, 20% off today.",
        "audience": {"list_id": contact_list.pk},
    })
    assert response.status_code == 202, response.content
    accepted = response.json()["data"]
    assert accepted["id"].startswith("cmp_")
    assert accepted["status"] == "queued"
    assert accepted["audience"] == {"list_id": contact_list.pk}

    data = get_broadcast(tenant, accepted["id"])
    assert data["status"] == "completed"
    # The contact without a phone is not in the snapshot; STOP skipped one; the magic
    # number failed at the carrier.
    assert data["counters"] == {
        "total_recipients": 5, "queued": 4, "sent": 3, "delivered": 3, "failed": 1,
        "skipped_opted_out": 1, "skipped_invalid": 0, "canceled": 0, "clicked": 0,
    }
    assert data["counters"] == recount(tenant, accepted["id"])
    assert data["progress"] == {"processed": 5, "pending": 0, "percent": 100.0}
    assert data["started_at"]
    assert data["completed_at"]

    messages = {m.to: m for m in campaign_messages(tenant, accepted["id"])}
    assert set(messages) == {phone(0), phone(1), phone(3), "+15005550009"}
    assert messages[phone(0)].body == "Hi Ana0, 20% off today."
    assert messages[phone(3)].body == "Hi there, 20% off today."  # the default after `|`
    assert messages[phone(0)].contact_id == people[0].pk
    assert messages[phone(0)].from_address == SANDBOX_SENDER
    assert messages["+15005550009"].error_code == "30003"
    rows = {r.contact_id: r for r in recipients(tenant, accepted["id"])}
    assert rows[people[2].pk].status == "skipped_opted_out"
    assert rows[people[2].pk].error_code == "RECIPIENT_OPTED_OUT"
    assert rows[people[2].pk].message_id is None
    assert rows[people[0].pk].status == "delivered"
    assert rows[failing.pk].status == "failed"
    assert rows[people[0].pk].message_id == messages[phone(0)].pk

    # The messages API filters by campaign and shows it.
    listed = tenant.client().get(f"/api/v1/messages?campaign_id={accepted['id']}")
    assert listed.status_code == 200
    items = listed.json()["data"]
    assert len(items) == 4
    assert {item["campaign_id"] for item in items} == {accepted["id"]}

    kinds = [e.type for e in events_of(tenant, "broadcast.")]
    assert kinds == ["broadcast.started", "broadcast.completed"]
    started, completed = events_of(tenant, "broadcast.")
    assert started.data["broadcast_id"] == accepted["id"]
    assert started.data["counters"]["total_recipients"] == 5
    assert completed.data["status"] == "completed"
    assert completed.data["counters"]["queued"] == 4
    delivered = [e for e in events_of(tenant, "message.delivered")
                 if e.data.get("campaign_id") == accepted["id"]]
    assert len(delivered) == 3


def test_template_broadcast_to_a_saved_segment(tenant, post_broadcast):
    template = tenant.client().post("/api/v1/messages/templates", {
        "name": "promo", "channel": "sms", "language": "en",
        "content": "Hi {{1}}, use code {{2}}."}, format="json")
    assert template.status_code == 201, template.content
    template = template.json()["data"]
    vip = make_contacts(tenant, 4, tags=["vip"])
    make_contacts(tenant, 2, start=10)  # not in the segment
    Contact.objects.for_organization(tenant.org).filter(pk=vip[0].pk).update(
        custom_fields={"code": "A1"})
    Contact.objects.for_organization(tenant.org).filter(pk=vip[3].pk).update(first_name="")
    segment = tenant.client().post("/api/v1/contacts/segments", {
        "name": "VIP", "filters": {"op": "and", "rules": [
            {"field": "tags", "operator": "eq", "value": "vip"}]}}, format="json")
    assert segment.status_code == 201, segment.content
    segment = segment.json()["data"]

    response = post_broadcast({
        "name": "VIP promo", "channel": "sms", "template_name": "promo", "language": "en",
        "variables": {"1": "{{contact.first_name}}", "2": "{{contact.custom.code | WELCOME}}"},
        "audience": {"segment_id": segment["id"]},
    })
    assert response.status_code == 202, response.content
    broadcast_id = response.json()["data"]["id"]
    data = get_broadcast(tenant, broadcast_id)
    assert data["status"] == "completed"
    # vip[3] has no first name and variable 1 has no default: that send is refused.
    assert data["counters"] == {
        "total_recipients": 4, "queued": 3, "sent": 3, "delivered": 3, "failed": 0,
        "skipped_opted_out": 0, "skipped_invalid": 1, "canceled": 0, "clicked": 0,
    }
    assert data["counters"] == recount(tenant, broadcast_id)
    bodies = {m.contact_id: m.body for m in campaign_messages(tenant, broadcast_id)}
    assert bodies[vip[0].pk] == "Hi Ana0, use code A1."
    assert bodies[vip[1].pk] == "Hi Ana1, use code WELCOME."
    invalid = {r.contact_id: r for r in recipients(tenant, broadcast_id)}[vip[3].pk]
    assert (invalid.status, invalid.error_code) == ("skipped_invalid", "INVALID_TEMPLATE")
    messages = campaign_messages(tenant, broadcast_id)
    assert {(m.template_name, m.language, m.variables["1"]) for m in messages} == {
        ("promo", "en", "Ana0"), ("promo", "en", "Ana1"), ("promo", "en", "Ana2")}

    # Template analytics: the broadcast is a campaign row of the template.
    analytics = tenant.client().get(f"/api/v1/templates/{template['id']}/analytics")
    assert analytics.status_code == 200, analytics.content
    campaigns = analytics.json()["data"]["campaigns"]
    assert len(campaigns) == 1
    assert campaigns[0]["campaign_id"] == broadcast_id
    assert (campaigns[0]["name"], campaigns[0]["status"]) == ("VIP promo", "completed")
    assert campaigns[0]["totals"]["sent"] == 3
    assert campaigns[0]["totals"]["delivered"] == 3


def test_counters_follow_later_status_transitions(tenant, post_broadcast):
    people = make_contacts(tenant, 2)
    silent = Contact.objects.for_organization(tenant.org).create(
        organization=tenant.org, first_name="Sid", phone="+15005550010")  # no receipt
    contact_list = make_list(tenant, [*people, silent])
    broadcast_id = post_broadcast({"name": "Later", "channel": "sms", "body": "Hello",
                                   "audience": {"list_id": contact_list.pk}}).json()["data"]["id"]
    counters = get_broadcast(tenant, broadcast_id)["counters"]
    assert (counters["sent"], counters["delivered"]) == (3, 2)
    message = next(m for m in campaign_messages(tenant, broadcast_id) if m.to == silent.phone)
    with tenant_context(tenant.org):
        assert messaging.message_apply_status(message=message, status="undelivered",
                                              error_code="30005")
        # A late or repeated receipt changes nothing (the lifecycle is monotonic).
        assert not messaging.message_apply_status(message=message, status="delivered")
    counters = get_broadcast(tenant, broadcast_id)["counters"]
    assert (counters["sent"], counters["delivered"], counters["failed"]) == (3, 2, 1)
    assert counters == recount(tenant, broadcast_id)


def test_one_message_per_recipient_is_a_database_rule(tenant, post_broadcast):
    people = make_contacts(tenant, 1)
    contact_list = make_list(tenant, people)
    broadcast_id = post_broadcast({"name": "Once", "channel": "sms", "body": "Hello",
                                   "audience": {"list_id": contact_list.pk}}).json()["data"]["id"]
    from django.db import IntegrityError, transaction

    with tenant_context(tenant.org), pytest.raises(IntegrityError), transaction.atomic():
        messaging.message_send(organization=tenant.org, channel="sms", to=phone(0),
                               body="again", contact_id=people[0].pk, campaign_id=broadcast_id)
    assert len(campaign_messages(tenant, broadcast_id)) == 1


# --- Throttling ---------------------------------------------------------------------------


def test_token_bucket_grants_at_the_rate(tenant, settings):
    settings.MESSAGING_SENDER_BURST_SECONDS = 1.0
    granted, wait = throttle.take(organization_id=tenant.org.pk, sender="+14155550100",
                                  want=5, rate=2)
    assert granted == 2  # the burst: one second's worth
    assert 0.3 < wait <= 0.5
    granted, _ = throttle.take(organization_id=tenant.org.pk, sender="+14155550100", want=5,
                               rate=2)
    assert granted == 0
    time.sleep(0.55)
    granted, _ = throttle.take(organization_id=tenant.org.pk, sender="+14155550100", want=5,
                               rate=2)
    assert granted == 1
    # Another sender (and another organization) has its own bucket.
    assert throttle.take(organization_id=tenant.org.pk, sender="+14155550101", want=2,
                         rate=2)[0] == 2


def test_sends_are_throttled_per_sender(tenant, post_broadcast, settings):
    settings.MESSAGING_SENDER_BURST_SECONDS = 1.0
    people = make_contacts(tenant, 20)
    contact_list = make_list(tenant, people)
    response = post_broadcast({"name": "Slow", "channel": "sms", "body": "Hello",
                               "audience": {"list_id": contact_list.pk},
                               "rate_per_second": 10})
    broadcast_id = response.json()["data"]["id"]
    assert get_broadcast(tenant, broadcast_id)["counters"]["queued"] == 20
    created = sorted(m.created_at for m in campaign_messages(tenant, broadcast_id))
    # 10 at once (one second's burst), the other 10 at 10 per second.
    span = (created[-1] - created[0]).total_seconds()
    assert span >= 0.9, span
    early = [c for c in created if (c - created[0]).total_seconds() < 0.4]
    assert len(early) <= 10 + 4, len(early)


def test_a_messaging_service_pool_is_throttled_per_sender(tenant, post_broadcast, settings):
    settings.MESSAGING_SENDER_BURST_SECONDS = 1.0
    with tenant_context(tenant.org):
        service = messaging.messaging_service_create(
            organization=tenant.org, principal=None, name="Pool",
            senders=[{"channel": "sms", "from": "+14155550100"},
                     {"channel": "sms", "from": "+14155550101"}])
    people = make_contacts(tenant, 12)
    contact_list = make_list(tenant, people)
    response = post_broadcast({"name": "Pool", "channel": "sms", "body": "Hello",
                               "messaging_service_id": service.pk, "rate_per_second": 4,
                               "audience": {"list_id": contact_list.pk}})
    broadcast_id = response.json()["data"]["id"]
    messages = campaign_messages(tenant, broadcast_id)
    assert len(messages) == 12
    by_sender: dict[str, list] = {}
    for m in messages:
        by_sender.setdefault(m.from_address, []).append(m.created_at)
    assert set(by_sender) <= {"+14155550100", "+14155550101"}
    # Each sender: 4 at once, then 4 per second.
    for sender, times in by_sender.items():
        if len(times) > 4:
            span = (max(times) - min(times)).total_seconds()
            assert span >= (len(times) - 4) / 4 * 0.8, (sender, span)


# --- Scheduling and cancel ----------------------------------------------------------------


def test_scheduled_broadcast_starts_when_due(tenant, post_broadcast, commit):
    people = make_contacts(tenant, 3)
    contact_list = make_list(tenant, people)
    send_at = timezone.now() + timedelta(minutes=10)
    response = post_broadcast({"name": "Later", "channel": "sms", "body": "Hello",
                               "audience": {"list_id": contact_list.pk},
                               "send_at": send_at.isoformat()})
    assert response.status_code == 202, response.content
    data = response.json()["data"]
    assert data["status"] == "scheduled"
    with commit():
        assert services.broadcasts_due()["started"] == 0
    assert get_broadcast(tenant, data["id"])["status"] == "scheduled"
    with time_machine.travel(send_at + timedelta(seconds=1)), commit():
        assert services.broadcasts_due()["started"] == 1
    data = get_broadcast(tenant, data["id"])
    assert data["status"] == "completed"
    assert data["counters"]["delivered"] == 3


def test_cancel_a_scheduled_broadcast(tenant, post_broadcast, commit):
    contact_list = make_list(tenant, make_contacts(tenant, 2))
    send_at = timezone.now() + timedelta(hours=1)
    broadcast_id = post_broadcast({"name": "Later", "channel": "sms", "body": "Hello",
                                   "audience": {"list_id": contact_list.pk},
                                   "send_at": send_at.isoformat()}).json()["data"]["id"]
    with commit():
        response = tenant.client().post(f"{BASE}/{broadcast_id}/cancel")
    assert response.status_code == 200, response.content
    assert response.json()["data"]["status"] == "canceled"
    assert response.json()["data"]["canceled_at"]
    error(tenant.client().post(f"{BASE}/{broadcast_id}/cancel"), 409, "CONFLICT")
    with time_machine.travel(send_at + timedelta(seconds=1)), commit():
        services.broadcasts_due()
    assert campaign_messages(tenant, broadcast_id) == []
    assert [e.type for e in events_of(tenant, "broadcast.")] == ["broadcast.canceled"]


def test_cancel_a_running_broadcast(tenant, post_broadcast, commit, monkeypatch, settings):
    monkeypatch.setattr(services, "enqueue_runners",
                        lambda broadcast_id, count=1, countdown=None: None)
    settings.BROADCAST_BATCH_SIZE = 2
    contact_list = make_list(tenant, make_contacts(tenant, 6))
    broadcast_id = post_broadcast({"name": "Stop me", "channel": "sms", "body": "Hello",
                                   "audience": {"list_id": contact_list.pk}}).json()["data"]["id"]
    assert get_broadcast(tenant, broadcast_id)["status"] == "running"
    with commit():  # one batch, then the slice ends
        assert services.broadcast_run(broadcast_id=broadcast_id, budget_seconds=0) == "continue"
    with commit():
        response = tenant.client().post(f"{BASE}/{broadcast_id}/cancel")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["status"] == "canceled"
    assert data["counters"]["queued"] == 2
    assert data["counters"]["canceled"] == 4
    assert data["progress"] == {"processed": 6, "pending": 0, "percent": 100.0}
    with commit():
        assert services.broadcast_run(broadcast_id=broadcast_id) == "stopped"
    assert len(campaign_messages(tenant, broadcast_id)) == 2
    assert get_broadcast(tenant, broadcast_id)["counters"] == recount(tenant, broadcast_id)
    canceled = events_of(tenant, "broadcast.canceled")
    assert len(canceled) == 1
    assert canceled[0].data["counters"]["canceled"] == 4


# --- Crash and resume ---------------------------------------------------------------------


def test_a_crashed_batch_leaves_nothing_and_the_beat_resumes(tenant, post_broadcast, commit,
                                                             monkeypatch, settings):
    settings.BROADCAST_STALL_SECONDS = 30
    settings.BROADCAST_RUNNERS = 1
    contact_list = make_list(tenant, make_contacts(tenant, 5))
    real_send_one = services._send_one
    calls = {"n": 0}

    def crash_from_third(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] >= 3:
            raise RuntimeError("worker killed")
        return real_send_one(*args, **kwargs)

    monkeypatch.setattr(services, "_send_one", crash_from_third)
    # The runner dies mid-batch (eagerly, its error is logged by the enqueuer).
    post_broadcast({"name": "Crash", "channel": "sms", "body": "Hello",
                    "audience": {"list_id": contact_list.pk}})
    assert calls["n"] == 3
    with tenant_context(tenant.org):
        broadcast = load_broadcast(tenant, services.Broadcast.objects.get().pk)
    # The batch rolled back as a whole: no message, no mark, no counter.
    assert broadcast.status == "running"
    assert campaign_messages(tenant, broadcast.pk) == []
    assert {r.status for r in recipients(tenant, broadcast.pk)} == {"pending"}
    assert (broadcast.queued, broadcast.total_recipients) == (0, 5)

    monkeypatch.setattr(services, "_send_one", real_send_one)
    with commit():
        assert services.broadcasts_due()["resumed"] == 0  # the heartbeat is fresh
    with time_machine.travel(timezone.now() + timedelta(seconds=31)), commit():
        assert services.broadcasts_due()["resumed"] == 1
    data = get_broadcast(tenant, broadcast.pk)
    assert data["status"] == "completed"
    assert data["counters"]["queued"] == data["counters"]["delivered"] == 5
    messages = campaign_messages(tenant, broadcast.pk)
    assert len({m.contact_id for m in messages}) == len(messages) == 5
    with commit():  # a late duplicate runner finds nothing to do
        assert services.broadcast_run(broadcast_id=broadcast.pk) == "stopped"
    assert len(campaign_messages(tenant, broadcast.pk)) == 5


def test_a_lost_start_is_restarted_by_the_beat(tenant, post_broadcast, commit, monkeypatch,
                                                settings):
    settings.BROADCAST_STALL_SECONDS = 30
    monkeypatch.setattr(services, "enqueue_start", lambda broadcast_id: None)
    contact_list = make_list(tenant, make_contacts(tenant, 2))
    broadcast_id = post_broadcast({"name": "Lost", "channel": "sms", "body": "Hello",
                                   "audience": {"list_id": contact_list.pk}}).json()["data"]["id"]
    assert get_broadcast(tenant, broadcast_id)["status"] == "queued"
    with time_machine.travel(timezone.now() + timedelta(seconds=31)), commit():
        assert services.broadcasts_due()["started"] == 1
    assert get_broadcast(tenant, broadcast_id)["counters"]["delivered"] == 2


def test_a_provider_gone_at_start_fails_the_broadcast(tenant, post_broadcast, commit,
                                                      monkeypatch):
    monkeypatch.setattr(services, "enqueue_start", lambda broadcast_id: None)
    contact_list = make_list(tenant, make_contacts(tenant, 2))
    broadcast_id = post_broadcast({"name": "Doomed", "channel": "sms", "body": "Hello",
                                   "audience": {"list_id": contact_list.pk}}).json()["data"]["id"]
    type(tenant.org).objects.filter(pk=tenant.org.pk).update(sandbox=False)
    with commit():
        assert services.broadcast_start(broadcast_id=broadcast_id) == "failed"
    data = get_broadcast(tenant, broadcast_id)
    assert (data["status"], data["error_code"]) == ("failed", "PROVIDER_NOT_WIRED")
    assert [e.type for e in events_of(tenant, "broadcast.")] == ["broadcast.failed"]


# --- Validation, scopes, list -------------------------------------------------------------


def test_validation(tenant, post_broadcast):
    contact_list = make_list(tenant, make_contacts(tenant, 1))
    audience = {"list_id": contact_list.pk}
    base = {"name": "X", "channel": "sms", "body": "Hi", "audience": audience}
    error(post_broadcast({**base, "audience": {}}), 422, "MISSING_REQUIRED_FIELD")
    issue = error(post_broadcast({**base, "audience": {"list_id": contact_list.pk,
                                                       "segment_id": "seg_x"}}),
                  422, "VALIDATION_ERROR")
    assert issue["details"]["issues"][0]["field"] == "audience"
    issue = error(post_broadcast({**base, "audience": {"list_id": "lst_missing"}}), 422,
                  "VALIDATION_ERROR")
    assert issue["details"]["issues"][0]["field"] == "audience.list_id"
    error(post_broadcast({**base, "audience": {"segment_id": "seg_missing"}}), 422,
          "VALIDATION_ERROR")
    error(post_broadcast({**base, "body": ""}), 422, "MISSING_REQUIRED_FIELD")
    error(post_broadcast({**base, "channel": "pigeon"}), 422, "VALIDATION_ERROR")
    error(post_broadcast({"channel": "sms", "body": "Hi", "audience": audience}), 422,
          "VALIDATION_ERROR")  # name
    issue = error(post_broadcast({**base, "body": "Hi {{contact.shoe_size}}"}), 422,
                  "VALIDATION_ERROR")
    assert issue["details"]["issues"][0]["field"] == "body"
    error(post_broadcast({**base, "body": None, "template_name": "nope", "language": "en"}),
          422, "INVALID_TEMPLATE")
    error(post_broadcast({**base, "from": "not a number!"}), 422, "INVALID_FROM_NUMBER")
    error(post_broadcast({**base, "send_at": "2001-01-01T00:00:00Z"}), 422, "VALIDATION_ERROR")
    error(post_broadcast({**base, "rate_per_second": 0}), 422, "VALIDATION_ERROR")
    error(post_broadcast({**base, "messaging_service_id": "mgs_missing"}), 422,
          "VALIDATION_ERROR")
    error(post_broadcast({**base, "channel": "email"}), 422, "MISSING_REQUIRED_FIELD")
    template = tenant.client().post("/api/v1/messages/templates", {
        "name": "two", "channel": "sms", "language": "en", "content": "{{1}} and {{2}}"},
        format="json")
    assert template.status_code == 201
    issue = error(post_broadcast({**base, "body": None, "template_name": "two", "language": "en",
                                  "variables": {"1": "{{contact.first_name}}"}}),
                  422, "INVALID_TEMPLATE")
    assert "2" in issue["message"]
    with tenant_context(tenant.org):
        assert not services.Broadcast.objects.exists()


def test_live_organization_without_provider_is_503(db, commit):
    live = make_tenant(sandbox=False)
    contact_list = make_list(live, make_contacts(live, 1))
    with commit():
        response = live.client().post(BASE, {"name": "X", "channel": "sms", "body": "Hi",
                                             "audience": {"list_id": contact_list.pk}},
                                      format="json")
    error(response, 503, "PROVIDER_NOT_WIRED")


def test_scopes(tenant, post_broadcast):
    contact_list = make_list(tenant, make_contacts(tenant, 1))
    body = {"name": "X", "channel": "sms", "body": "Hi", "audience": {"list_id": contact_list.pk}}
    reader = key_client(tenant, ["messages:read"])
    assert post_broadcast(body, client=reader).status_code == 403
    broadcast_id = post_broadcast(body).json()["data"]["id"]
    assert reader.get(f"{BASE}/{broadcast_id}").status_code == 200
    assert reader.post(f"{BASE}/{broadcast_id}/cancel").status_code == 403
    outsider = key_client(tenant, ["contacts:read"])
    assert outsider.get(BASE).status_code == 403


def test_idempotent_create(tenant, post_broadcast):
    contact_list = make_list(tenant, make_contacts(tenant, 2))
    body = {"name": "Once", "channel": "sms", "body": "Hi",
            "audience": {"list_id": contact_list.pk}}
    headers = {"HTTP_IDEMPOTENCY_KEY": "bcast-1"}
    first = post_broadcast(body, headers=headers)
    again = post_broadcast(body, headers=headers)
    assert first.json()["data"]["id"] == again.json()["data"]["id"]
    with tenant_context(tenant.org):
        assert services.Broadcast.objects.count() == 1
        assert Message.objects.count() == 2


def test_list_is_paginated_newest_first(tenant, post_broadcast, django_assert_max_num_queries):
    contact_list = make_list(tenant, make_contacts(tenant, 1))
    send_at = (timezone.now() + timedelta(hours=1)).isoformat()
    ids = [post_broadcast({"name": f"B{i}", "channel": "sms", "body": "Hi", "send_at": send_at,
                           "audience": {"list_id": contact_list.pk}}).json()["data"]["id"]
           for i in range(3)]
    client = tenant.client()
    client.get(BASE)  # warm the credential cache
    with django_assert_max_num_queries(3):
        response = client.get(f"{BASE}?limit=2")
    assert response.status_code == 200
    body = response.json()
    assert [item["id"] for item in body["data"]] == ids[::-1][:2]
    assert body["meta"]["pagination"]["has_more"] is True
    cursor = body["meta"]["pagination"]["cursor"]
    rest = client.get(f"{BASE}?limit=2&cursor={cursor}").json()["data"]
    assert [item["id"] for item in rest] == [ids[0]]
    item = rest[0]
    assert item["status"] == "scheduled"
    assert item["counters"]["total_recipients"] == 0
    assert item["progress"] == {"processed": 0, "pending": 0, "percent": 0.0}
    assert tenant.client().get(f"{BASE}/cmp_missing").status_code == 404
