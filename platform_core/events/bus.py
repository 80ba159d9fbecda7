"""The event bus: the one way to emit a platform event.

    from platform_core.events.bus import emit
    emit(organization=org, type="message.delivered", data={...})

`emit` (and `emit_batch` for many) writes the `Event` rows in the caller's current
transaction (an outbox), so an event exists exactly when the change that caused it
commits, and registers one `transaction.on_commit` hook that kicks the fan-out drain
(`DRAIN`, a coalesced signal: platform_core/drains.py). The outbox table is the queue:
the drain (`drain()`, task `events.drain` on the `events` queue) claims undispatched
events in batches (`FOR UPDATE SKIP LOCKED LIMIT n`, n growing with the backlog: one row
when idle, hundreds under load), runs every registered fan-out handler once per batch
(webhooks, the recent-event feed, live stream subscribers, template counters...) and
marks the batch dispatched in one UPDATE.

Each handler runs in its own savepoint: a failing handler is logged and does not stop the
others. When a handler fails on a batch it is run again event by event, so one bad event
never blocks the rest of the batch; the events it still fails on stay undispatched with
that handler recorded in `failed_handlers` and a backoff in `next_dispatch_at`, and the
sweep (`redispatch_pending`, beat) runs only those handlers again later. A crash between
commit and fan-out loses nothing for the same reason (the sweep claims outbox rows older
than the grace period). Delivery is at least once: handlers must be idempotent (keyed on
the event id).

Apps plug in from their AppConfig.ready():

    register_fanout("feed", append_one)                        # handler(event) -> None
    register_fanout("webhooks", create_one, batch=create_all)  # batch(events) -> None
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from platform_core.drains import DrainSignal

from . import conf
from .models import Event

logger = logging.getLogger("platform_core.events")

FanoutHandler = Callable[[Event], None]
BatchFanoutHandler = Callable[[list[Event]], None]

# Events older than this are not dispatched any more (the claim stays bounded).
DISPATCH_HORIZON = timedelta(days=3)
BATCH_MIN = 1
BATCH_MAX = 500
DRAIN_MAX_SECONDS = 30.0  # then the drain re-queues itself and frees its worker slot


@dataclass(frozen=True)
class Fanout:
    name: str
    one: FanoutHandler
    batch: BatchFanoutHandler | None = None

    def run_batch(self, events: list[Event]) -> None:
        if self.batch is not None:
            self.batch(events)
            return
        for event in events:
            self.run_one(event)

    def run_one(self, event: Event) -> None:
        from platform_core.tenancy.context import tenant_context

        if self.batch is not None:
            self.batch([event])
            return
        with tenant_context(event.organization):
            self.one(event)


_FANOUTS: dict[str, Fanout] = {}


def register_fanout(name: str, handler: FanoutHandler, *,
                    batch: BatchFanoutHandler | None = None) -> None:
    """Plug a handler into every event's fan-out; `batch`, when given, handles a whole
    claimed batch at once (events of several organizations: it scopes by each event's
    organization itself). Registering a name again replaces it."""
    _FANOUTS[name] = Fanout(name, handler, batch)


def unregister_fanout(name: str) -> None:
    _FANOUTS.pop(name, None)


def fanouts() -> dict[str, Fanout]:
    return dict(_FANOUTS)


def _drain_task():
    from .tasks import drain_events

    return drain_events


DRAIN = DrainSignal("events", _drain_task)


def _json_safe(data: dict[str, Any]) -> dict[str, Any]:
    # Store and fan out exactly what a reader of the row will see (datetimes as strings...).
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))


def _check(event_type: str, data: dict[str, Any]) -> None:
    if not event_type or not isinstance(event_type, str):
        raise ValueError("an event needs a type")
    if not isinstance(data, dict):
        raise TypeError("event data must be a dict")


def emit(*, organization, type: str, data: dict[str, Any]) -> Event:
    """Record an event in the current transaction and fan it out after commit."""
    _check(type, data)
    event = Event.objects.for_organization(organization).create(
        organization=organization, type=type, data=_json_safe(data), created_at=timezone.now()
    )
    transaction.on_commit(DRAIN.kick)
    return event


def emit_batch(items: Sequence[tuple[Any, str, dict[str, Any]]]) -> list[Event]:
    """Record many events, `(organization, type, data)` each, in one INSERT of the current
    transaction, and fan them out after commit. The events keep the order of `items`
    (ids are monotonic within the process). Background batches use this, not `emit` in a
    loop: one statement and one commit hook whatever the batch size."""
    now = timezone.now()
    events: list[Event] = []
    for organization, event_type, data in items:
        _check(event_type, data)
        events.append(Event(organization=organization, type=event_type,
                            data=_json_safe(data), created_at=now))
    if not events:
        return []
    Event.objects.dangerously_unscoped().bulk_create(events)
    transaction.on_commit(DRAIN.kick)
    return events


# --- The fan-out -------------------------------------------------------------------------


def _claim(limit: int, *, ids: Sequence[str] | None = None,
           older_than: timedelta | None = None) -> list[Event]:
    """Lock up to `limit` undispatched events (SKIP LOCKED): the given ids whatever their
    backoff, or the due ones (no backoff pending, under the attempt limit and horizon)."""
    now = timezone.now()
    rows = (Event.objects.dangerously_unscoped()
            .select_for_update(skip_locked=True, of=("self",))
            .select_related("organization")
            .filter(dispatched_at__isnull=True))
    if ids is not None:
        rows = rows.filter(pk__in=list(ids))
    else:
        rows = rows.filter(
            created_at__gte=now - DISPATCH_HORIZON,
            dispatch_attempts__lt=conf.max_dispatch_attempts(),
        ).filter(Q(next_dispatch_at__isnull=True) | Q(next_dispatch_at__lte=now))
        if older_than is not None:
            rows = rows.filter(created_at__lte=now - older_than)
    return list(rows.order_by("created_at", "id")[:limit])


def _handlers_for(event: Event, handlers: dict[str, Fanout]) -> list[str]:
    if event.dispatch_attempts and event.failed_handlers:
        return [name for name in handlers if name in set(event.failed_handlers)]
    return list(handlers)


def _fan_out(events: list[Event]) -> dict[str, list[str]]:
    """Run every handler over `events`; the handlers that failed, per event id."""
    handlers = fanouts()
    failed: dict[str, list[str]] = {}
    for name, fanout in handlers.items():
        targets = [e for e in events if name in _handlers_for(e, handlers)]
        if not targets:
            continue
        try:
            with transaction.atomic():
                fanout.run_batch(targets)
            continue
        except Exception:
            if len(targets) == 1:
                logger.exception("fan-out handler %s failed for event %s", name, targets[0].pk)
                failed.setdefault(targets[0].pk, []).append(name)
                continue
            logger.warning("fan-out handler %s failed on a batch of %d; running it event by"
                           " event", name, len(targets), exc_info=True)
        for event in targets:  # isolate the bad ones: the rest of the batch goes through
            try:
                with transaction.atomic():
                    fanout.run_one(event)
            except Exception:
                logger.exception("fan-out handler %s failed for event %s", name, event.pk)
                failed.setdefault(event.pk, []).append(name)
    return failed


def _mark(events: list[Event], failed: dict[str, list[str]]) -> None:
    """Record the outcome of a batch: the dispatched ones in one UPDATE, the failed ones
    (rare) with their backoff in another."""
    now = timezone.now()
    done = [e.pk for e in events if e.pk not in failed]
    if done:
        Event.objects.dangerously_unscoped().filter(pk__in=done).update(
            dispatched_at=now, dispatch_attempts=F("dispatch_attempts") + 1,
            failed_handlers=[], next_dispatch_at=None)
    retry = [e for e in events if e.pk in failed]
    for event in retry:
        event.dispatch_attempts += 1
        event.failed_handlers = failed[event.pk]
        backoff = min(conf.redispatch_after_seconds() * 2 ** (event.dispatch_attempts - 1),
                      3600)
        event.next_dispatch_at = now + timedelta(seconds=backoff)
    if retry:
        Event.objects.dangerously_unscoped().bulk_update(
            retry, ["dispatch_attempts", "failed_handlers", "next_dispatch_at"])
    for event in events:
        if event.pk not in failed:
            event.dispatched_at = now


def dispatch_batch(limit: int, *, ids: Sequence[str] | None = None,
                   older_than: timedelta | None = None) -> tuple[int, int]:
    """Claim one batch, fan it out and mark it, in one transaction.
    Returns (events claimed, events now fully dispatched)."""
    with transaction.atomic():
        events = _claim(limit, ids=ids, older_than=older_than)
        if not events:
            return 0, 0
        failed = _fan_out(events)
        _mark(events, failed)
    return len(events), len(events) - len(failed)


def dispatch(event_id: str) -> bool:
    """Fan one event out now (whatever its backoff). True when it is now fully dispatched;
    False when it is unknown, already dispatched, being dispatched, or a handler failed."""
    claimed, done = dispatch_batch(1, ids=[event_id])
    return bool(claimed and done)


def drain(*, older_than: timedelta | None = None, max_seconds: float = DRAIN_MAX_SECONDS,
          batch_max: int = BATCH_MAX) -> int:
    """Fan out every due event, batch after batch, until a claim finds nothing; the number
    of events claimed. The batch doubles while claims come back full and shrinks to what
    the last one found, so one idle event goes out alone and a backlog in hundreds."""
    total = 0
    limit = BATCH_MIN
    started = time.monotonic()
    while True:
        if older_than is None:
            DRAIN.clear()  # before the claim: a kick from now on queues another drain
        claimed, _done = dispatch_batch(limit, older_than=older_than)
        total += claimed
        if not claimed:
            return total
        limit = min(batch_max, limit * 2) if claimed >= limit else max(BATCH_MIN, claimed)
        if time.monotonic() - started > max_seconds:
            DRAIN.kick()  # more may be waiting: let another run take over
            return total
