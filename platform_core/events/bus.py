"""The event bus: the one way to emit a platform event.

    from platform_core.events.bus import emit
    emit(organization=org, type="message.delivered", data={...})

`emit` writes the `Event` row in the caller's current transaction (an outbox), so the
event exists exactly when the change that caused it commits, and registers
`transaction.on_commit` to enqueue the fan-out task `events.dispatch_event`. The task
calls every registered fan-out handler (webhooks, the recent-event feed, live stream
subscribers, later sinks), each isolated in its own savepoint: a failing handler is
logged and does not stop the others, and the event stays undispatched so the beat job
`events.redispatch_pending` runs the failed handlers again later. A crash between commit
and fan-out loses nothing for the same reason. Delivery is at least once: handlers must
be idempotent (keyed on the event id).

Apps plug in from their AppConfig.ready():

    register_fanout("webhooks", handle_event)   # handle_event(event: Event) -> None
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from . import conf
from .models import Event

logger = logging.getLogger("platform_core.events")

FanoutHandler = Callable[[Event], None]
_FANOUTS: dict[str, FanoutHandler] = {}


def register_fanout(name: str, handler: FanoutHandler) -> None:
    """Plug a handler into every event's fan-out. Registering a name again replaces it."""
    _FANOUTS[name] = handler


def unregister_fanout(name: str) -> None:
    _FANOUTS.pop(name, None)


def fanouts() -> dict[str, FanoutHandler]:
    return dict(_FANOUTS)


def _json_safe(data: dict[str, Any]) -> dict[str, Any]:
    # Store and fan out exactly what a reader of the row will see (datetimes as strings...).
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))


def emit(*, organization, type: str, data: dict[str, Any]) -> Event:
    """Record an event in the current transaction and fan it out after commit."""
    if not type or not isinstance(type, str):
        raise ValueError("an event needs a type")
    if not isinstance(data, dict):
        raise TypeError("event data must be a dict")
    event = Event.objects.for_organization(organization).create(
        organization=organization, type=type, data=_json_safe(data), created_at=timezone.now()
    )
    transaction.on_commit(lambda: enqueue_dispatch(event.pk))
    return event


def emit_batch(items: Sequence[tuple[Any, str, dict[str, Any]]]) -> list[Event]:
    """Record many events, `(organization, type, data)` each, in one INSERT of the current
    transaction, and fan them out after commit. The events keep the order of `items`
    (ids are monotonic within the process). Background batches use this, not `emit` in a
    loop: one statement and one commit hook whatever the batch size."""
    now = timezone.now()
    events: list[Event] = []
    for organization, event_type, data in items:
        if not event_type or not isinstance(event_type, str):
            raise ValueError("an event needs a type")
        if not isinstance(data, dict):
            raise TypeError("event data must be a dict")
        events.append(Event(organization=organization, type=event_type,
                            data=_json_safe(data), created_at=now))
    if not events:
        return []
    Event.objects.dangerously_unscoped().bulk_create(events)
    ids = [event.pk for event in events]
    transaction.on_commit(lambda: enqueue_dispatch_many(ids))
    return events


def enqueue_dispatch_many(event_ids: Sequence[str]) -> None:
    """Queue the fan-out of several events (the re-dispatch scan catches up on failure)."""
    for event_id in event_ids:
        enqueue_dispatch(event_id)


def enqueue_dispatch(event_id: str) -> None:
    """Queue the fan-out; if the broker is unreachable the re-dispatch scan catches up."""
    from .tasks import dispatch_event

    try:
        dispatch_event.delay(event_id)
    except Exception:
        logger.exception("could not enqueue the fan-out of %s; it will be re-dispatched", event_id)


def dispatch(event_id: str) -> bool:
    """Fan one event out to the registered handlers. True when it is now fully dispatched.

    The event row is locked (SKIP LOCKED) while its handlers run, so a re-dispatch never
    runs concurrently with the first dispatch of the same event.
    """
    from platform_core.tenancy.context import tenant_context

    with transaction.atomic():
        event = (
            Event.objects.dangerously_unscoped()
            .select_for_update(skip_locked=True, of=("self",))
            .select_related("organization")
            .filter(pk=event_id, dispatched_at__isnull=True)
            .first()
        )
        if event is None:  # unknown, already dispatched, or being dispatched right now
            return False
        handlers = fanouts()
        if event.dispatch_attempts and event.failed_handlers:
            handlers = {n: h for n, h in handlers.items() if n in set(event.failed_handlers)}
        failed: list[str] = []
        with tenant_context(event.organization):
            for name, handler in handlers.items():
                try:
                    with transaction.atomic():
                        handler(event)
                except Exception:
                    logger.exception("fan-out handler %s failed for event %s", name, event.pk)
                    failed.append(name)
        now = timezone.now()
        event.dispatch_attempts += 1
        event.failed_handlers = failed
        if failed:
            backoff = min(conf.redispatch_after_seconds() * 2 ** (event.dispatch_attempts - 1),
                          3600)
            event.next_dispatch_at = now + timedelta(seconds=backoff)
        else:
            event.dispatched_at = now
            event.next_dispatch_at = None
        event.save(update_fields=["dispatch_attempts", "failed_handlers", "dispatched_at",
                                  "next_dispatch_at"])
        return not failed
