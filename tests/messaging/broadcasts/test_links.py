"""Link tracking of broadcasts: links rewritten per recipient (per broadcast and per
messaging service, opt-in), the 302 redirect recording contact, message, campaign, time
and user agent, `link.clicked`, the broadcast's `clicked` counter, template analytics'
clicks and the segments `from-clicks` cohort of a campaign."""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from messaging import services as messaging
from messaging.broadcasts.selectors import campaign_info
from messaging.links.models import LinkClick, ShortLink
from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context
from templates import analytics

from .conftest import campaign_messages, get_broadcast, make_contacts, make_list, recount

pytestmark = pytest.mark.django_db

SHORT = re.compile(re.escape(settings.PUBLIC_BASE_URL) + r"/l/([A-Za-z0-9_\-]+)")
TARGET = "https://shop.example.com/sale?src=sms"


@pytest.fixture
def campaign_rows():
    """Template analytics names campaigns through the resolver the messaging app
    registers in ready(); another test may have replaced it, so put it back."""
    analytics.register_campaign_resolver(campaign_info)
    yield
    analytics.register_campaign_resolver(campaign_info)


def codes_by_contact(tenant, broadcast_id: str) -> dict[str, str]:
    codes = {}
    for message in campaign_messages(tenant, broadcast_id):
        found = SHORT.findall(message.body)
        assert len(found) == 1, message.body
        codes[message.contact_id] = found[0]
    return codes


def test_links_are_tracked_per_recipient_and_feed_clicks(tenant, post_broadcast, anon, commit,
                                                         campaign_rows):
    template = tenant.client().post("/api/v1/messages/templates", {
        "name": "sale", "channel": "sms", "language": "en",
        "content": f"Hi {{{{1}}}}, the sale is on: {TARGET}"}, format="json")
    assert template.status_code == 201, template.content
    template_id = template.json()["data"]["id"]
    people = make_contacts(tenant, 3)
    contact_list = make_list(tenant, people)
    response = post_broadcast({
        "name": "Sale", "channel": "sms", "template_name": "sale", "language": "en",
        "variables": {"1": "{{contact.first_name}}"}, "shorten_links": True,
        "audience": {"list_id": contact_list.pk}})
    assert response.status_code == 202, response.content
    broadcast_id = response.json()["data"]["id"]
    assert response.json()["data"]["shorten_links"] is True

    codes = codes_by_contact(tenant, broadcast_id)
    assert len(set(codes.values())) == 3  # one link per recipient
    with tenant_context(tenant.org):
        links = {link.code: link for link in ShortLink.objects.all()}
    messages = {m.contact_id: m for m in campaign_messages(tenant, broadcast_id)}
    for contact_id, code in codes.items():
        link = links[code]
        assert (link.target_url, link.campaign_id, link.contact_id, link.message_id) == (
            TARGET, broadcast_id, contact_id, messages[contact_id].pk)
    assert messages[people[0].pk].body.startswith("Hi Ana0, the sale is on: ")

    # Ana0 clicks twice, Ana1 once; Ana2 never.
    with commit():
        for contact, agent in ((people[0], "Phone/1"), (people[0], "Phone/2"),
                               (people[1], "Tablet/1")):
            redirect = anon.get(f"/l/{codes[contact.pk]}", HTTP_USER_AGENT=agent)
            assert redirect.status_code == 302
            assert redirect["Location"] == TARGET
    with tenant_context(tenant.org):
        clicks = list(LinkClick.objects.order_by("clicked_at", "id"))
    assert [(c.contact_id, c.message_id, c.campaign_id, c.user_agent) for c in clicks] == [
        (people[0].pk, messages[people[0].pk].pk, broadcast_id, "Phone/1"),
        (people[0].pk, messages[people[0].pk].pk, broadcast_id, "Phone/2"),
        (people[1].pk, messages[people[1].pk].pk, broadcast_id, "Tablet/1"),
    ]
    assert all(c.clicked_at for c in clicks)

    data = get_broadcast(tenant, broadcast_id)
    assert data["counters"]["clicked"] == 2  # recipients, not clicks
    assert data["counters"] == recount(tenant, broadcast_id)

    events = list(Event.objects.for_organization(tenant.org).filter(type="link.clicked")
                  .order_by("created_at", "id"))
    assert len(events) == 3
    assert events[0].data["campaign_id"] == broadcast_id
    assert events[0].data["message_id"] == messages[people[0].pk].pk
    assert events[0].data["contact_id"] == people[0].pk
    assert events[0].data["url"] == TARGET
    assert events[0].data["user_agent"] == "Phone/1"

    # Template analytics: the campaign row counts clicked messages.
    body = tenant.client().get(f"/api/v1/templates/{template_id}/analytics").json()["data"]
    assert body["totals"]["clicked"] == 2
    assert body["totals"]["delivered"] == 3
    assert body["rates"]["click_rate"] == 0.67
    [row] = body["campaigns"]
    assert (row["campaign_id"], row["name"], row["status"]) == (broadcast_id, "Sale",
                                                                "completed")
    assert row["totals"]["clicked"] == 2

    # Segments: the campaign's clickers as a static cohort.
    cohort = tenant.client().post("/api/v1/segments/from-clicks",
                                  {"campaign_id": broadcast_id}, format="json")
    assert cohort.status_code == 201, cohort.content
    segment = cohort.json()["data"]
    assert segment["member_count"] == 2
    members = tenant.client().get(f"/api/v1/contacts/segments/{segment['id']}/members")
    assert members.status_code == 200, members.content
    assert {m["id"] for m in members.json()["data"]} == {people[0].pk, people[1].pk}


