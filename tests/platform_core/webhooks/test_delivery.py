"""Deliveries to a real receiver on loopback: body, headers, signatures, redaction."""

from __future__ import annotations

import hashlib
import hmac
import socket

import pytest
from standardwebhooks import Webhook

from platform_core.webhooks import signing
from platform_core.webhooks.headers import REDACTED

from .conftest import deliveries

pytestmark = pytest.mark.django_db


def test_delivery_is_signed_and_verifiable_both_ways(tenant, receiver, make_endpoint, emit):
    endpoint = make_endpoint(receiver.url)
    secret = endpoint["secret"]
    event = emit(tenant, "message.delivered", {"message_id": "msg_1", "status": "delivered"})

    assert len(receiver.requests) == 1
    got = receiver.requests[0]
    assert got.answered
    # The body is the event envelope (Document 1, 2.3).
    assert got.json == event.envelope()
    assert set(got.json) == {"id", "type", "created_at", "data"}
    headers = {k.lower(): v for k, v in got.headers.items()}
    assert headers["content-type"] == "application/json"
    assert headers["x-service-event-type"] == "message.delivered"
    dlv = deliveries(tenant)[0]
    assert headers["x-service-delivery-id"] == dlv.pk
    ts = headers["x-service-timestamp"]
    assert ts.isdigit()

    # Ours: t=<ts>,v1=<hex HMAC-SHA256(secret, "<ts>.<raw body>")>, key = the secret string.
    expected = hmac.new(secret.encode(), f"{ts}.".encode() + got.body, hashlib.sha256).hexdigest()
    assert headers["x-service-signature"] == f"t={ts},v1={expected}"
    assert headers["x-orbit-signature"] == headers["x-service-signature"]
    assert signing.verify_service_signature(secret, headers["x-service-signature"], got.body)
    assert not signing.verify_service_signature(secret, headers["x-service-signature"],
                                                got.body + b" ")

    # Standard Webhooks: the reference library verifies it with the whsec_ secret as given.
    assert headers["webhook-id"] == event.pk
    assert headers["webhook-timestamp"] == ts
    assert Webhook(secret).verify(got.body, got.headers) == event.envelope()
    with pytest.raises(Exception, match="signature"):
        Webhook(signing.generate_secret()).verify(got.body, got.headers)


def test_delivery_record_as_document_1(tenant, receiver, make_endpoint, emit):
    endpoint = make_endpoint(
        receiver.url,
        headers={"Authorization": "Bearer receiver-secret", "X-Shop-Token": "tok-123",
                 "X-Client-Secret": "s3", "x-partner-key": "k1", "X-Tenant": "acme"},
    )
    emit(tenant)
    got = receiver.requests[0]
    # Custom headers reach the receiver in clear.
    assert got.headers["Authorization"] == "Bearer receiver-secret"
    assert got.headers["X-Shop-Token"] == "tok-123"
    assert got.headers["X-Tenant"] == "acme"

    response = tenant.client().get(f"/api/v1/webhooks/{endpoint['id']}/deliveries")
    assert response.status_code == 200
    row = response.json()["data"][0]
    assert row["status"] == "succeeded"
    assert row["attempts"] == 1
    assert row["next_retry_at"] is None
    assert row["response_status"] == 200
    sent = row["request_headers"]
    # Secret-bearing values redacted, names kept; the signature headers are not redacted.
    assert sent["Authorization"] == REDACTED
    assert sent["X-Shop-Token"] == REDACTED
    assert sent["X-Client-Secret"] == REDACTED
    assert sent["x-partner-key"] == REDACTED
    assert sent["X-Tenant"] == "acme"
    assert sent["X-Service-Signature"].startswith("t=")
    assert sent["X-Orbit-Signature"] == sent["X-Service-Signature"]
    assert sent["webhook-signature"].startswith("v1,")
    assert sent["Host"] == f"127.0.0.1:{receiver.port}"
    # Exactly the header set that went out on the wire.
    assert {k.lower() for k in sent} == {k.lower() for k in got.headers}
    # Response headers as returned, without Set-Cookie.
    assert row["response_headers"]["X-Receiver"] == "yes"
    assert not any(k.lower() == "set-cookie" for k in row["response_headers"])
    assert row["last_response_body"] == '{"ok":true}'
    # The secret never appears anywhere in the stored record.
    detail = tenant.client().get(
        f"/api/v1/webhooks/{endpoint['id']}/deliveries/{row['id']}").json()["data"]
    flat = str(detail)
    assert "receiver-secret" not in flat
    assert "tok-123" not in flat
    assert detail["payload"]["type"] == "message.delivered"
    assert detail["attempt_history"][0]["outcome"] == "succeeded"
    # The endpoint shows its custom headers redacted too.
    shown = tenant.client().get(f"/api/v1/webhooks/{endpoint['id']}").json()["data"]["headers"]
    assert shown == {"Authorization": REDACTED, "X-Shop-Token": REDACTED,
                     "X-Client-Secret": REDACTED, "x-partner-key": REDACTED, "X-Tenant": "acme"}


