"""Reads of the messaging family."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from contacts.normalize import parse_email, parse_phone
from platform_core.errors import validation_error
from platform_core.webhooks.selectors import multi_values

from .models import FAILURE_STATUSES, Channel, Direction, MessageStatus

_STATUSES = {s.value for s in MessageStatus}
_CHANNELS = {c.value for c in Channel}
_DIRECTIONS = {d.value for d in Direction}


def _choices(query_params, name: str, allowed: set[str]) -> list[str]:
    values = multi_values(query_params, name)
    unknown = [v for v in values if v not in allowed]
    if unknown:
        raise validation_error(name, f"Unknown {name} {unknown[0]!r}; use one of "
                                     f"{', '.join(sorted(allowed))}.", status=400)
    return values


def _moment(query_params, name: str, *, end_of_day: bool = False) -> datetime | None:
    raw = query_params.get(name)
    if not raw:
        return None
    try:
        # A bare date first: parse_datetime would read it as midnight.
        day = parse_date(raw) if len(raw) == 10 else None
        value = None if day is not None else parse_datetime(raw)
    except ValueError:
        value = day = None
    if value is None:
        if day is None:
            raise validation_error(name, f"{name} must be an ISO 8601 date or date-time.",
                                   status=400)
        value = datetime.combine(day, datetime.max.time() if end_of_day else datetime.min.time())
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


def messages_filtered(queryset: QuerySet, query_params, *, organization) -> QuerySet:
    """Filters of `GET /api/v1/messages`: status, channel, direction (each one value, a
    comma list or repeated), to (normalized like a send), from, messaging_service_id,
    contact_id, conversation_id, parent_id, campaign_id (a broadcast), and the date range created_after /
    created_before (ISO 8601 date or date-time; a bare date covers the whole day)."""
    statuses = _choices(query_params, "status", _STATUSES)
    if statuses:
        queryset = queryset.filter(status__in=statuses)
    channels = _choices(query_params, "channel", _CHANNELS)
    if channels:
        queryset = queryset.filter(channel__in=channels)
    directions = _choices(query_params, "direction", _DIRECTIONS)
    if directions:
        queryset = queryset.filter(direction__in=directions)
    for param, field in (("to", "to"), ("from", "from_address")):
        raw = (query_params.get(param) or "").strip()
        if raw:
            value = (parse_phone(raw, default_country=organization.default_country)
                     or parse_email(raw) or raw)
            queryset = queryset.filter(**{field: value})
    for param in ("messaging_service_id", "contact_id", "conversation_id", "parent_id",
                  "campaign_id"):
        value = (query_params.get(param) or "").strip()
        if value:
            queryset = queryset.filter(**{param: value})
    after = _moment(query_params, "created_after")
    if after is not None:
        queryset = queryset.filter(created_at__gte=after)
    before = _moment(query_params, "created_before", end_of_day=True)
    if before is not None:
        queryset = queryset.filter(created_at__lte=before)
    return queryset


def opt_outs_for(*, organization, recipients) -> QuerySet:
    """The opt-outs (STOP keywords) recorded for these addresses, e.g. a contact's phone
    and email, newest first, with their messaging service (one query)."""
    from .models import OptOut

    wanted = [r for r in recipients if r]
    return (OptOut.objects.for_organization(organization).filter(recipient__in=wanted)
            .select_related("messaging_service").order_by("-created_at"))


# Status events are read from the event outbox (kept EVENTS_OUTBOX_RETENTION_DAYS): the
# span searched runs from the message's creation to its last stamp plus this slack (the
# event of a move is written in the transaction that stamps it).
_EVENT_SLACK = timedelta(minutes=5)


def message_events(message, *, limit: int = 50) -> list:
    """The `message.*` events of one message, oldest first (the detail timeline). The
    scan is bounded to the message's own lifetime on the (organization, created_at)
    index; older than the outbox retention, the list is empty and the stamps remain."""
    from platform_core.events.models import Event

    stamps = [s for s in (message.created_at, message.updated_at, message.sent_at,
                          message.delivered_at, message.failed_at, message.canceled_at,
                          message.send_at) if s is not None]
    return list(
        Event.objects.for_organization_id(message.organization_id)
        .filter(type__startswith="message.", created_at__gte=message.created_at - _EVENT_SLACK,
                created_at__lte=max(stamps) + _EVENT_SLACK, data__message_id=message.pk)
        .order_by("created_at", "id")[:limit]
    )


def message_timeline(message) -> list[tuple[str, datetime]]:
    """The stamped moments of a message's lifecycle, oldest first: what survives the
    event outbox's retention (status, moment)."""
    moments = [("created", message.created_at), ("scheduled for", message.send_at),
               ("sent", message.sent_at), ("delivered", message.delivered_at),
               ("canceled", message.canceled_at)]
    if message.failed_at is not None:
        moments.append((message.status if message.status in FAILURE_STATUSES else "failed",
                        message.failed_at))
    return sorted(((label, when) for label, when in moments if when is not None),
                  key=lambda item: item[1])

