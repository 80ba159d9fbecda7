"""Header redaction (Document 1, 6.1) and the message event payload rule (2.3)."""

from __future__ import annotations

import pytest

from platform_core.webhooks.headers import REDACTED, is_secret_header, redact, response_headers
from platform_core.webhooks.payloads import message_event_data


@pytest.mark.parametrize("name", [
    "Authorization", "authorization", "PROXY-AUTHORIZATION", "Cookie", "X-Api-Key", "x-api-key",
    "X-Auth-Token", "X-CSRF-Token", "x-csrf-token", "X-Amz-Security-Token", "X-Client-Secret",
    "x-webhook-secret", "X-Shop-Token", "X-Partner-Key", "X-A-B-Key",
])
def test_secret_bearing_headers_are_redacted(name):
    assert is_secret_header(name)
    assert redact({name: "v", "X-Other": "keep"}) == {name: REDACTED, "X-Other": "keep"}


@pytest.mark.parametrize("name", [
    "X-Service-Signature", "X-Orbit-Signature", "webhook-signature", "webhook-id",
    "Content-Type", "X-Service-Delivery-Id", "X-Key", "X-Token", "X-Secret", "Keyboard",
    "X-Tokenizer", "Token", "X-Keys-Count", "Set-Cookie-Policy",
])
def test_other_headers_are_kept(name):
    assert not is_secret_header(name)
    assert redact([(name, "v")]) == {name: "v"}


def test_response_headers_drop_set_cookie_and_join_repeats():
    got = response_headers([("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("X-A", "1"),
                            ("X-A", "2"), ("Content-Type", "application/json")])
    assert got == {"X-A": "1, 2", "Content-Type": "application/json"}


def test_message_failed_carries_errors_only_when_captured():
    base = dict(message_id="msg_1", channel="sms", sender="+15550001", recipient="+15550002")
    with_error = message_event_data("message.failed", status="failed", error_code=30007,
                                    error_message="Carrier violation", **base)
    assert with_error == {"message_id": "msg_1", "channel": "sms", "from": "+15550001",
                          "to": "+15550002", "status": "failed", "error_code": "30007",
                          "error_message": "Carrier violation"}
    # Nothing captured: absent, not null.
    bare = message_event_data("message.failed", status="expired", **base)
    assert "error_code" not in bare
    assert "error_message" not in bare
    only_code = message_event_data("message.failed", status="failed", error_code="E1",
                                   error_message="", **base)
    assert only_code["error_code"] == "E1"
    assert "error_message" not in only_code
    # A successful transition never carries them, even if a stale error is passed along.
    delivered = message_event_data("message.delivered", status="delivered", error_code="30007",
                                   error_message="old", **base)
    assert "error_code" not in delivered
    assert "error_message" not in delivered
    assert set(delivered) == {"message_id", "channel", "from", "to", "status"}
    with pytest.raises(ValueError, match="error_code"):
        message_event_data("message.failed", status="failed", extra={"error_code": None}, **base)
    assert message_event_data("message.sent", status="sent", extra={"segments": 2},
                              **base)["segments"] == 2
