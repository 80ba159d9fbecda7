"""The messaging screens through the Django test client: the log's filters, keyset pages
and query count, the send form (its errors, the viewer's refusal), a message's events,
templates with their approval state, broadcasts with their counters."""

from __future__ import annotations

import pytest
from django.test import Client

from contacts.models import ContactList
from messaging import services
from messaging.broadcasts.models import Broadcast
from messaging.models import Message
from platform_core.tenancy.context import tenant_context
from templates.models import MessageTemplate
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import add_member

from .conftest import client_as

pytestmark = pytest.mark.django_db

USER = "+14155550123"
FAIL = "+15005550009"




def send(org, **fields) -> Message:
    with tenant_context(org):
        return services.message_send(organization=org, **{"channel": "sms", "to": USER,
                                                           "body": "hello", **fields})


@pytest.fixture
def tenant():
    return make_tenant()


@pytest.fixture
def owner(tenant) -> Client:
    return client_as(tenant.owner, tenant.org)


@pytest.fixture
def viewer(tenant) -> Client:
    return client_as(add_member(tenant, "viewer"), tenant.org)


def test_log_lists_messages_newest_first_with_the_api_filters(tenant, owner):
    first = send(tenant.org, body="first one")
    second = send(tenant.org, channel="whatsapp", body="second one")
    other = make_tenant()
    send(other.org, body="another organization")

    page = owner.get("/dashboard/messaging/").content.decode()
    assert page.index(second.pk) < page.index(first.pk)
    assert "another organization" not in page
    assert "2 messages" in page

    page = owner.get("/dashboard/messaging/?channel=whatsapp").content.decode()
    assert second.pk in page
    assert first.pk not in page
    page = owner.get("/dashboard/messaging/?status=delivered").content.decode()
    assert second.pk not in page
    assert "No messages match these filters" in page
    # A filter value the API refuses is shown, never a 500.
    response = owner.get("/dashboard/messaging/?channel=pigeon")
    assert response.status_code == 400
    assert b"VALIDATION_ERROR" in response.content


def test_log_pages_with_a_keyset_cursor_and_refuses_a_forged_one(tenant, owner):
    sent = [send(tenant.org, body=f"n{i}") for i in range(27)]
    first = owner.get("/dashboard/messaging/?direction=outbound")
    page = first.content.decode()
    assert first.context["page"].next_url
    assert sent[-1].pk in page
    assert sent[1].pk not in page
    second = owner.get(first.context["page"].next_url).content.decode()
    assert sent[1].pk in second
    assert sent[0].pk in second
    assert sent[-1].pk not in second
    response = owner.get("/dashboard/messaging/?cursor=forged")
    assert response.status_code == 400
    assert b"INVALID_CURSOR" in response.content


def test_log_query_count_does_not_grow_with_the_rows(tenant, owner,
                                                     django_assert_max_num_queries):
    send(tenant.org)
    with django_assert_max_num_queries(20) as few:
        owner.get("/dashboard/messaging/")
    for i in range(20):
        send(tenant.org, body=f"more {i}")
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = owner.get("/dashboard/messaging/")
    assert response.content.decode().count("data-message-id=") == 21


