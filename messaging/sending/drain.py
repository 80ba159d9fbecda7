"""The send drain: accepted messages claimed from the table in batches, sent, written back.

The messages table is the queue; a Celery task (`messaging.dispatch_accepted`, on the
`sends` queue, see messaging/dispatcher.py) only says "drain". A batch is three steps:

1. `claim(limit)`, one transaction: `SELECT ... FOR UPDATE SKIP LOCKED LIMIT n` of the
   messages due for a provider call (queued, announced, unclaimed, any retry due: partial
   index `messaging_msg_sendable`), then of the accepted ones not announced yet
   (`messaging_msg_unannounced`). The unannounced get their acceptance event
   (`message.queued` / `message.scheduled`, one INSERT for the batch); the queued ones are
   claimed (`dispatched_at`). One UPDATE writes both.
2. `send(messages)`, no transaction: one opt-out query for the batch (a STOP since the
   acceptance fails the message), the provider of each (organization, channel) looked up
   once, then the calls: the sandbox double in-process, live providers concurrently from a
   bounded thread pool (MESSAGING_PROVIDER_CONCURRENCY, default 8) through their adapters
   and the hardened `platform_core.net.provider_client` (its retries, timeout and circuit
   breaker). Each call is journaled (journal.py). One failing call never stops the others.
3. The write-back, one transaction: the rows locked again, every outcome applied in
   memory (`status.StatusBatch`): `sent` / `failed`, a live `queued` answer (its provider
   id, the no-receipt fallback timer), a transient error (`retry_at` = now + the next of
   SEND_RETRY_DELAYS, claim released; the last one fails the message), a sandbox receipt
   when it has no delay (`delivered` right after `sent`, events in that order); then one
   UPDATE, one INSERT of the events, one queueing of the status callbacks. If the batch
   write fails, each message is written alone, so one bad row never blocks the others.

Timed work a batch leaves (retries, sandbox receipts with a delay, fallback timers) is
stored with its due time and swept by the timed drain (messaging/timed.py), which is woken
for the earliest due time (`timed.arm`). A worker killed between 1 and 3 leaves claimed
rows; the timed drain settles them from the journal once the lease is over.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from platform_core.errors import APIError

from .. import acceptance, status
from ..models import Direction, Message, MessageStatus
from ..providers import registry
from ..providers import sandbox as sandbox_provider
from ..providers.base import ProviderError
from . import journal

logger = logging.getLogger("messaging")

BATCH_MAX = 256
SEND_RETRY_DELAYS = (5, 30, 120, 600)
PROVIDER_CONCURRENCY = 8
OPTED_OUT = ("RECIPIENT_OPTED_OUT", "The recipient opted out before the send.")

_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def batch_max() -> int:
    return max(1, int(getattr(settings, "MESSAGING_SEND_BATCH_MAX", BATCH_MAX)))


def provider_concurrency() -> int:
    return max(1, int(getattr(settings, "MESSAGING_PROVIDER_CONCURRENCY", PROVIDER_CONCURRENCY)))


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=provider_concurrency(),
                                       thread_name_prefix="messaging-provider")
        return _pool


# --- 1. Claim ------------------------------------------------------------------------------


class Claim:
    """What one claim took: `handled` rows, of which `to_send` are claimed for a call."""

    def __init__(self, handled: int, to_send: list[Message]) -> None:
        self.handled = handled
        self.to_send = to_send


def claim(limit: int) -> Claim:
    """Announce and claim up to `limit` messages (one transaction)."""
    from .. import timed

    now = timezone.now()
    rows = (Message.objects.dangerously_unscoped()
            .select_for_update(skip_locked=True, of=("self",)).select_related("organization"))
    with transaction.atomic():
        due = list(rows.filter(status=MessageStatus.QUEUED, dispatched_at__isnull=True,
                               announced_at__isnull=False, direction=Direction.OUTBOUND)
                   .filter(Q(retry_at__isnull=True) | Q(retry_at__lte=now))
                   .order_by("created_at")[:limit])
        fresh = (list(rows.filter(announced_at__isnull=True).order_by("pk")[:limit - len(due)])
                 if len(due) < limit else [])
        batch = status.StatusBatch([*due, *fresh])
        for message in fresh:
            batch.announce(message)
        to_send = [m for m in (*due, *fresh) if m.status == MessageStatus.QUEUED
                   and m.direction == Direction.OUTBOUND and m.dispatched_at is None]
        for message in to_send:
            message.dispatched_at = now
            batch.touch(message)
        batch.write()
    scheduled = [m.send_at for m in fresh if m.status == MessageStatus.SCHEDULED and m.send_at]
    if scheduled:
        timed.arm(min(scheduled))
    return Claim(len(due) + len(fresh), to_send)


# --- 2. Provider calls ---------------------------------------------------------------------


def _outcome(provider, message: Message, account) -> dict[str, Any]:
    """One provider call, as an outcome dict (journal.answer's shape, or `retry`)."""
    try:
        return {**journal.answer(provider.send(message.for_provider(), account)),
                "provider": provider.name}
    except ProviderError as exc:
        logger.warning("provider %s: %s sending %s: %s", provider.name,
                       "transient error" if exc.retryable else "error", message.pk, exc)
        return {"status": "retry" if exc.retryable else "failed", "provider": provider.name,
                "error_code": exc.code or "PROVIDER_ERROR", "error_message": str(exc)[:1000]}
    except Exception:
        logger.exception("provider %s raised sending %s", provider.name, message.pk)
        return {"status": "failed", "provider": provider.name, "error_code": "PROVIDER_ERROR",
                "error_message": "The provider failed unexpectedly."}


def _journaled_call(provider, message: Message, account) -> dict[str, Any]:
    journal.record(starting=message.pk)
    outcome = _outcome(provider, message, account)
    journal.record(answered=(message.pk, outcome))
    return outcome


def _call_in_process(calls: list[tuple[Message, Any, Any]], outcomes: dict[str, dict]) -> None:
    """The sandbox double: one after the other, the journal written once per call (the
    answer of one and the start of the next together)."""
    answered = None
    try:
        for message, provider, account in calls:
            journal.record(answered=answered, starting=message.pk)
            outcome = outcomes[message.pk] = _outcome(provider, message, account)
            answered = (message.pk, outcome)
        journal.record(answered=answered)
    except Exception:  # the journal is unreachable: call nothing more (released below)
        logger.exception("send journal unreachable; the rest of the batch is released")


def _call_concurrently(calls: list[tuple[Message, Any, Any]], outcomes: dict[str, dict]) -> None:
    if len(calls) == 1:
        message, provider, account = calls[0]
        try:
            outcomes[message.pk] = _journaled_call(provider, message, account)
        except Exception:
            logger.exception("send journal unreachable; %s is released", message.pk)
        return
    futures = {message.pk: _executor().submit(_journaled_call, provider, message, account)
               for message, provider, account in calls}
    for message_id, future in futures.items():
        try:
            outcomes[message_id] = future.result()
        except Exception:
            logger.exception("send journal unreachable; %s is released", message_id)


def send(messages: list[Message], *, final: bool = False) -> dict[str, str]:
    """Send claimed `messages` and write the outcomes back; the outcome of each, by id
    (`sent`, `queued`, `failed`, `retry`, `released`). `final`: no retry is left."""
    if not messages:
        return {}
    outcomes: dict[str, dict[str, Any]] = {}
    blocked = acceptance.blocked_messages(messages)
    providers: dict[tuple[str, str], Any] = {}
    local, live = [], []
    for message in messages:
        if message.pk in blocked:
            outcomes[message.pk] = {"status": "failed", "error_code": OPTED_OUT[0],
                                    "error_message": OPTED_OUT[1]}
            continue
        key = (message.organization_id, message.channel)
        if key not in providers:
            try:
                providers[key] = registry.provider_for(message.organization, message.channel)
            except APIError as exc:
                providers[key] = exc
        found = providers[key]
        if isinstance(found, APIError):
            outcomes[message.pk] = {"status": "failed", "error_code": found.code,
                                    "error_message": found.message}
            continue
        provider, account = found
        (local if provider.name == registry.SANDBOX else live).append(
            (message, provider, account))
    _call_in_process(local, outcomes)
    _call_concurrently(live, outcomes)
    return write_back(messages, outcomes, final=final)


# --- 3. Write-back -------------------------------------------------------------------------


def retry_delays() -> tuple[int, ...]:
    return tuple(getattr(settings, "MESSAGING_SEND_RETRY_DELAYS", SEND_RETRY_DELAYS))


def apply_outcome(batch: status.StatusBatch, message: Message, outcome: dict[str, Any] | None,
                  *, final: bool = False) -> str:
    """Apply one provider call's outcome to its locked row (None: never called, the claim
    is released); what became of it."""
    if message.status != MessageStatus.QUEUED or message.dispatched_at is None:
        return "skipped"  # settled meanwhile (a receipt, the timed drain)
    batch.touch(message)
    if outcome is None:
        message.dispatched_at = None
        return "released"
    kind = outcome["status"]
    if outcome.get("provider"):
        message.provider = outcome["provider"]
    if kind == "retry":
        delays = retry_delays()
        if not final and message.send_attempts < len(delays):
            message.retry_at = batch.now + timedelta(seconds=delays[message.send_attempts])
            message.send_attempts += 1
            message.dispatched_at = None
            return "retry"
        kind = "failed"
    if kind == "queued":  # accepted; the provider's receipts follow
        if outcome.get("provider_message_id"):
            message.provider_message_id = outcome["provider_message_id"]
        if (message.fallback and message.fallback_due_at is None
                and message.fallback_triggered_at is None):
            message.fallback_due_at = batch.now + timedelta(
                seconds=message.fallback_after_seconds)
        status.release_secret(message, handed_over=True)
        return "queued"
    batch.move(message, kind, error_code=outcome.get("error_code"),
               error_message=outcome.get("error_message"),
               provider_message_id=outcome.get("provider_message_id"))
    if (kind == MessageStatus.SENT and message.provider == registry.SANDBOX
            and sandbox_provider.receipt_delay_seconds() <= 0
            and sandbox_provider.SandboxProvider.receipt_expected(message)):
        batch.move(message, MessageStatus.DELIVERED)  # the receipt, at once
    return kind


def next_due(message: Message) -> datetime | None:
    """When the timed drain next has work for `message`, if it has."""
    times = [message.retry_at if message.status == MessageStatus.QUEUED
             and message.dispatched_at is None else None, message.fallback_due_at]
    if (message.status == MessageStatus.SENT and message.provider == registry.SANDBOX
            and message.sent_at and sandbox_provider.SandboxProvider.receipt_expected(message)):
        times.append(message.sent_at + timedelta(seconds=sandbox_provider.receipt_delay_seconds()))
    times = [t for t in times if t is not None]
    return min(times) if times else None


def _write(message_ids: list[str], outcomes: dict[str, dict[str, Any]], *,
           final: bool) -> tuple[dict[str, str], list[Message]]:
    with transaction.atomic():
        rows = status.lock(message_ids)
        batch = status.StatusBatch(rows.values())
        done = {pk: apply_outcome(batch, rows[pk], outcomes.get(pk), final=final)
                for pk in message_ids if pk in rows}
        batch.write()
    return done, list(rows.values())


def write_back(messages: list[Message], outcomes: dict[str, dict[str, Any]], *,
               final: bool = False) -> dict[str, str]:
    """Store the outcomes of a batch in one transaction (each message alone if that
    fails), then forget their journal entries and wake the timed drain if needed."""
    from .. import timed

    ids = [m.pk for m in messages]
    try:
        done, rows = _write(ids, outcomes, final=final)
    except Exception:
        logger.exception("writing a send batch of %d failed; writing each alone", len(ids))
        done, rows = {}, []
        for pk in ids:
            try:
                one, written = _write([pk], outcomes, final=final)
            except Exception:  # left claimed: the timed drain settles it from the journal
                logger.exception("writing the send outcome of %s failed", pk)
                continue
            done.update(one)
            rows += written
    written_ids = [pk for pk in ids if pk in done]
    try:
        journal.forget(written_ids)
    except Exception:  # they expire; a settled claim never reads them again
        logger.warning("could not clear the send journal of %d messages", len(written_ids))
    due = [t for t in map(next_due, rows) if t is not None]
    if due:
        timed.arm(min(due))
    _after_send(messages, outcomes, done)
    return done


def _after_send(messages: list[Message], outcomes: dict[str, dict[str, Any]],
                done: dict[str, str]) -> None:
    """Providers' `after_send(message, result)` hooks, once the results are stored."""
    from ..providers.base import SendResult

    for message in messages:
        outcome = outcomes.get(message.pk)
        provider = registry.get_provider(message.provider) if outcome else None
        hook = getattr(provider, "after_send", None)
        if hook is None or done.get(message.pk) not in ("sent", "queued", "failed"):
            continue
        try:
            hook(message, SendResult(outcome.get("provider_message_id"), outcome["status"],
                                     outcome.get("error_code"), outcome.get("error_message")))
        except Exception:
            logger.exception("after_send of %s failed", message.pk)


# --- One message (a duplicate task, a test) ------------------------------------------------


def send_one(message_id: str, *, final: bool = False) -> str:
    """Claim and send one message now: `skipped` when it is not claimable (not queued,
    already claimed, unknown), else what became of it."""
    now = timezone.now()
    with transaction.atomic():
        message = (Message.objects.dangerously_unscoped()
                   .select_for_update(skip_locked=True, of=("self",))
                   .select_related("organization")
                   .filter(pk=message_id, status=MessageStatus.QUEUED,
                           dispatched_at__isnull=True, direction=Direction.OUTBOUND).first())
        if message is None:
            return "skipped"
        batch = status.StatusBatch([message])
        batch.announce(message)
        message.dispatched_at = now
        batch.touch(message)
        batch.write()
    return send([message], final=final).get(message_id, "skipped")