def test_a_messaging_service_opts_in_for_its_broadcasts(tenant, post_broadcast):
    people = make_contacts(tenant, 2)
    contact_list = make_list(tenant, people)
    with tenant_context(tenant.org):
        shortening = messaging.messaging_service_create(
            organization=tenant.org, principal=None, name="Marketing", shorten_links=True,
            senders=[{"channel": "sms", "from": "+14155550100"}])
        plain = messaging.messaging_service_create(
            organization=tenant.org, principal=None, name="Alerts",
            senders=[{"channel": "sms", "from": "+14155550101"}])
    body = f"Sale: {TARGET}"
    tracked = post_broadcast({"name": "A", "channel": "sms", "body": body,
                              "messaging_service_id": shortening.pk,
                              "audience": {"list_id": contact_list.pk}}).json()["data"]
    untracked = post_broadcast({"name": "B", "channel": "sms", "body": body,
                                "messaging_service_id": plain.pk,
                                "audience": {"list_id": contact_list.pk}}).json()["data"]
    # The broadcast may override its service either way.
    forced = post_broadcast({"name": "C", "channel": "sms", "body": body,
                             "messaging_service_id": shortening.pk, "shorten_links": False,
                             "audience": {"list_id": contact_list.pk}}).json()["data"]
    assert tracked["shorten_links"] is None
    assert len(codes_by_contact(tenant, tracked["id"])) == 2
    assert {m.body for m in campaign_messages(tenant, untracked["id"])} == {body}
    assert {m.body for m in campaign_messages(tenant, forced["id"])} == {body}
    assert {m.from_address for m in campaign_messages(tenant, tracked["id"])} == {
        "+14155550100"}


def test_a_click_on_a_plain_message_link_is_recorded_without_a_campaign(tenant, send, anon,
                                                                        commit):
    data = send({"channel": "sms", "to": "+14155550123", "body": f"See {TARGET}",
                 "shorten_links": True}).json()["data"]
    [code] = SHORT.findall(data["body"])
    with commit():
        assert anon.get(f"/l/{code}", HTTP_USER_AGENT="UA").status_code == 302
    [event] = Event.objects.for_organization(tenant.org).filter(type="link.clicked")
    assert event.data["message_id"] == data["id"]
    assert event.data["campaign_id"] is None
