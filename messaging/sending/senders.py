"""Who a message is sent from and whether it may be sent to its recipient: the sender
(explicit, a messaging service's sticky pool, the provider account's default, the sandbox
default) and the opt-outs that block a send (rules in acceptance.py)."""

from __future__ import annotations

import hashlib
import random

from django.conf import settings

from platform_core.errors import APIError, validation_error

from .. import acceptance, validation
from ..models import Channel, MessagingService, OptOut, StickySender
from ..providers import registry
from ..providers import sandbox as sandbox_provider


def channel_family(channel: str) -> list[str]:
    """Channels that share opt-outs and sender pools: SMS and MMS are one."""
    return [Channel.SMS, Channel.MMS] if channel in (Channel.SMS, Channel.MMS) else [channel]


def opt_out_for(*, organization, channel: str, recipient: str, sender: str | None,
                messaging_service_id: str | None) -> OptOut | None:
    """The opt-out blocking a send, if any (see `acceptance.blocking_opt_outs`; `channel`
    does not narrow it: the row's `channel` only records where the STOP came from)."""
    return acceptance.blocking_opt_outs(organization.pk, recipient, sender=sender,
                                        messaging_service_id=messaging_service_id).first()


def opted_out_error(opt_out: OptOut, recipient: str) -> APIError:
    return APIError(
        "RECIPIENT_OPTED_OUT",
        f"{recipient} opted out of messages from this sender; nothing was sent.",
        details={"field": "to", "to": recipient,
                 "messaging_service_id": opt_out.messaging_service_id,
                 "sender": opt_out.sender or None,
                 "opted_out_at": opt_out.created_at.isoformat()},
    )


def sticky_sender_for(*, service: MessagingService, channel: str, recipient: str) -> str | None:
    """The pool's sender for `recipient`: the same one every time while it is in the pool."""
    pool = service.senders_for(channel)
    if not pool:
        return None
    if not service.sticky_sender:
        return random.choice(pool)  # noqa: S311 - load spreading, not security
    family = channel_family(channel)[0]
    rows = StickySender.objects.for_organization(service.organization).filter(
        messaging_service=service, channel=family, recipient=recipient)
    existing = rows.values_list("sender", flat=True).first()
    if existing in pool:
        return existing
    digest = int(hashlib.sha256(recipient.encode()).hexdigest(), 16)
    choice = pool[digest % len(pool)]
    if existing is not None:  # the remembered sender left the pool
        rows.update(sender=choice)
        return choice
    StickySender.objects.bulk_create(
        [StickySender(organization_id=service.organization_id, messaging_service=service,
                      channel=family, recipient=recipient, sender=choice)],
        ignore_conflicts=True,
    )
    return rows.values_list("sender", flat=True).first() or choice


_ACCOUNT_SENDER_KEYS = ("from", "default_from", "sender", "agent_id", "display_phone_number",
                        "phone_number")


def account_default_sender(account) -> str | None:
    """The sender a provider account is configured with (`from`, an RCS `agent_id`...)."""
    if account is None:
        return None
    setting = getattr(account, "setting", None)
    config = getattr(account, "config", None) or {}
    for key in _ACCOUNT_SENDER_KEYS:
        value = setting(key) if callable(setting) else config.get(key)
        if value:
            return str(value)
    return None


def resolve_sender_with(*, organization, channel: str, explicit: str | None,
                    service: MessagingService | None, recipient: str, account) -> str:
    if explicit:
        return validation.normalize_sender(channel, explicit,
                                           default_country=organization.default_country)
    if service is not None:
        sender = sticky_sender_for(service=service, channel=channel, recipient=recipient)
        if sender:
            return sender
        raise validation_error(
            "messaging_service_id",
            f"The messaging service has no {channel} sender; add one or pass `from`.")
    default = (account.setting("flashcall_prefix") if channel == Channel.FLASHCALL
               and account is not None and callable(getattr(account, "setting", None))
               else account_default_sender(account))
    if default:
        return default
    if account is not None:
        # The account sends with its own identity (a Twilio messaging service sid, a
        # WhatsApp phone number id): the adapter resolves it, or fails the message.
        return ""
    if organization.sandbox:
        return sandbox_provider.default_sender(channel)
    if channel == Channel.EMAIL and getattr(settings, "DEFAULT_FROM_EMAIL", ""):
        return settings.DEFAULT_FROM_EMAIL
    raise validation.missing(["from"], "Missing required field: from (or "
                                       "messaging_service_id with a sender pool).")


def resolve_sender(*, organization, channel: str, explicit: str | None = None,
                   service: MessagingService | None = None, recipient: str) -> str:
    """The from-address a send to `recipient` would use (explicit, the service's sticky
    pool, the provider account's default, the sandbox default): what the broadcast
    runner throttles on before it creates the message with that sender."""
    _provider, account = registry.provider_for(organization, channel)
    return resolve_sender_with(organization=organization, channel=channel, explicit=explicit,
                           service=service, recipient=recipient, account=account)
