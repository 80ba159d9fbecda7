"""How a code reaches the recipient: through the messaging pipeline (`messaging.services.
message_send`: providers, test mode, fallback) for the channels it carries.

A chain (`channel` then `fallback`) is walked at send time: a channel without a provider
(503 `PROVIDER_NOT_WIRED`) passes to the next one, so `rcs` then `sms` works on a
deployment without RCS. The channels after the one used go to the pipeline as the
message's own `fallback` (failure or no receipt falls back there).

Channels the pipeline does not carry yet (`viber`, `telegram`, `flashcall`: it answers
for `messaging.models.Channel` only) have no live provider: 503 `PROVIDER_NOT_WIRED`. In
test mode they are delivered by the verify sandbox double, which stores no message and
contacts nothing. They join the pipeline by themselves once it lists them.
"""

from __future__ import annotations

from dataclasses import dataclass

from messaging import services as messaging
from messaging.models import Channel
from messaging.providers import registry
from platform_core.errors import APIError

OTP_CHANNELS = ("sms", "whatsapp", "voice", "email", "rcs", "viber", "telegram", "flashcall")
PHONE_CHANNELS = frozenset(OTP_CHANNELS) - {"email"}
FACTOR_CHANNELS = ("totp", "push", "backup_code")
NETWORK_CHANNELS = ("sna", "silent")


def pipeline_channels() -> frozenset[str]:
    return frozenset(Channel.values)


@dataclass
class Delivery:
    channel: str
    message_id: str  # "" for the verify sandbox double
    fallback: list[str]


def _provider_error(organization, channel: str) -> APIError | None:
    if channel not in pipeline_channels():
        if organization.sandbox:
            return None
        return APIError("PROVIDER_NOT_WIRED",
                        f"No provider is configured for the {channel} channel.",
                        details={"channel": channel})
    try:
        registry.provider_for(organization, channel)
    except APIError as exc:
        return exc
    return None


def usable_chain(organization, chain: list[str]) -> list[str]:
    """The channels of `chain` that have a provider, in order; 503 when none has."""
    usable, first_error = [], None
    for channel in chain:
        error = _provider_error(organization, channel)
        if error is None:
            usable.append(channel)
        elif first_error is None:
            first_error = error
    if not usable:
        raise first_error  # type: ignore[misc]
    return usable


def deliver(*, organization, principal, chain: list[str], to: str, body: str,
            secret_body: str, subject: str, sender: str | None) -> Delivery:
    """Send `secret_body` on the first usable channel of `chain`, stored readable as the
    redacted `body` (the code masked); the rest become its fallback. A pipeline refusal
    (opt-out, invalid sender...) raises its registered error."""
    channel, *rest = chain
    if channel not in pipeline_channels():
        return Delivery(channel=channel, message_id="", fallback=rest)
    carried = [c for c in rest if c in pipeline_channels()]
    message = messaging.message_send(
        organization=organization, principal=principal, channel=channel, to=to, body=body,
        secret_body=secret_body, subject=subject or None, from_=sender or None,
        fallback=carried or None)
    return Delivery(channel=channel, message_id=message.pk, fallback=carried)
