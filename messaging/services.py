"""Writes of the messaging family: sending, the status lifecycle, fallbacks, inbound messages
and messaging services (issue 6; messaging contract; 0-conventions.md section 6).

The send pipeline:

1. `message_send` (the API, later campaigns and conversation replies) validates the request
   (`validation.py`), picks the sender (explicit `from`, the messaging service's sticky
   pool, the provider account's default, the sandbox default), refuses an opted-out
   recipient (422 `RECIPIENT_OPTED_OUT`) and a live channel without a provider (503
   `PROVIDER_NOT_WIRED`, nothing stored), rewrites links when asked, stores the message
   `queued` (or `scheduled` with `send_at`) and emits `message.queued` /
   `message.scheduled`. After commit the task `messaging.send_message` is queued.
2. `message_dispatch` (the task) claims the message under its row lock (`dispatched_at`:
   a duplicate task sends nothing), calls the provider outside any transaction and
   applies the result through `message_apply_status`.
3. `message_apply_status` is the one way a message's status moves: monotonic (see
   `models.STATUS_RANK`), each transition stamps its time, emits its event and POSTs the
   event to the message's `status_callback`. Failures (`failed`, `undelivered`,
   `expired`) emit `message.failed` (Document 1, 2.3: it also covers the expired and
   submitted-without-receipt transitions) with `data.status` telling which.
4. Fallback chains: a failure of a message with a `fallback` list sends a child message on
   the next channel at once; `sent` without a delivery receipt within
   `fallback_after_seconds` does the same from the beat sweep (`messages_dispatch_due`).
   The trigger runs under the row lock of the message it falls back from and is recorded
   in `fallback_triggered_at`, so it fires once; nothing is sent once any message of the
   chain is delivered. A late receipt of the primary is recorded and sends nothing.
5. After a killed worker (the beat sweep, `messages_dispatch_due`): a queued message no
   task claimed is re-queued (once per ten stale periods); a message claimed but whose
   provider answer was never stored fails `DISPATCH_INTERRUPTED` after
   MESSAGING_DISPATCH_LEASE_SECONDS (at most once: it is never sent again); a sandbox
   receipt that was lost is re-sent, as a carrier retries its status webhook.
6. Broadcasts (`broadcasts/`): the runner creates each recipient's message through
   `message_send(campaign_id=...)`; every transition of such a message also moves the
   broadcast's recipient row and counters in the same transaction.

Message sends write no audit row (the message is its own record); cancels and messaging
service changes do.
"""

from __future__ import annotations

import hashlib
import logging
import random
import re
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal
from platform_core.webhooks.payloads import message_event_data

from . import acceptance, callbacks, dispatcher, validation
from .models import (
    FAILURE_STATUSES,
    STATUS_RANK,
    TERMINAL_STATUSES,
    Channel,
    Direction,
    Message,
    MessageStatus,
    MessagingService,
    OptOut,
    StickySender,
)
from .providers import registry
from .providers import sandbox as sandbox_provider

logger = logging.getLogger("messaging")

MESSAGE_FAILED = "message.failed"
_FAILURE_EVENT_STATUSES = FAILURE_STATUSES
_LINK = re.compile(r"https?://[^\s<>\"']+", re.IGNORECASE)
_LINK_TRAILING = ".,;:!?)]}'\""
# Queued but never claimed by a send task after this long: re-queued by the sweep.
DISPATCH_STALE_SECONDS = 60
# A stale message is re-queued at most once per this many stale periods.
REQUEUE_EVERY_STALE_PERIODS = 10
# Claimed but the provider's answer never stored after this long: the worker died.
DISPATCH_LEASE_SECONDS = 600
SANDBOX_RECEIPT_GRACE_SECONDS = 30
# Provider vocabulary folded into the lifecycle (Twilio's `accepted`/`sending`, WhatsApp's
# `read`, which implies delivery).
STATUS_ALIASES = {"accepted": "queued", "sending": "queued", "read": "delivered",
                  "undeliverable": "undelivered"}


# --- Events and callbacks ------------------------------------------------------------------


def event_type_for(status: str) -> str:
    return MESSAGE_FAILED if status in _FAILURE_EVENT_STATUSES else f"message.{status}"


