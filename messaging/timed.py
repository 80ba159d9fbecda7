"""Timed work of the message pipeline: stored with its due time, swept in batches.

Nothing in messaging waits in a per-message ETA or countdown task (those sit in a worker's
memory until due, so a large backlog grows the worker). Each kind of timed work is a
column of the message, with a partial index, and one drain sweeps what is due:

- scheduled sends: `send_at` of a `scheduled` message (-> `queued`, then sent);
- send retries: `retry_at` of a queued message whose provider call failed transiently
  (the send drain claims it once due, messaging/sending/drain.py);
- sandbox delivery receipts: due `sent_at` + MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS for a
  sandbox message `sent` that gets one (-> `delivered`);
- no-receipt fallbacks: `fallback_due_at` (the child message on the next channel);
- claims of a killed worker: `dispatched_at` older than MESSAGING_DISPATCH_LEASE_SECONDS
  with no provider answer stored, settled from the send journal (sending/journal.py).

`messages_dispatch_due` is that drain: the task `messaging.dispatch_due`, run by the beat
(config/beat.py, every 10 s) and woken earlier by `arm(at)` for work due sooner (a batch
that leaves a receipt due in 1 s, a retry due in 5 s). `arm` keeps one wake-up pending for
the deployment, at the earliest due time it was asked for (a cache key holds it), at most
every WAKE_SPACING_SECONDS, so a stream of batches shares wake-ups instead of queuing one
task each. Each sweep moves its rows in bulk (`status.StatusBatch`) under
`FOR UPDATE SKIP LOCKED`, so two drains never take the same row.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Min, QuerySet
from django.utils import timezone

from . import dispatcher, status
from .models import Message, MessageStatus
from .providers import sandbox as sandbox_provider
from .sending import journal
from .sending.drain import apply_outcome

logger = logging.getLogger("messaging")

BATCH = 500
# Claimed but the provider's answer never stored after this long: the worker died.
DISPATCH_LEASE_SECONDS = 600
# The beat's period: later work is left to it.
WAKE_HORIZON_SECONDS = 10.0
WAKE_SPACING_SECONDS = 0.25
WAKE_KEY = "messaging:timed:wake-at"
INTERRUPTED_ERROR_MESSAGE = (
    "The worker stopped during the provider call, so whether the provider accepted the "
    "message is unknown; it is not sent again (at most once).")


def dispatch_lease_seconds() -> float:
    return float(getattr(settings, "MESSAGING_DISPATCH_LEASE_SECONDS", DISPATCH_LEASE_SECONDS))


# --- Waking the drain ----------------------------------------------------------------------


def arm(at: datetime) -> None:
    """Make sure the timed drain runs at `at` or soon after (the beat covers later work)."""
    if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        return  # tests sweep explicitly (time-machine); an eager wake would run too early
    now = timezone.now()
    delay = max((at - now).total_seconds(), WAKE_SPACING_SECONDS)
    if delay > WAKE_HORIZON_SECONDS:
        return
    wake = now.timestamp() + delay
    try:
        pending = cache.get(WAKE_KEY)
        if pending is not None and pending <= wake + WAKE_SPACING_SECONDS:
            return  # a wake-up at least as early is queued
        cache.set(WAKE_KEY, wake, timeout=delay + 30)
        from .tasks import dispatch_due

        dispatch_due.apply_async(countdown=delay)
    except Exception:  # the beat sweeps it anyway
        logger.exception("could not arm the timed drain")


def _rearm(now: datetime) -> None:
    """Arm the next wake-up for work due within the horizon (none: the beat's)."""
    until = now + timedelta(seconds=WAKE_HORIZON_SECONDS)
    rows = Message.objects.dangerously_unscoped()
    delay = timedelta(seconds=sandbox_provider.receipt_delay_seconds())
    candidates = [
        rows.filter(status=MessageStatus.SCHEDULED, send_at__gt=now, send_at__lte=until)
        .aggregate(t=Min("send_at"))["t"],
        rows.filter(status=MessageStatus.QUEUED, dispatched_at__isnull=True,
                    announced_at__isnull=False, retry_at__gt=now, retry_at__lte=until)
        .aggregate(t=Min("retry_at"))["t"],
        rows.filter(fallback_due_at__gt=now, fallback_due_at__lte=until,
                    fallback_triggered_at__isnull=True).aggregate(t=Min("fallback_due_at"))["t"],
    ]
    sent = _receipts_pending(rows).filter(sent_at__gt=now - delay, sent_at__lte=until - delay)
    first_sent = sent.aggregate(t=Min("sent_at"))["t"]
    if first_sent is not None:
        candidates.append(first_sent + delay)
    due = [t for t in candidates if t is not None]
    if due:
        arm(min(due))


# --- The drain -----------------------------------------------------------------------------


def _locked(queryset: QuerySet, limit: int) -> list[Message]:
    return list(queryset.select_for_update(skip_locked=True, of=("self",))
                .select_related("organization")[:limit])


def _sweep(queryset: QuerySet, apply, *, batch: int) -> int:
    """Lock `queryset`'s rows `batch` at a time and `apply(rows)` (-> how many it moved)
    in the same transaction, until fewer than a batch is left."""
    total = 0
    seen: set[str] = set()
    while True:
        with transaction.atomic():
            rows = _locked(queryset, batch)
            if rows and not seen.issuperset(m.pk for m in rows):
                total += apply(rows)
            else:  # nothing, or only rows this sweep left as they were
                return total
        seen.update(m.pk for m in rows)
        if len(rows) < batch:
            return total


def _receipts_pending(rows: QuerySet) -> QuerySet:
    """Sandbox messages `sent` that get a delivery receipt (the no-receipt magic recipients
    stay `sent`, as they must)."""
    return (rows.filter(status=MessageStatus.SENT,
                        provider=sandbox_provider.SandboxProvider.name)
            .exclude(to__in=sandbox_provider.NO_RECEIPT_RECIPIENTS)
            .exclude(channel__in=sandbox_provider.RICH_CHANNELS,
                     to__in=sandbox_provider.RICH_NO_RECEIPT_RECIPIENTS))


def _fire_fallbacks(rows: list[Message]) -> int:
    from .fallback import fallback_fire

    for message in rows:
        if message.status in (MessageStatus.QUEUED, MessageStatus.SENT):
            fallback_fire(message, reason="no_delivery_receipt")
        else:
            message.fallback_due_at = None
            message.save(update_fields=["fallback_due_at", "updated_at"])
    return len(rows)


def _settle_claims(rows: list[Message]) -> int:
    """Claims older than the lease with no provider answer stored (a killed worker): the
    journal's answer is applied; a call that started and never answered fails
    `DISPATCH_INTERRUPTED` (never sent again); a call that never started is released."""
    entries = journal.read(m.pk for m in rows)
    batch = status.StatusBatch(rows)
    settled = 0
    for message in rows:
        entry = entries.get(message.pk)
        if isinstance(entry, dict):
            apply_outcome(batch, message, entry)
        elif entry is None and journal.trustworthy():
            apply_outcome(batch, message, None)  # released: the next batch sends it
        else:
            settled += batch.move(message, MessageStatus.FAILED,
                                  error_code="DISPATCH_INTERRUPTED",
                                  error_message=INTERRUPTED_ERROR_MESSAGE)
    batch.write()
    transaction.on_commit(lambda: journal.forget(m.pk for m in rows))
    return settled


def messages_dispatch_due(*, batch: int = BATCH) -> dict[str, int]:
    """Sweep the timed work due now (see the module docstring), then run the send drain
    (fresh sends a lost signal left, due retries, the scheduled sends just queued, released
    claims) and arm the next wake-up."""
    try:
        cache.delete(WAKE_KEY)  # this run is the pending wake-up
    except Exception:
        logger.warning("could not clear the timed drain's wake-up key")
    now = timezone.now()
    rows = Message.objects.dangerously_unscoped()
    receipt_due = now - timedelta(seconds=sandbox_provider.receipt_delay_seconds())
    lease_over = now - timedelta(seconds=dispatch_lease_seconds())
    counts = {
        "scheduled": _sweep(
            rows.filter(status=MessageStatus.SCHEDULED, send_at__lte=now).order_by("send_at"),
            lambda locked: status.apply_status_to(locked, MessageStatus.QUEUED), batch=batch),
        "sandbox_receipts": _sweep(
            _receipts_pending(rows).filter(sent_at__lte=receipt_due).order_by("sent_at"),
            lambda locked: status.apply_status_to(locked, MessageStatus.DELIVERED),
            batch=batch),
        "fallbacks": _sweep(
            rows.filter(fallback_due_at__lte=now, fallback_triggered_at__isnull=True)
            .order_by("fallback_due_at"), _fire_fallbacks, batch=batch),
        "interrupted": _sweep(
            rows.filter(status=MessageStatus.QUEUED, dispatched_at__lte=lease_over,
                        provider_message_id__isnull=True).order_by("dispatched_at"),
            _settle_claims, batch=batch),
    }
    counts["dispatched"] = dispatcher.dispatch_accepted()
    _rearm(timezone.now())
    return counts
