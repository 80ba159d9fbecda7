"""How a code reaches the recipient: always through the messaging pipeline
(`messaging.services.message_send`: providers, test mode doubles, Message rows, status
events, fallback).

A chain (`channel` then `fallback`) is walked at send time: a channel without a provider
(503 `PROVIDER_NOT_WIRED`) passes to the next one, so `rcs` then `sms` works on a
deployment without RCS. The channels after the one used go to the pipeline as the
message's own `fallback` (failure or no receipt falls back there).

What each channel's message carries (the provider gets `secret_body`, every reader the
redacted `body`):
- text channels (sms, whatsapp, rcs, viber, email, voice): the localized text.
- code channels (`telegram` through Telegram Gateway, `flashcall`): the code alone; a
  flash call rings from the provider's caller id range (`flashcall_prefix`) followed by
  the code, so the code is the caller id's trailing digits.
- `magic_link`: the localized text with a signed single-use link, over email for an
  address and sms for a phone number.

The message carries `metadata.verification_id`: verify follows the delivery (and its
fallback children) through the message status events (`tracking.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from messaging import services as messaging
from messaging.models import CODE_CHANNELS
from messaging.providers import registry
from platform_core.errors import APIError

OTP_CHANNELS = ("sms", "whatsapp", "voice", "email", "rcs", "viber", "telegram", "flashcall")
PHONE_CHANNELS = frozenset(OTP_CHANNELS) - {"email"}
FACTOR_CHANNELS = ("totp", "push", "backup_code")
NETWORK_CHANNELS = ("sna", "silent")
LINK_CHANNEL = "magic_link"


def link_transport(to: str) -> str:
    """The messaging channel of a magic link to `to`."""
    return "email" if "@" in to else "sms"


@dataclass
class Delivery:
    channel: str
    message_id: str
    fallback: list[str]


def _provider_error(organization, channel: str) -> APIError | None:
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


def is_code_channel(channel: str) -> bool:
    return channel in CODE_CHANNELS


def deliver(*, organization, principal, chain: list[str], to: str, body: str,
            secret_body: str, subject: str, sender: str | None,
            verification_id: str) -> Delivery:
    """Send `secret_body` on the first channel of `chain`, stored readable as the redacted
    `body`; the rest become its fallback. A pipeline refusal (opt-out, invalid sender,
    no provider...) raises its registered error."""
    channel, *rest = chain
    transport = link_transport(to) if channel == LINK_CHANNEL else channel
    message = messaging.message_send(
        organization=organization, principal=principal, channel=transport, to=to, body=body,
        secret_body=secret_body, subject=subject or None, from_=sender or None,
        fallback=rest or None, metadata={"verification_id": verification_id})
    return Delivery(channel=channel, message_id=message.pk, fallback=rest)