def message_event(message: Message, status: str | None = None, *,
                  extra: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    status = status or message.status
    event_type = event_type_for(status)
    data = message_event_data(
        event_type,
        message_id=message.pk,
        channel=message.channel,
        sender=message.from_address or None,
        recipient=message.to,
        status=status,
        error_code=message.error_code,
        error_message=message.error_message,
        extra={
            "direction": message.direction,
            "messaging_service_id": message.messaging_service_id,
            "parent_message_id": message.parent_id,
            # A broadcast's messages name their campaign (absent on other messages).
            **({"campaign_id": message.campaign_id} if message.campaign_id else {}),
            **(extra or {}),
        },
    )
    return event_type, data


def _emit_status(message: Message, *, status: str | None = None,
                 extra: dict[str, Any] | None = None) -> None:
    event_type, data = message_event(message, status, extra=extra)
    event = emit(organization=message.organization, type=event_type, data=data)
    if message.status_callback:
        _callback_after_commit(message.organization_id, event.pk, message.status_callback)


def announce(message: Message) -> None:
    """Emit the acceptance event of a message accepted but not announced yet (see
    messaging/dispatcher.py); the caller records `announced_at`."""
    initial = MessageStatus.SCHEDULED if message.send_at else MessageStatus.QUEUED
    _emit_status(message, status=initial)


def _callback_after_commit(organization_id: str, event_id: str, url: str) -> None:
    callbacks.callbacks_enqueue([(organization_id, event_id, url)])


# --- Opt-outs and senders -------------------------------------------------------------------


def channel_family(channel: str) -> list[str]:
    """Channels that share opt-outs and sender pools: SMS and MMS are one."""
    return [Channel.SMS, Channel.MMS] if channel in (Channel.SMS, Channel.MMS) else [channel]


def opt_out_for(*, organization, channel: str, recipient: str, sender: str | None,
                messaging_service_id: str | None) -> OptOut | None:
    """The opt-out blocking a send, if any (see `acceptance.blocking_opt_outs`; `channel`
    does not narrow it: the row's `channel` only records where the STOP came from)."""
    return acceptance.blocking_opt_outs(organization.pk, recipient, sender=sender,
                                        messaging_service_id=messaging_service_id).first()


def _opted_out_error(opt_out: OptOut, recipient: str) -> APIError:
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


def _account_default_sender(account) -> str | None:
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


def _resolve_sender(*, organization, channel: str, explicit: str | None,
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
    default = _account_default_sender(account)
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
    return _resolve_sender(organization=organization, channel=channel, explicit=explicit,
                           service=service, recipient=recipient, account=account)


# --- Templates and links --------------------------------------------------------------------


def _render_template(*, organization, channel: str, name: str, language: str | None,
                     variables: dict):
    """The templates family's check and render of a template send (issue 7).

    `templates.services.render_for_send` answers the approved variant rendered with the
    variables, or raises 422 INVALID_TEMPLATE naming what is wrong (unknown template or
    language, not approved, missing or extra variables). Without the templates family only
    the shape of the request is checked (`validation.check_template_shape`).
    """
    try:
        from templates.services import render_for_send
    except ImportError:
        return None
    return render_for_send(organization=organization, channel=channel, template_name=name,
                           language=language, variables=variables)


def short_link_base() -> str:
    return (getattr(settings, "SHORT_LINK_BASE_URL", "") or settings.PUBLIC_BASE_URL).rstrip("/")


def shorten_body_links(*, organization, body: str, message_id: str,
                       contact_id: str | None, campaign_id: str | None = None
                       ) -> tuple[str, list[str]]:
    """Replace each http(s) link of `body` by a tracked short link `/l/<code>` carrying
    the message, its contact and its campaign (a broadcast), copied onto every click."""
    from messaging.links.services import short_link_create

    base = short_link_base()
    created: list[str] = []

    def replace(match: re.Match) -> str:
        url = match.group(0)
        tail = ""
        while url and url[-1] in _LINK_TRAILING:
            tail = url[-1] + tail
            url = url[:-1]
        if not validation.url_ok(url) or url.startswith(base + "/l/"):
            return match.group(0)
        link = short_link_create(organization=organization, target_url=url,
                                 message_id=message_id, contact_id=contact_id,
                                 campaign_id=campaign_id)
        created.append(link.pk)
        return f"{base}/l/{link.code}{tail}"

    return _LINK.sub(replace, body), created


def _contact_id_for(organization, channel: str, recipient: str) -> str | None:
    return acceptance.contact_id_for(organization.pk, channel, recipient)


def queue_send(message_id: str) -> None:
    """Queue the send task of `message_id` once the current transaction commits."""
    def enqueue() -> None:
        from .tasks import send_message

        try:
            send_message.delay(message_id)
        except Exception:
            logger.exception("could not queue message %s; the sweep will pick it up", message_id)

    transaction.on_commit(enqueue)


# --- Sending --------------------------------------------------------------------------------


def message_send(
    *,
    organization,
    channel: str | None = None,
    to: str | None = None,
    from_: str | None = None,
    body: str | None = None,
    media_url: Any = None,
    subject: str | None = None,
    template_name: str | None = None,
    content_template_id: str | None = None,
    language: str | None = None,
    variables: dict | None = None,
    messaging_service_id: str | None = None,
    status_callback: str | None = None,
    send_at: Any = None,
    fallback: Any = None,
    fallback_after_seconds: Any = None,
    shorten_links: bool | None = None,
    contact_id: str | None = None,
    conversation_id: str | None = None,
    campaign_id: str | None = None,
    principal: Principal | None = None,
) -> Message:
    """Validate and accept one outbound message (queued, or scheduled with `send_at`).

    `campaign_id` is given by the broadcast runner only: the message belongs to that
    broadcast (one per contact: a second one breaks the unique constraint)."""
    body = body or ""
    subject = subject or ""
    # 1. What must be there.
    channel = validation.check_channel(channel)
    absent = [f for f, v in (("to", to),) if v in (None, "")]
    if absent:
        raise validation.missing(absent)
    if content_template_id and not body:
        # A content template renders the body for this channel (or NO_VARIANT_FOR_CHANNEL).
        from templates.services import render_content_for_send

        rendered_content = render_content_for_send(
            organization=organization, content_template_id=content_template_id,
            channel=validation.check_channel(channel), variables=variables or {})
        body = rendered_content.body or ""
        subject = subject or rendered_content.subject or ""
        media_url = media_url or rendered_content.media_urls or None
    if not body and not template_name and media_url in (None, "", []):
        raise validation.missing(
            ["body", "template_name", "media_url"],
            "One of body, template_name or media_url is required.")
    if channel == Channel.EMAIL and not subject and not template_name:
        raise validation.missing(["subject"], "An email needs a subject (or a template).")
    # 2. The recipient, the content.
    country = organization.default_country
    to = validation.normalize_recipient(channel, to, default_country=country)
    media = validation.normalize_media(organization, media_url)
    if media and channel == Channel.VOICE:
        raise validation_error("media_url", "A voice call cannot carry media.")
    if media and channel == Channel.SMS:
        channel = Channel.MMS  # SMS with media is MMS (Twilio's behavior)
    if channel == Channel.MMS and not validation.is_nanp(to):
        raise APIError("MMS_NANP_ONLY", details={"field": "to", "to": to, "issues": [
            {"field": "to", "message": "MMS reaches +1 (North American) numbers only."}]})
    validation.check_body(channel, body)
    validation.check_template_shape(template_name, language, variables)
    if subject and channel != Channel.EMAIL:
        raise validation_error("subject", "subject is for email only.")
    # 3. Messaging service and options.
    service = validation.messaging_service(organization, messaging_service_id)
    callback = validation.check_callback_url(status_callback) or (
        service.status_callback if service is not None else None)
    when = validation.parse_send_at(send_at)
    chain, after = validation.check_fallback(channel, fallback, fallback_after_seconds)
    # 4. Providers: a live channel without one answers 503 before anything is stored.
    provider, account = registry.provider_for(organization, channel)
    for item in chain:
        registry.provider_for(organization, item)
    sender = _resolve_sender(organization=organization, channel=channel, explicit=from_,
                             service=service, recipient=to, account=account)
    template_meta: dict[str, Any] = {}
    if template_name:
        rendered = _render_template(organization=organization, channel=channel,
                                    name=template_name, language=language,
                                    variables=variables or {})
        if rendered is not None:
            body = body or getattr(rendered, "body", "") or ""
            if channel == Channel.EMAIL:
                subject = subject or getattr(rendered, "subject", "") or ""
            language = language or getattr(rendered, "language", None)
            template_meta = {
                "template_id": getattr(rendered, "template_id", None),
                "components": getattr(rendered, "components", []),
                "parameters": getattr(rendered, "parameters", []),
            }
    if shorten_links is None:
        shorten_links = bool(service and service.shorten_links)

    message = Message(
        organization=organization, channel=channel, direction=Direction.OUTBOUND, to=to,
        from_address=sender, body=body, media_urls=media, subject=subject,
        template_name=template_name, language=language, variables=variables or {},
        status=MessageStatus.SCHEDULED if when else MessageStatus.QUEUED,
        provider=provider.name, messaging_service=service,
        contact_id=contact_id or None,  # else the organization's contact with `to`
        conversation_id=conversation_id, campaign_id=campaign_id, status_callback=callback,
        shorten_links=bool(shorten_links), send_at=when, fallback=chain,
        fallback_after_seconds=after, created_at=timezone.now(),
        metadata={k: v for k, v in (("template", template_meta),
                                     ("sent_by", principal.actor_id if principal else None))
                  if v},
    )
    # The message is its own outbox row: the dispatcher announces and sends it.
    message.announced_at = None
    if shorten_links and body:
        with transaction.atomic():
            if message.contact_id is None:  # the short links carry the contact
                message.contact_id = _contact_id_for(organization, channel, to)
            message.body, links = shorten_body_links(
                organization=organization, body=body, message_id=message.pk,
                contact_id=message.contact_id, campaign_id=campaign_id)
            if links:
                message.metadata = {**message.metadata, "short_link_ids": links}
            _store_accepted(message)
    else:
        _store_accepted(message)  # one statement: no transaction needed
    transaction.on_commit(dispatcher.kick)
    return message


def _store_accepted(message: Message) -> None:
    """5. Opt-outs, then the row: one statement (`acceptance.py`). A refused send stores
    nothing (in a transaction, what the caller wrote before is rolled back by the error)."""
    for _attempt in range(3):
        if acceptance.insert_unless_opted_out(message):
            return
        opted = opt_out_for(organization=message.organization, channel=message.channel,
                            recipient=message.to, sender=message.from_address,
                            messaging_service_id=message.messaging_service_id)
        if opted is not None:
            raise _opted_out_error(opted, message.to)
        # The opt-out was lifted (START) between the two statements: accept again.
    raise APIError("CONFLICT", "The recipient's opt-out changed during the send; retry.")


def message_cancel(*, message: Message, principal: Principal | None = None,
                   request=None) -> Message:
    """scheduled -> canceled; any other status answers 409 CONFLICT."""
    with transaction.atomic():
        current = (Message.objects.for_organization(message.organization)
                   .select_for_update(of=("self",)).select_related("organization")
                   .get(pk=message.pk))
        if current.status != MessageStatus.SCHEDULED:
            raise APIError(
                "CONFLICT", f"Only a scheduled message can be canceled; this one is "
                            f"{current.status}.",
                details={"status": current.status},
            )
        _transition(current, MessageStatus.CANCELED)
        audit_record(action="message.canceled", organization=current.organization,
                     principal=principal, target=current, request=request,
                     metadata={"send_at": current.send_at.isoformat() if current.send_at
                               else None})
    return current


# --- The lifecycle --------------------------------------------------------------------------


_TIMESTAMP_FIELD = {
    MessageStatus.SENT: "sent_at",
    MessageStatus.DELIVERED: "delivered_at",
    MessageStatus.FAILED: "failed_at",
    MessageStatus.UNDELIVERED: "failed_at",
    MessageStatus.EXPIRED: "failed_at",
    MessageStatus.CANCELED: "canceled_at",
}


def _transition(current: Message, status: str, *, error_code: str | None = None,
                error_message: str | None = None) -> None:
    """Move a locked row to `status` (already checked to be forward) and emit its event.
    A broadcast's message also moves its recipient and the broadcast's counters, in this
    same transaction (`broadcasts.services.on_message_transition`)."""
    now = timezone.now()
    changed = ["status", "updated_at", "error_code", "error_message"]
    if current.announced_at is None:  # ahead of the dispatcher: acceptance comes first
        announce(current)
        current.announced_at = now
        changed.append("announced_at")
    previous = current.status
    current.status = status
    if status in FAILURE_STATUSES:
        current.error_code = str(error_code)[:64] if error_code not in (None, "") else None
        current.error_message = (str(error_message)[:1000]
                                 if error_message not in (None, "") else None)
    else:  # a successful transition clears a captured error (Document 1, 2.3)
        current.error_code = None
        current.error_message = None
    stamp = _TIMESTAMP_FIELD.get(status)
    if stamp and getattr(current, stamp) is None:
        setattr(current, stamp, now)
        changed.append(stamp)
    if status == MessageStatus.DELIVERED and current.sent_at is None:
        current.sent_at = now  # the receipt came before (or instead of) the send result
        changed.append("sent_at")
    if status in TERMINAL_STATUSES and current.fallback_due_at is not None:
        current.fallback_due_at = None
        changed.append("fallback_due_at")
    elif (status == MessageStatus.SENT and current.fallback
          and current.fallback_triggered_at is None and current.fallback_due_at is None):
        current.fallback_due_at = now + timedelta(seconds=current.fallback_after_seconds)
        changed.append("fallback_due_at")
    current.save(update_fields=sorted(set(changed)))
    _emit_status(current)
    if current.campaign_id:
        from .broadcasts.services import on_message_transition

        on_message_transition(current, previous=previous, status=status)


def message_apply_status(
    *,
    message: Message,
    status: str,
    error_code: str | None = None,
    error_message: str | None = None,
    provider_message_id: str | None = None,
) -> bool:
    """Move `message` to `status` if that is forward in the lifecycle; False when ignored.

    Out-of-order or repeated receipts never move a message backwards (a `sent` after
    `delivered` is dropped; nothing leaves a terminal status). A new `provider_message_id`
    is recorded either way. The passed instance is refreshed with the stored state.
    Provider words are folded in (`STATUS_ALIASES`); anything else is ignored (False).
    """
    status = STATUS_ALIASES.get(status, status)
    if status not in STATUS_RANK:
        logger.warning("status %r for message %s is not a lifecycle status; ignored", status,
                       message.pk)
        return False
    with transaction.atomic():
        current = (Message.objects.for_organization(message.organization)
                   .select_for_update(of=("self",)).select_related("organization")
                   .get(pk=message.pk))
        if provider_message_id and current.provider_message_id != provider_message_id:
            current.provider_message_id = provider_message_id
            current.save(update_fields=["provider_message_id", "updated_at"])
        moved = (current.status not in TERMINAL_STATUSES
                 and STATUS_RANK[status] > STATUS_RANK[current.status])
        if moved:
            _transition(current, status, error_code=error_code, error_message=error_message)
            if status in FAILURE_STATUSES and current.fallback:
                _fallback_fire(current, reason=status)
        elif status == MessageStatus.DELIVERED and current.fallback_triggered_at is not None:
            logger.info("late delivery receipt of %s after its fallback went out", current.pk)
    _refresh(message, current)
    return moved


def _refresh(target: Message, source: Message) -> None:
    for field in source._meta.concrete_fields:
        setattr(target, field.attname, getattr(source, field.attname))


# --- Dispatch (the send task) ---------------------------------------------------------------


def message_dispatch(*, message_id: str, final_attempt: bool = True) -> str:
    """Send a queued message through its provider. Returns the outcome:
    `skipped` (not queued, already claimed, unknown), `sent`, `queued` (the provider will
    report), `failed`, or `retry` (a transient provider error; the claim is released)."""
    from .providers.base import ProviderError

    now = timezone.now()
    with transaction.atomic():
        message = (
            Message.objects.dangerously_unscoped().select_for_update(skip_locked=True,
                                                                     of=("self",))
            .select_related("organization").filter(pk=message_id).first()
        )
        if (message is None or message.status != MessageStatus.QUEUED
                or message.dispatched_at is not None or message.direction != Direction.OUTBOUND):
            return "skipped"
        message.dispatched_at = now
        message.save(update_fields=["dispatched_at", "updated_at"])
    organization = message.organization

    from platform_core.tenancy.context import tenant_context

    with tenant_context(organization):
        # Opted out since it was accepted (a scheduled message, a STOP in between)?
        opted = opt_out_for(organization=organization, channel=message.channel,
                            recipient=message.to, sender=message.from_address,
                            messaging_service_id=message.messaging_service_id)
        if opted is not None:
            message_apply_status(message=message, status=MessageStatus.FAILED,
                                 error_code="RECIPIENT_OPTED_OUT",
                                 error_message="The recipient opted out before the send.")
            return "failed"
        try:
            provider, account = registry.provider_for(organization, message.channel)
        except APIError as exc:
            message_apply_status(message=message, status=MessageStatus.FAILED,
                                 error_code=exc.code, error_message=exc.message)
            return "failed"
        try:
            result = provider.send(message, account)
        except ProviderError as exc:
            if exc.retryable and not final_attempt:
                Message.objects.filter(pk=message.pk).update(dispatched_at=None)
                logger.warning("provider %s: transient error sending %s: %s", provider.name,
                               message.pk, exc)
                return "retry"
            message_apply_status(message=message, status=MessageStatus.FAILED,
                                 error_code=exc.code or "PROVIDER_ERROR",
                                 error_message=str(exc)[:1000])
            return "failed"
        except Exception:
            logger.exception("provider %s raised sending %s", provider.name, message.pk)
            message_apply_status(message=message, status=MessageStatus.FAILED,
                                 error_code="PROVIDER_ERROR",
                                 error_message="The provider failed unexpectedly.")
            return "failed"

        with transaction.atomic():
            Message.objects.filter(pk=message.pk).update(
                provider=provider.name,
                provider_message_id=result.provider_message_id or message.provider_message_id,
                updated_at=timezone.now(),
            )
            message.provider = provider.name
            if result.status == "queued":
                # Accepted; receipts follow. Start the no-receipt fallback timer now.
                if message.fallback:
                    Message.objects.filter(pk=message.pk, fallback_due_at__isnull=True,
                                           fallback_triggered_at__isnull=True).update(
                        fallback_due_at=timezone.now()
                        + timedelta(seconds=message.fallback_after_seconds))
                if result.provider_message_id:
                    message.provider_message_id = result.provider_message_id
            else:
                message_apply_status(
                    message=message, status=result.status, error_code=result.error_code,
                    error_message=result.error_message,
                    provider_message_id=result.provider_message_id)
            after_send = getattr(provider, "after_send", None)
            if after_send is not None:
                transaction.on_commit(lambda: after_send(message, result))
    return result.status


# --- Scheduled sends, stale queues and fallback timers (the beat sweep) ----------------------


def dispatch_stale_seconds() -> float:
    return float(getattr(settings, "MESSAGING_DISPATCH_STALE_SECONDS", DISPATCH_STALE_SECONDS))


def dispatch_lease_seconds() -> float:
    return float(getattr(settings, "MESSAGING_DISPATCH_LEASE_SECONDS", DISPATCH_LEASE_SECONDS))


def sandbox_receipt_grace_seconds() -> float:
    return float(getattr(settings, "MESSAGING_SANDBOX_RECEIPT_GRACE_SECONDS",
                         SANDBOX_RECEIPT_GRACE_SECONDS))


def messages_dispatch_due(*, batch: int = 200) -> dict[str, int]:
    """Announce accepted messages (a lost kick), send due scheduled messages, re-queue stale
    undispatched ones, fire due fallbacks, end interrupted provider calls and re-send the
    sandbox receipts a dead worker lost."""
    announced = dispatcher.dispatch_accepted()
    now = timezone.now()
    counts = {"announced": announced, "scheduled": 0, "requeued": 0, "fallbacks": 0,
              "interrupted": 0, "sandbox_receipts": 0}
    while True:
        with transaction.atomic():
            due = list(
                Message.objects.dangerously_unscoped()
                .select_for_update(skip_locked=True, of=("self",)).select_related("organization")
                .filter(status=MessageStatus.SCHEDULED, send_at__lte=now)
                .order_by("send_at")[:batch]
            )
            for message in due:
                _transition(message, MessageStatus.QUEUED)
                queue_send(message.pk)
        counts["scheduled"] += len(due)
        if len(due) < batch:
            break
    stale = list(
        Message.objects.dangerously_unscoped()
        .filter(status=MessageStatus.QUEUED, dispatched_at__isnull=True,
                created_at__lte=now - timedelta(seconds=dispatch_stale_seconds()))
        .order_by("created_at").values_list("pk", flat=True)[:batch * 5]
    )
    requeued = 0
    for message_id in stale:
        # Once per REQUEUE_EVERY: a message still waiting behind a long queue (not lost)
        # must not get a fresh duplicate task at every sweep.
        if cache.add(f"messaging:requeued:{message_id}", 1,
                     timeout=dispatch_stale_seconds() * REQUEUE_EVERY_STALE_PERIODS):
            _enqueue_now(message_id)
            requeued += 1
    counts["requeued"] = requeued
    while True:
        with transaction.atomic():
            due = list(
                Message.objects.dangerously_unscoped()
                .select_for_update(skip_locked=True, of=("self",)).select_related("organization")
                .filter(fallback_due_at__lte=now, fallback_triggered_at__isnull=True)
                .order_by("fallback_due_at")[:batch]
            )
            for message in due:
                if message.status in (MessageStatus.QUEUED, MessageStatus.SENT):
                    _fallback_fire(message, reason="no_delivery_receipt")
                else:
                    message.fallback_due_at = None
                    message.save(update_fields=["fallback_due_at", "updated_at"])
        counts["fallbacks"] += len(due)
        if len(due) < batch:
            break
    counts["interrupted"] = _end_interrupted_dispatches(now, batch=batch * 5)
    counts["sandbox_receipts"] = _sandbox_overdue_receipts(now, batch=batch * 5)
    return counts


INTERRUPTED_ERROR_MESSAGE = (
    "The worker stopped during the provider call, so whether the provider accepted the "
    "message is unknown; it is not sent again (at most once).")


def _end_interrupted_dispatches(now, *, batch: int) -> int:
    """Messages claimed by a send task that never recorded the provider's answer.

    The claim (`dispatched_at`) is taken before the provider call and the answer stored
    after it; a worker killed in between leaves the message `queued` and claimed. Sending
    it again could deliver it twice, so once the claim is older than
    MESSAGING_DISPATCH_LEASE_SECONDS (default 600, far above any provider timeout) the
    message fails with `DISPATCH_INTERRUPTED` (its fallback, if any, then fires). A
    provider that answered `queued` stored its message id: those wait for receipts.
    """
    cutoff = now - timedelta(seconds=dispatch_lease_seconds())
    stuck = list(
        Message.objects.dangerously_unscoped().select_related("organization")
        .filter(status=MessageStatus.QUEUED, dispatched_at__lte=cutoff,
                provider_message_id__isnull=True)
        .order_by("dispatched_at")[:batch]
    )
    from platform_core.tenancy.context import tenant_context

    ended = 0
    for message in stuck:
        with tenant_context(message.organization):
            ended += message_apply_status(message=message, status=MessageStatus.FAILED,
                                          error_code="DISPATCH_INTERRUPTED",
                                          error_message=INTERRUPTED_ERROR_MESSAGE)
    return ended


def _sandbox_overdue_receipts(now, *, batch: int) -> int:
    """The sandbox double's receipts that never ran (the worker holding the delayed
    receipt task was killed): a carrier retries its status webhook until it is taken, so
    the double's receipt is re-sent once overdue by MESSAGING_SANDBOX_RECEIPT_GRACE_SECONDS.
    The no-receipt magic recipients stay `sent`, as they must."""
    cutoff = now - timedelta(seconds=sandbox_provider.receipt_delay_seconds()
                             + sandbox_receipt_grace_seconds())
    overdue = list(
        Message.objects.dangerously_unscoped().select_related("organization")
        .filter(status=MessageStatus.SENT, provider=sandbox_provider.SandboxProvider.name,
                sent_at__lte=cutoff)
        .exclude(to__in=sandbox_provider.NO_RECEIPT_RECIPIENTS)
        .exclude(channel__in=sandbox_provider.RICH_CHANNELS,
                 to__in=sandbox_provider.RICH_NO_RECEIPT_RECIPIENTS)
        .order_by("sent_at")[:batch]
    )
    from platform_core.tenancy.context import tenant_context

    delivered = 0
    for message in overdue:
        with tenant_context(message.organization):
            delivered += message_apply_status(message=message,
                                              status=MessageStatus.DELIVERED)
    return delivered


def _enqueue_now(message_id: str) -> None:
    from .tasks import send_message

    try:
        send_message.delay(message_id)
    except Exception:
        logger.exception("could not queue message %s", message_id)


# --- Fallback chains ------------------------------------------------------------------------


def _chain_delivered(message: Message) -> bool:
    """Whether any message of `message`'s chain (root and its fallbacks) was delivered."""
    rows = Message.objects.for_organization(message.organization)
    root = message
    while root.parent_id is not None:
        parent = rows.filter(pk=root.parent_id).only("pk", "parent_id", "status").first()
        if parent is None:
            break
        root = parent
    level = [root.pk]
    seen: set[str] = set()
    while level:
        if rows.filter(pk__in=level, status=MessageStatus.DELIVERED).exists():
            return True
        seen.update(level)
        level = [pk for pk in rows.filter(parent_id__in=level).values_list("pk", flat=True)
                 if pk not in seen]
    return False


def _fallback_fire(message: Message, *, reason: str) -> Message | None:
    """Send the next channel of `message`'s chain. `message` is locked by the caller."""
    if not message.fallback or message.fallback_triggered_at is not None:
        return None
    now = timezone.now()
    message.fallback_triggered_at = now
    message.fallback_due_at = None
    outcome: dict[str, Any] = {"reason": reason}
    child = None
    if _chain_delivered(message):
        outcome["skipped"] = "chain_delivered"
    else:
        try:
            child = _fallback_child(message)
            outcome["child_id"] = child.pk
        except APIError as exc:
            outcome["skipped"] = exc.code
            logger.info("fallback of %s not sent: %s", message.pk, exc)
    message.metadata = {**message.metadata, "fallback": outcome}
    message.save(update_fields=["fallback_triggered_at", "fallback_due_at", "metadata",
                                "updated_at"])
    return child


def _fallback_child(parent: Message) -> Message:
    organization = parent.organization
    channel, rest = parent.fallback[0], list(parent.fallback[1:])
    body, media = parent.body, list(parent.media_urls)
    if media and channel == Channel.SMS:
        if validation.is_nanp(parent.to):
            channel = Channel.MMS
        else:
            body = "\n".join([body, *media]).strip()
            media = []
    if media and channel == Channel.VOICE:
        media = []
    provider, account = registry.provider_for(organization, channel)
    service = parent.messaging_service
    explicit = None
    if parent.from_address and service is None:
        try:
            explicit = validation.normalize_sender(
                channel, parent.from_address, default_country=organization.default_country)
        except APIError:
            explicit = None
    sender = _resolve_sender(organization=organization, channel=channel, explicit=explicit,
                             service=service if service and service.senders_for(channel)
                             else None,
                             recipient=parent.to, account=account)
    opted = opt_out_for(organization=organization, channel=channel, recipient=parent.to,
                        sender=sender, messaging_service_id=parent.messaging_service_id)
    if opted is not None:
        raise _opted_out_error(opted, parent.to)
    child = Message.objects.for_organization(organization).create(
        organization=organization, channel=channel, direction=Direction.OUTBOUND,
        to=parent.to, from_address=sender, body=body, media_urls=media,
        subject=parent.subject, template_name=parent.template_name, language=parent.language,
        variables=parent.variables, status=MessageStatus.QUEUED, provider=provider.name,
        messaging_service=parent.messaging_service, contact_id=parent.contact_id,
        conversation_id=parent.conversation_id, status_callback=parent.status_callback,
        shorten_links=parent.shorten_links, fallback=rest,
        fallback_after_seconds=parent.fallback_after_seconds, parent=parent,
        created_at=timezone.now(),
    )
    _emit_status(child)
    queue_send(child.pk)
    return child


# --- Inbound --------------------------------------------------------------------------------


def service_for_address(organization, address: str) -> MessagingService | None:
    """The messaging service whose sender pool holds `address` (a business number)."""
    if not address:
        return None
    services = MessagingService.objects.for_organization(organization).order_by("pk")
    if connection.features.supports_json_field_contains:
        return services.filter(senders__contains=[{"from": address}]).first()
    # SQLite (the embedded default) has no JSON containment: an organization has few
    # services, look through their pools here.
    return next((service for service in services if service.holds_sender(address)), None)


def _normalize_address(channel: str, raw: str, default_country: str) -> str:
    text = validation.strip_channel_prefix(raw or "")
    if channel == Channel.EMAIL:
        from contacts.normalize import parse_email

        return parse_email(text) or text
    from contacts.normalize import parse_phone

    return parse_phone(text, default_country=default_country) or text


def _contact_for_inbound(organization, channel: str, address: str) -> str | None:
    from contacts.normalize import parse_email, parse_phone

    if channel == Channel.EMAIL:
        email, phone = parse_email(address), None
    else:
        email, phone = None, parse_phone(address, default_country=organization.default_country)
    if not email and not phone:
        return None
    existing = _contact_id_for(organization, channel, email or phone)
    if existing:
        return existing
    from contacts.services import contact_create

    try:
        with transaction.atomic():
            return contact_create(organization=organization, principal=None, phone=phone,
                                  email=email).pk
    except (APIError, IntegrityError):  # created concurrently by another inbound message
        return _contact_id_for(organization, channel, email or phone)


def _conversation_for_inbound(organization, contact_id: str | None, channel: str,
                              at) -> str | None:
    if not contact_id:
        return None
    try:
        from conversations.services import conversation_for_inbound
    except ImportError:
        return None
    conversation = conversation_for_inbound(organization=organization, contact_id=contact_id,
                                            channel=channel, at=at)
    return conversation.pk


def normalized_block(message: Message, *, received_at=None) -> dict[str, Any]:
    from platform_core.events.models import iso_z

    return {
        "channel": message.channel,
        "from": message.from_address,
        "to": message.to,
        "text": message.body,
        "media": [{"url": url} for url in message.media_urls],
        "contact_id": message.contact_id,
        "conversation_id": message.conversation_id,
        "received_at": iso_z(received_at or message.created_at),
    }


def inbound_message_create(
    *,
    organization,
    channel: str,
    from_: str,
    to: str,
    body: str,
    media_urls: list[str] | None = None,
    provider: str,
    provider_message_id: str | None = None,
    raw: dict | None = None,
) -> Message:
    """Record a received message: contact, conversation, keywords, `message.received`.

    Idempotent on (provider, provider_message_id): a provider's retried webhook returns the
    message stored the first time. STOP/START/HELP are handled by `keywords.handle_keywords`;
    the keyword and the auto-reply text (for the provider's webhook answer, e.g. TwiML) are
    kept in `metadata["keyword"]` and `metadata["auto_reply"]`. The event goes to the
    webhooks and, when the business address belongs to a messaging service with an
    `inbound_webhook_url`, to that URL too (signed like status callbacks).
    """
    from . import keywords

    channel = validation.check_channel(channel)
    rows = Message.objects.for_organization(organization)
    if provider_message_id:
        existing = rows.filter(direction=Direction.INBOUND, provider=provider,
                               provider_message_id=provider_message_id).first()
        if existing is not None:
            return existing
    country = organization.default_country
    sender = _normalize_address(channel, from_, country)
    recipient = _normalize_address(channel, to, country)
    now = timezone.now()
    with transaction.atomic():
        service = service_for_address(organization, recipient)
        contact_id = _contact_for_inbound(organization, channel, sender)
        conversation_id = _conversation_for_inbound(organization, contact_id, channel, now)
        message = Message(
            organization=organization, channel=channel, direction=Direction.INBOUND,
            to=recipient, from_address=sender, body=body or "", media_urls=list(media_urls or []),
            status=MessageStatus.RECEIVED, provider=provider,
            provider_message_id=provider_message_id, messaging_service=service,
            contact_id=contact_id, conversation_id=conversation_id, created_at=now,
            metadata={"raw": raw} if raw else {},
        )
        kind = keywords.handle_keywords(organization=organization, channel=channel,
                                        sender=sender, recipient=recipient, body=body or "",
                                        service=service)
        if kind:
            message.metadata["keyword"] = kind
            reply = keywords.reply_text(kind)
            if reply:
                message.metadata["auto_reply"] = reply
        message.save(force_insert=True)
        normalized = normalized_block(message, received_at=now)
        event_type, data = message_event(
            message, extra={"body": message.body, "media_urls": message.media_urls,
                            "contact_id": contact_id, "conversation_id": conversation_id,
                            "keyword": kind, "normalized": normalized})
        event = emit(organization=organization, type=event_type, data=data)
        emit(organization=organization, type="normalized.inbound",
             data={"message_id": message.pk, "event": "message.received", **normalized})
        if service is not None and service.inbound_webhook_url:
            _callback_after_commit(organization.pk, event.pk, service.inbound_webhook_url)
    return message


# --- Messaging services ---------------------------------------------------------------------


def _clean_senders(organization, senders: Any) -> list[dict[str, str]]:
    if senders in (None, ""):
        return []
    if not isinstance(senders, list):
        raise validation_error("senders", 'senders is a list of {"channel", "from"} objects.')
    if len(senders) > 400:
        raise validation_error("senders", "At most 400 senders per messaging service.")
    cleaned: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for item in senders:
        if not isinstance(item, dict) or not item.get("channel") or not item.get("from"):
            raise validation_error("senders", 'Each sender is {"channel": ..., "from": ...}.')
        channel = validation.check_channel(item["channel"], field="senders")
        address = validation.normalize_sender(channel, str(item["from"]),
                                              default_country=organization.default_country,
                                              field="senders")
        if (channel, address) not in seen:
            seen.add((channel, address))
            cleaned.append({"channel": channel, "from": address})
    return cleaned


_SERVICE_FIELDS = ("name", "senders", "sticky_sender", "inbound_webhook_url", "status_callback",
                   "opt_out_handling", "shorten_links")


def _clean_service_changes(organization, changes: dict[str, Any]) -> dict[str, Any]:
    cleaned = dict(changes)
    if "senders" in cleaned:
        cleaned["senders"] = _clean_senders(organization, cleaned["senders"])
    for field in ("inbound_webhook_url", "status_callback"):
        if field in cleaned:
            cleaned[field] = validation.check_callback_url(cleaned[field], field=field)
    return cleaned


def messaging_service_create(*, organization, principal: Principal | None, name: str,
                             request=None, **fields: Any) -> MessagingService:
    fields = _clean_service_changes(organization, {k: v for k, v in fields.items()
                                                   if k in _SERVICE_FIELDS})
    with transaction.atomic():
        service = MessagingService.objects.for_organization(organization).create(
            organization=organization, name=name, **fields)
        audit_record(action="messaging_service.created", organization=organization,
                     principal=principal, target=service, request=request,
                     metadata={"name": name, "senders": len(service.senders)})
    return service


def messaging_service_update(*, service: MessagingService, principal: Principal | None,
                             request=None, **changes: Any) -> MessagingService:
    changes = _clean_service_changes(service.organization,
                                     {k: v for k, v in changes.items() if k in _SERVICE_FIELDS})
    with transaction.atomic():
        for field, value in changes.items():
            setattr(service, field, value)
        service.save()
        if "senders" in changes:
            # Stickiness to a sender that left the pool ends (the next send re-picks).
            pool = {(s["channel"], s["from"]) for s in service.senders}
            stale = [row.pk for row in StickySender.objects.for_organization(
                service.organization).filter(messaging_service=service)
                if (row.channel, row.sender) not in pool]
            StickySender.objects.for_organization(service.organization).filter(
                pk__in=stale).delete()
        audit_record(action="messaging_service.updated", organization=service.organization,
                     principal=principal, target=service, request=request,
                     metadata={"fields": sorted(changes)})
    return service


def messaging_service_delete(*, service: MessagingService, principal: Principal | None,
                             request=None) -> None:
    with transaction.atomic():
        audit_record(action="messaging_service.deleted", organization=service.organization,
                     principal=principal, target=service, request=request,
                     metadata={"name": service.name})
        service.delete()


# --- The callback signing secret ------------------------------------------------------------


def callback_secret_get(organization):
    """The organization's callback signing secret, made on first use."""
    from platform_core.webhooks.signing import generate_secret

    from .models import CallbackSecret

    rows = CallbackSecret.objects.for_organization(organization)
    row = rows.first()
    if row is None:
        CallbackSecret.objects.bulk_create(
            [CallbackSecret(organization=organization, secret=generate_secret())],
            ignore_conflicts=True)
        row = rows.get()
    return row


def callback_secret_rotate(*, organization, principal: Principal | None, request=None):
    from platform_core.webhooks.signing import generate_secret

    with transaction.atomic():
        row = callback_secret_get(organization)
        row.secret = generate_secret()
        row.rotated_at = timezone.now()
        row.save(update_fields=["secret", "rotated_at"])
        audit_record(action="messaging.callback_secret.rotated", organization=organization,
                     principal=principal, target=row, request=request)
    return row
