"""Denormalized per-template daily counters, kept from message events (an event-bus fan-out).

Registered as the fan-out handler `template_counters` (apps.py). For every `message.*`
status event of an outbound message sent from a template, and for click events
(`link.clicked`, `message.clicked`) naming a `message_id`, it marks what the message
reached (`TemplateMessageMark`) and adds each newly reached step once to the
`TemplateDailyStat` row of (template, day of the message's creation, campaign):

- sent: any status event (`message.queued`, `.sent`, `.delivered`, `.failed`, ...);
- delivered: `message.delivered` (and `message.read` / `message.opened`);
- failed: `message.failed`, `message.undelivered`, `message.expired`;
- opened: `message.read`, `message.opened`;
- clicked: `link.clicked`, `message.clicked`.

The mark makes the handler idempotent (the bus delivers at least once) and independent of
event order. Template analytics reads these counters only when its live scan of the
messages runs over its time budget (`degraded: true`).
"""

from __future__ import annotations

from django.apps import apps
from django.db import transaction
from django.db.models import F

from .models import MessageTemplate, TemplateDailyStat, TemplateMessageMark

SENT_TYPES = frozenset({"message.queued", "message.sent"})
DELIVERED_TYPES = frozenset({"message.delivered"})
FAILED_TYPES = frozenset({"message.failed", "message.undelivered", "message.expired"})
OPENED_TYPES = frozenset({"message.read", "message.opened"})
CLICKED_TYPES = frozenset({"link.clicked", "message.clicked"})
HANDLED = SENT_TYPES | DELIVERED_TYPES | FAILED_TYPES | OPENED_TYPES | CLICKED_TYPES


def _flags(event_type: str) -> set[str]:
    flags = {"sent"}
    if event_type in DELIVERED_TYPES | OPENED_TYPES:
        flags.add("delivered")
    if event_type in FAILED_TYPES:
        flags.add("failed")
    if event_type in OPENED_TYPES:
        flags.add("opened")
    if event_type in CLICKED_TYPES:
        flags.add("clicked")
    return flags


def _message_model():
    try:
        return apps.get_model("messaging", "Message")
    except LookupError:
        return None


def message_has_field(model, name: str) -> bool:
    return any(f.name == name for f in model._meta.get_fields())


def template_for_message(organization, *, channel: str, name: str, language: str | None):
    variants = MessageTemplate.objects.for_organization(organization).filter(
        channel=channel, name=name)
    if language:
        return variants.filter(language=language).values_list("pk", flat=True).first()
    ids = list(variants.values_list("pk", flat=True)[:2])
    return ids[0] if len(ids) == 1 else None


def handle_event(event) -> None:
    if event.type not in HANDLED:
        return
    message_id = (event.data or {}).get("message_id")
    Message = _message_model()
    if not message_id or Message is None:
        return
    organization = event.organization
    columns = ["channel", "direction", "template_name", "language", "created_at"]
    if message_has_field(Message, "campaign_id"):
        columns.append("campaign_id")
    row = (Message.objects.for_organization(organization).filter(pk=message_id)
           .values(*columns).first())
    if not row or row["direction"] != "outbound" or not row["template_name"]:
        return
    template_id = template_for_message(organization, channel=row["channel"],
                                       name=row["template_name"], language=row["language"])
    if template_id is None:
        return
    with transaction.atomic():
        mark, _created = (
            TemplateMessageMark.objects.for_organization(organization).select_for_update()
            .get_or_create(organization=organization, message_id=message_id, defaults={
                "template_id": template_id, "campaign_id": row.get("campaign_id") or "",
                "day": row["created_at"].date()})
        )
        new = [f for f in sorted(_flags(event.type)) if not getattr(mark, f)]
        if not new:
            return
        for name in new:
            setattr(mark, name, True)
        mark.save(update_fields=new)
        stat, _ = TemplateDailyStat.objects.for_organization(organization).get_or_create(
            organization=organization, template_id=mark.template_id, day=mark.day,
            campaign_id=mark.campaign_id)
        TemplateDailyStat.objects.for_organization(organization).filter(pk=stat.pk).update(
            **{name: F(name) + 1 for name in new})
