"""Accepting an outbound message: `message_send` validates the request and stores the
message, `message_cancel` takes back a scheduled one.

`message_send` (the API, broadcasts, conversation replies) validates (`validation.py`),
picks the sender (`senders.py`), refuses an opted-out recipient (422
`RECIPIENT_OPTED_OUT`) and a live channel without a provider (503 `PROVIDER_NOT_WIRED`,
nothing stored), rewrites links when asked (`content.py`) and stores the message `queued`
(or `scheduled` with `send_at`) in one statement (`acceptance.py`), unannounced. After
commit it kicks the dispatcher (messaging/dispatcher.py), which announces it and sends it
in a batch (`drain.py`). Message sends write no audit row (the message is its own record);
cancels do.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal

from .. import acceptance, dispatcher, hooks, validation
from ..models import CODE_CHANNELS, Channel, Direction, Message, MessageStatus
from ..providers import registry
from ..status import StatusBatch
from .content import render_template, shorten_body_links
from .senders import opt_out_for, opted_out_error, resolve_sender_with


def message_send(
    *,
    organization,
    channel: str | None = None,
    to: str | None = None,
    from_: str | None = None,
    body: str | None = None,
    secret_body: str | None = None,
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
    rich_content: dict | None = None,
    principal: Principal | None = None,
    metadata: dict[str, Any] | None = None,
) -> Message:
    """Validate and accept one outbound message (queued, or scheduled with `send_at`).

    `campaign_id` is given by the broadcast runner only: the message belongs to that
    broadcast (one per contact: a second one breaks the unique constraint).
    `rich_content` (RCS only, built and checked by the rcs family: a carousel of
    `commerce/send-catalog`) is the provider content of the message, kept in
    `metadata.rcs_content`; `body` stays its text (what a fallback channel carries).
    `secret_body` (Verify) is the real text of a message whose `body` is redacted: only
    the provider receives it (Message.secret_body); its links are not rewritten.
    `metadata` (internal callers) is kept on the message; a `verification_id` in it is
    carried to fallback children (Verify follows its delivery through the status events)."""
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
    hooks.check_send(organization, channel, to)  # channel apps' refusals (a blocked user)
    media = validation.normalize_media(organization, media_url)
    if media and channel == Channel.VOICE:
        raise validation_error("media_url", "A voice call cannot carry media.")
    if media and channel == Channel.SMS:
        channel = Channel.MMS  # SMS with media is MMS (Twilio's behavior)
    if channel == Channel.MMS and not validation.is_nanp(to):
        raise APIError("MMS_NANP_ONLY", details={"field": "to", "to": to, "issues": [
            {"field": "to", "message": "MMS reaches +1 (North American) numbers only."}]})
    validation.check_body(channel, body)
    validation.check_code_body(channel, body if secret_body is None else secret_body)
    if media and channel in CODE_CHANNELS:
        raise validation_error("media_url", f"A {channel} message cannot carry media.")
    if secret_body is not None:
        validation.check_body(channel, secret_body)
        shorten_links = False  # a short link in one text only would make them differ
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
    sender = resolve_sender_with(organization=organization, channel=channel, explicit=from_,
                             service=service, recipient=to, account=account)
    template_meta: dict[str, Any] = {}
    if template_name:
        rendered = render_template(organization=organization, channel=channel,
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
    if rich_content is not None and channel != Channel.RCS:
        raise validation_error("channel", "Rich content is for the rcs channel only.")

    message = Message(
        organization=organization, channel=channel, direction=Direction.OUTBOUND, to=to,
        from_address=sender, body=body, secret_body=secret_body, media_urls=media,
        subject=subject,
        template_name=template_name, language=language, variables=variables or {},
        status=MessageStatus.SCHEDULED if when else MessageStatus.QUEUED,
        provider=provider.name, messaging_service=service,
        contact_id=contact_id or None,  # else the organization's contact with `to`
        conversation_id=conversation_id, campaign_id=campaign_id, status_callback=callback,
        shorten_links=bool(shorten_links), send_at=when, fallback=chain,
        fallback_after_seconds=after, created_at=timezone.now(),
        metadata={**(metadata or {}),
                  **{k: v for k, v in (("template", template_meta),
                                       ("sent_by", principal.actor_id if principal else None),
                                       ("rcs_content", rich_content))
                     if v}},
    )
    # The message is its own outbox row: the dispatcher announces and sends it.
    message.announced_at = None
    if shorten_links and body:
        with transaction.atomic():
            if message.contact_id is None:  # the short links carry the contact
                message.contact_id = acceptance.contact_id_for(organization.pk, channel, to)
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
            raise opted_out_error(opted, message.to)
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
        batch = StatusBatch([current])
        batch.move(current, MessageStatus.CANCELED)
        batch.write()
        audit_record(action="message.canceled", organization=current.organization,
                     principal=principal, target=current, request=request,
                     metadata={"send_at": current.send_at.isoformat() if current.send_at
                               else None})
    return current