def test_owner_sends_through_the_pipeline_and_sees_the_events(
        tenant, owner, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = owner.post("/dashboard/messaging/", {"channel": "sms", "to": USER,
                                                        "body": "From the dashboard"})
    assert response.status_code == 302
    with tenant_context(tenant.org):
        message = Message.objects.get()
    assert response["Location"] == f"/dashboard/messaging/{message.pk}"
    assert message.status == "delivered"
    assert message.body == "From the dashboard"

    page = owner.get(response["Location"]).content.decode()
    for event in ("message.queued", "message.sent", "message.delivered"):
        assert f'data-event-type="{event}"' in page
    assert 'data-status="delivered"' in page
    assert 'data-step="delivered"' in page


def test_a_failed_send_shows_its_error_code_on_the_detail(
        tenant, owner, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        owner.post("/dashboard/messaging/", {"channel": "sms", "to": FAIL, "body": "x"})
    with tenant_context(tenant.org):
        message = Message.objects.get()
    page = owner.get(f"/dashboard/messaging/{message.pk}").content.decode()
    assert 'data-event-type="message.failed"' in page
    assert "Error 30003" in page


def test_a_refused_send_shows_the_form_again_with_the_error(tenant, owner):
    response = owner.post("/dashboard/messaging/", {"channel": "sms", "to": "not a number",
                                                    "body": "kept text"})
    assert response.status_code == 422
    page = response.content.decode()
    assert 'data-error-code="INVALID_PHONE_NUMBER"' in page
    assert "kept text" in page
    assert "<details class=\"panel\" id=\"send-panel\" open>" in page
    with tenant_context(tenant.org):
        assert not Message.objects.exists()


def test_viewer_sees_no_send_form_and_a_viewer_send_is_refused(tenant, viewer):
    send(tenant.org)
    page = viewer.get("/dashboard/messaging/").content.decode()
    assert "data-message-id=" in page
    assert 'id="send-form"' not in page
    response = viewer.post("/dashboard/messaging/", {"channel": "sms", "to": USER,
                                                     "body": "sneaky"})
    assert response.status_code == 403
    with tenant_context(tenant.org):
        assert Message.objects.count() == 1


def test_another_organizations_message_is_not_found(tenant, owner):
    other = make_tenant()
    theirs = send(other.org)
    response = owner.get(f"/dashboard/messaging/{theirs.pk}")
    assert response.status_code == 404
    assert theirs.to.encode() not in response.content


def test_templates_show_their_approval_state_and_test_mode_decides(tenant, owner, viewer):
    response = owner.post("/dashboard/messaging/templates/", {
        "name": "order_ready", "channel": "whatsapp", "language": "en",
        "category": "utility", "content": "Your order {{1}} is ready"})
    assert response.status_code == 302
    owner.post("/dashboard/messaging/templates/", {
        "name": "order_ready", "channel": "sms", "language": "en", "category": "utility",
        "content": "Order {{1}} ready"})
    with tenant_context(tenant.org):
        pending = MessageTemplate.objects.get(channel="whatsapp")
    assert pending.status == "pending"
    page = owner.get("/dashboard/messaging/templates/").content.decode()
    assert 'data-channel="whatsapp"><th scope="row">whatsapp</th><td>1</td>' in page
    assert 'data-channel="sms"><th scope="row">sms</th><td>0</td><td>1</td>' in page
    assert page.count('data-status="pending"') == 1
    assert page.count('data-status="approved"') == 1

    refused = viewer.post(f"/dashboard/messaging/templates/{pending.pk}/decision",
                          {"decision": "approved"})
    assert refused.status_code == 403
    owner.post(f"/dashboard/messaging/templates/{pending.pk}/decision",
               {"decision": "rejected", "reason": "too vague"})
    pending.refresh_from_db()
    assert pending.status == "rejected"
    assert pending.rejection_reason == "too vague"
    viewer_page = viewer.get("/dashboard/messaging/templates/").content.decode()
    assert "too vague" in viewer_page
    assert 'id="template-form"' not in viewer_page
    assert "Approve</button>" not in viewer_page


def test_a_refused_template_keeps_the_form(tenant, owner):
    response = owner.post("/dashboard/messaging/templates/", {
        "name": "Bad Name!", "channel": "whatsapp", "language": "en", "content": "x"})
    assert response.status_code == 422
    assert b"data-error-code=" in response.content
    assert b"Bad Name!" in response.content


def test_broadcasts_list_their_counters_and_progress(tenant, owner, viewer):
    with tenant_context(tenant.org):
        contact_list = ContactList.objects.create(organization=tenant.org, name="VIPs")
        running = Broadcast.objects.create(
            organization=tenant.org, name="Spring sale", channel="sms", body="hi",
            list_id=contact_list.pk, status="running", total_recipients=10, queued=6,
            sent=5, delivered=4, failed=1, skipped_opted_out=1)
    page = owner.get("/dashboard/messaging/broadcasts/").content.decode()
    assert f'id="broadcast-{running.pk}"' in page
    assert 'hx-trigger="every 2s"' in page  # a running broadcast polls
    assert 'data-counter="delivered">4<' in page
    assert 'data-percent="70.0"' in page
    assert "VIPs (0)" in page  # the audience choices of the create form

    with tenant_context(tenant.org):
        Broadcast.objects.filter(pk=running.pk).update(status="completed", queued=9)
    row = owner.get(f"/dashboard/messaging/broadcasts/{running.pk}",
                    HTTP_HX_REQUEST="true").content.decode()
    assert 'data-percent="100.0"' in row
    assert "hx-trigger" not in row

    assert 'id="broadcast-form"' not in viewer.get("/dashboard/messaging/broadcasts/"
                                                   ).content.decode()
    refused = viewer.post("/dashboard/messaging/broadcasts/", {
        "name": "x", "channel": "sms", "audience": f"list:{contact_list.pk}", "body": "hi"})
    assert refused.status_code == 403
    with tenant_context(tenant.org):
        assert Broadcast.objects.count() == 1


def test_a_broadcast_without_audience_is_refused_with_the_form_kept(tenant, owner):
    response = owner.post("/dashboard/messaging/broadcasts/", {
        "name": "No one", "channel": "sms", "audience": "", "body": "hi"})
    assert response.status_code == 422
    assert b"No one" in response.content
    assert b"data-error-code=" in response.content


def test_templates_and_broadcasts_lists_query_count_does_not_grow(
        tenant, owner, django_assert_max_num_queries):
    def add(n: int, start: int) -> None:
        with tenant_context(tenant.org):
            for i in range(start, start + n):
                MessageTemplate.objects.create(organization=tenant.org, name=f"t{i}",
                                               channel="sms", language="en",
                                               status="approved", content="x")
                Broadcast.objects.create(organization=tenant.org, name=f"b{i}", channel="sms",
                                         body="x", list_id="lst_x", status="running")

    add(1, 0)
    counts = {}
    for path in ("/dashboard/messaging/templates/", "/dashboard/messaging/broadcasts/"):
        with django_assert_max_num_queries(20) as few:
            owner.get(path)
        counts[path] = len(few.captured_queries)
    add(15, 1)
    for path, count in counts.items():
        with django_assert_max_num_queries(count):
            owner.get(path)