def test_response_body_keeps_first_500_bytes(tenant, receiver, make_endpoint, emit):
    endpoint = make_endpoint(receiver.url)
    receiver.mode = "500"
    emit(tenant)
    row = tenant.client().get(f"/api/v1/webhooks/{endpoint['id']}/deliveries").json()["data"][0]
    assert row["last_response_body"] == "x" * 500  # no truncation marker
    assert row["response_status"] == 500


def test_subscriptions_and_fanout_idempotence(tenant, receiver, make_endpoint, emit):
    wanted = make_endpoint(receiver.url, events=["message.failed", "message.delivered"])
    everything = make_endpoint(receiver.url + "?all=1", events=["*"])
    other = make_endpoint(receiver.url + "?other=1", events=["conversation.created"])
    event = emit(tenant, "message.failed", {"message_id": "m"})

    rows = deliveries(tenant, event_id=event.pk)
    assert {r.endpoint_id for r in rows} == {wanted["id"], everything["id"]}
    assert other["id"] not in {r.endpoint_id for r in rows}

    # At-least-once fan-out: running the handler again creates nothing new.
    from platform_core.webhooks.services import deliveries_create_for_event

    deliveries_create_for_event(event)
    assert len(deliveries(tenant, event_id=event.pk)) == 2
    # (`everything` also received the creation events of the endpoints made after it.)
    assert receiver.delivered_event_ids().count(event.pk) == 2


def test_disabled_endpoint_gets_nothing(tenant, receiver, make_endpoint, emit):
    make_endpoint(receiver.url, enabled=False)
    emit(tenant)
    assert receiver.requests == []
    assert deliveries(tenant) == []


def test_redirects_are_not_followed(tenant, receiver, make_endpoint, emit):
    make_endpoint(receiver.url)
    receiver.queue.append("302")
    emit(tenant)
    assert [r.path for r in receiver.requests] == ["/hook"]
    row = deliveries(tenant)[0]
    assert row.status == "pending"
    assert row.response_status == 302
    assert row.attempts == 1


def test_connects_to_the_checked_address_keeping_host(tenant, receiver, make_endpoint, emit,
                                                      monkeypatch):
    """The name is resolved once, checked, and the connection goes to that address."""
    real = socket.getaddrinfo
    lookups = []

    def fake(host, *args, **kwargs):
        if host == "hooks.customer.test":
            lookups.append(host)
            return real("127.0.0.1", *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    make_endpoint(f"http://hooks.customer.test:{receiver.port}/hook")
    emit(tenant)
    got = receiver.requests[0]
    assert got.answered
    assert got.headers["Host"] == f"hooks.customer.test:{receiver.port}"
    # One lookup at registration, one at delivery time, none by the HTTP client itself.
    assert lookups == ["hooks.customer.test", "hooks.customer.test"]


def test_dns_rechecked_at_delivery_time(tenant, receiver, make_endpoint, emit, settings):
    endpoint = make_endpoint(receiver.url)
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False  # the name now points somewhere private
    emit(tenant)
    assert receiver.requests == []
    row = deliveries(tenant)[0]
    assert row.status == "pending"
    assert row.last_error.startswith("unsafe_target")
    assert row.response_headers is None
    assert endpoint["id"] == row.endpoint_id


def test_rotated_secret_signs_later_deliveries(tenant, receiver, make_endpoint, emit):
    endpoint = make_endpoint(receiver.url)
    old = endpoint["secret"]
    response = tenant.client().post(f"/api/v1/webhooks/{endpoint['id']}/rotate-secret")
    assert response.status_code == 200
    new = response.json()["data"]["secret"]
    assert new != old
    assert new.startswith("whsec_")
    emit(tenant)
    got = receiver.requests[0]
    Webhook(new).verify(got.body, got.headers)
    assert signing.verify_service_signature(new, got.headers["X-Service-Signature"], got.body)
    assert not signing.verify_service_signature(old, got.headers["X-Service-Signature"], got.body)


def test_delivers_to_an_ipv6_receiver(tenant, private_targets, make_endpoint, emit):
    from .receivers import start_receiver

    try:
        receiver = start_receiver(host="::1", family=socket.AF_INET6)
    except OSError:
        pytest.skip("no IPv6 loopback here")
    try:
        make_endpoint(receiver.url)
        event = emit(tenant)
        assert receiver.delivered_event_ids() == [event.pk]
        assert receiver.requests[0].headers["Host"] == f"[::1]:{receiver.port}"
    finally:
        receiver.close()
