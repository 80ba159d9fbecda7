"""Writes of broadcasts (campaigns): create, start, run, complete, cancel, and the
counters moved by message transitions and clicks (issue 7; models.py explains them).

Execution, and why a killed worker never sends twice:

1. `broadcast_create` checks everything a send would (channel, content, template and its
   approval, audience, sender, provider) and stores the broadcast `queued` (or
   `scheduled` with `send_at`). After commit, `messaging.broadcast_start` is queued.
2. `broadcast_start` (under the broadcast's row lock, once) re-checks the configuration,
   snapshots the audience into `BroadcastRecipient` rows in one `INSERT ... SELECT`,
   moves the broadcast to `running`, emits `broadcast.started` and queues the runners.
3. `broadcast_run` (the runner task) works in batches: it takes tokens from the sender's
   bucket (`throttle.py`), claims that many pending recipients with
   `SELECT ... FOR UPDATE SKIP LOCKED`, creates each one's message through the message
   pipeline's own `message_send` (with `campaign_id`) and marks the recipient (`queued`
   with its `message_id`, or skipped) and the counters in the same transaction. The
   provider call is the pipeline's send task, queued after commit, itself claimed once per
   message. A worker killed mid-batch rolls the whole batch back (no message, no mark); a
   recipient is marked exactly when its message exists, and the unique
   `(campaign_id, contact_id)` of `Message` refuses a second one.
4. Runners write a heartbeat with every batch and run in slices, queuing the next slice
   themselves; the beat (`broadcasts_due`) starts due scheduled broadcasts, restarts a
   start task that was lost, and resumes a running broadcast whose heartbeat is older than
   BROADCAST_STALL_SECONDS (its runner died). Extra runners are harmless: they skip
   locked recipients.
5. When no recipient is pending the broadcast is `completed` (`broadcast.completed`).
   Delivery receipts keep moving `sent` / `delivered` / `failed` afterwards.

Locks are always taken recipients first, then the broadcast row (runner batches, message
transitions, clicks, the cancel's second step), so these never deadlock; the start and
completion steps lock only the broadcast.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context

from .. import services as messaging
from .. import validation
from ..bulk import bulk_write
from ..models import FAILURE_STATUSES, Channel, Message, MessageStatus, MessagingService
from ..providers import registry
from . import personalize, throttle
from .models import (
    ACTIVE_STATUSES,
    COUNTER_FIELDS,
    Broadcast,
    BroadcastRecipient,
    BroadcastStatus,
    RecipientStatus,
)

logger = logging.getLogger("messaging.broadcasts")

# Errors that stop the whole broadcast rather than one recipient.
FATAL_CODES = frozenset({"PROVIDER_NOT_WIRED"})
FATAL_TEMPLATE_REASONS = frozenset({"unknown_template", "not_approved", "unknown_language",
                                    "language_required"})
RATE_MAX = 10_000.0
# Longer throttle waits end the slice and queue the next one with a countdown.
MAX_SLEEP_SECONDS = 2.0
SLOT_MARGIN_SECONDS = 5.0


def batch_size() -> int:
    return int(getattr(settings, "BROADCAST_BATCH_SIZE", 100))


def runner_count() -> int:
    return max(1, int(getattr(settings, "BROADCAST_RUNNERS", 2)))


def slice_seconds() -> float:
    return float(getattr(settings, "BROADCAST_RUN_SLICE_SECONDS", 20))


def stall_seconds() -> float:
    return float(getattr(settings, "BROADCAST_STALL_SECONDS", 60))


# --- Events --------------------------------------------------------------------------------


def broadcast_event_data(broadcast: Broadcast) -> dict[str, Any]:
    return {
        "broadcast_id": broadcast.pk,
        "campaign_id": broadcast.pk,
        "name": broadcast.name,
        "status": broadcast.status,
        "channel": broadcast.channel,
        "template_name": broadcast.template_name,
        "counters": {name: getattr(broadcast, name) for name in COUNTER_FIELDS},
        "error_code": broadcast.error_code,
    }


def _emit(broadcast: Broadcast, event_type: str) -> None:
    emit(organization=broadcast.organization, type=event_type,
         data=broadcast_event_data(broadcast))


# --- Queuing the tasks (module functions: the worker-kill test routes them to its broker) --


def enqueue_start(broadcast_id: str) -> None:
    from .tasks import broadcast_start

    try:
        broadcast_start.delay(broadcast_id)
    except Exception:
        logger.exception("could not queue the start of %s; the beat will", broadcast_id)


def enqueue_runners(broadcast_id: str, count: int = 1, countdown: float | None = None) -> None:
    from .tasks import broadcast_run

    for _ in range(count):
        try:
            broadcast_run.apply_async((broadcast_id,), countdown=countdown)
        except Exception:
            logger.exception("could not queue a runner of %s; the beat will", broadcast_id)


# --- Checking a broadcast's configuration --------------------------------------------------


@dataclass
class Config:
    channel: str
    template_name: str | None
    language: str | None
    variables: dict
    body: str
    subject: str
    media_urls: list[str]
    list_id: str | None
    segment_id: str | None
    service: MessagingService | None
    from_address: str
    shorten_links: bool | None
    rate_per_second: float | None
    send_at: Any = None


def _check_audience(organization, audience: Any) -> tuple[str | None, str | None]:
    from contacts.models import ContactList
    from contacts.segments.models import Segment

    if not isinstance(audience, dict) or not audience:
        raise validation.missing(["audience"], 'audience is {"list_id": ...} or '
                                               '{"segment_id": ...}.')
    unknown = sorted(set(audience) - {"list_id", "segment_id"})
    if unknown:
        raise validation_error(f"audience.{unknown[0]}",
                               "audience takes list_id or segment_id.")
    list_id, segment_id = audience.get("list_id"), audience.get("segment_id")
    if bool(list_id) == bool(segment_id):
        raise validation_error("audience", "Give exactly one of list_id and segment_id.")
    if list_id:
        if not isinstance(list_id, str) or not ContactList.objects.for_organization(
                organization).filter(pk=list_id).exists():
            raise validation_error("audience.list_id", "No such contact list.")
    elif not isinstance(segment_id, str) or not Segment.objects.for_organization(
            organization).filter(pk=segment_id).exists():
        raise validation_error("audience.segment_id", "No such saved segment.")
    return list_id or None, segment_id or None


def _check_template(organization, config: Config) -> None:
    if not config.template_name:
        return
    try:
        from templates.services import render_for_send
    except ImportError:  # pragma: no cover - the templates family is installed
        return
    render_for_send(organization=organization, channel=config.channel,
                    template_name=config.template_name, language=config.language,
                    variables=personalize.sample(config.variables))


def check_config(organization, *, channel: Any, template_name: Any = None, language: Any = None,
                 variables: Any = None, body: Any = None, subject: Any = None,
                 media_url: Any = None, audience: Any = None,
                 messaging_service_id: Any = None, from_: Any = None, send_at: Any = None,
                 shorten_links: Any = None, rate_per_second: Any = None) -> Config:
    """Everything a send would refuse, answered before anything is stored."""
    body = body or ""
    subject = subject or ""
    channel = validation.check_channel(channel)
    media = validation.normalize_media(organization, media_url)
    if not body and not template_name and not media:
        raise validation.missing(["body", "template_name", "media_url"],
                                 "One of body, template_name or media_url is required.")
    if channel == Channel.EMAIL and not subject and not template_name:
        raise validation.missing(["subject"], "An email needs a subject (or a template).")
    if subject and channel != Channel.EMAIL:
        raise validation_error("subject", "subject is for email only.")
    if variables is None:
        variables = {}
    validation.check_template_shape(template_name, language, variables)
    if variables and not template_name:
        raise validation_error("variables", "variables go with template_name.")
    for key, value in variables.items():
        personalize.check(value, field=f"variables.{key}")
    personalize.check(body, field="body")
    personalize.check(subject, field="subject")
    validation.check_body(channel, body)
    list_id, segment_id = _check_audience(organization, audience)
    service = validation.messaging_service(organization, messaging_service_id)
    sender = ""
    if from_:
        sender = validation.normalize_sender(channel, from_,
                                             default_country=organization.default_country)
    when = validation.parse_send_at(send_at)
    if rate_per_second is not None and not (0 < float(rate_per_second) <= RATE_MAX):
        raise validation_error("rate_per_second",
                               f"rate_per_second is above 0 and at most {RATE_MAX:g}.")
    config = Config(
        channel=channel, template_name=template_name or None, language=language or None,
        variables=dict(variables), body=body, subject=subject, media_urls=media,
        list_id=list_id, segment_id=segment_id, service=service, from_address=sender,
        shorten_links=shorten_links, rate_per_second=(float(rate_per_second)
                                                      if rate_per_second is not None else None),
        send_at=when,
    )
    _check_runtime(organization, config)
    return config


def _check_runtime(organization, config: Config) -> None:
    """What can change after create: the provider, the sender pool, the template."""
    registry.provider_for(organization, config.channel)  # 503 PROVIDER_NOT_WIRED
    if not config.from_address:
        if config.service is not None:
            if not config.service.senders_for(config.channel):
                raise validation_error(
                    "messaging_service_id",
                    f"The messaging service has no {config.channel} sender; add one or "
                    "pass `from`.")
        else:
            messaging.resolve_sender(organization=organization, channel=config.channel,
                                     recipient="")
    _check_template(organization, config)


def _config_of(broadcast: Broadcast) -> Config:
    return Config(
        channel=broadcast.channel, template_name=broadcast.template_name,
        language=broadcast.language, variables=broadcast.variables or {},
        body=broadcast.body, subject=broadcast.subject, media_urls=broadcast.media_urls or [],
        list_id=broadcast.list_id, segment_id=broadcast.segment_id,
        service=broadcast.messaging_service, from_address=broadcast.from_address,
        shorten_links=broadcast.shorten_links, rate_per_second=broadcast.rate_per_second,
        send_at=broadcast.send_at,
    )


# --- Create, cancel -----------------------------------------------------------------------


def broadcast_create(*, organization, principal: Principal | None, name: str,
                     audience: Any, channel: Any = None, request=None,
                     **fields: Any) -> Broadcast:
    """Check and store a broadcast: `queued` (started at once) or `scheduled`."""
    config = check_config(organization, channel=channel, audience=audience, **fields)
    with transaction.atomic():
        broadcast = Broadcast.objects.for_organization(organization).create(
            organization=organization, name=name,
            status=BroadcastStatus.SCHEDULED if config.send_at else BroadcastStatus.QUEUED,
            channel=config.channel, template_name=config.template_name,
            language=config.language, variables=config.variables, body=config.body,
            subject=config.subject, media_urls=config.media_urls, list_id=config.list_id,
            segment_id=config.segment_id, messaging_service=config.service,
            from_address=config.from_address, shorten_links=config.shorten_links,
            rate_per_second=config.rate_per_second, send_at=config.send_at,
            created_by=principal.actor_id if principal else "",
            created_at=timezone.now(),
        )
        audit_record(action="broadcast.created", organization=organization,
                     principal=principal, target=broadcast, request=request,
                     metadata={"name": name, "channel": config.channel,
                               "list_id": config.list_id, "segment_id": config.segment_id,
                               "send_at": config.send_at.isoformat() if config.send_at
                               else None})
        if config.send_at is None:
            broadcast_id = broadcast.pk
            transaction.on_commit(lambda: enqueue_start(broadcast_id))
    return broadcast


def _cancel_pending(broadcast_id: str, organization) -> int:
    """Recipients never processed become `canceled` (they wait for a batch in flight)."""
    with transaction.atomic():
        count = (BroadcastRecipient.objects.for_organization(organization)
                 .filter(broadcast_id=broadcast_id, status=RecipientStatus.PENDING)
                 .update(status=RecipientStatus.CANCELED, processed_at=timezone.now()))
        if count:
            Broadcast.objects.for_organization(organization).filter(pk=broadcast_id).update(
                canceled=F("canceled") + count, updated_at=timezone.now())
    return count


def broadcast_cancel(*, broadcast: Broadcast, principal: Principal | None,
                     request=None) -> Broadcast:
    """scheduled, queued or running -> canceled; 409 CONFLICT otherwise.

    Two steps: the status first (under the row lock: a runner's next batch stops), then
    the pending recipients, which waits for a batch in flight to commit, so no message is
    created once this returns. Messages already created go out through the pipeline.
    """
    organization = broadcast.organization
    with transaction.atomic():
        current = (Broadcast.objects.for_organization(organization)
                   .select_for_update(of=("self",)).select_related("organization")
                   .get(pk=broadcast.pk))
        if current.status not in ACTIVE_STATUSES:
            raise APIError("CONFLICT", f"Only a scheduled, queued or running broadcast can be "
                                       f"canceled; this one is {current.status}.",
                           details={"status": current.status})
        current.status = BroadcastStatus.CANCELED
        current.canceled_at = timezone.now()
        current.save(update_fields=["status", "canceled_at", "updated_at"])
        audit_record(action="broadcast.canceled", organization=organization,
                     principal=principal, target=current, request=request,
                     metadata={"queued": current.queued,
                               "total_recipients": current.total_recipients})
    _cancel_pending(current.pk, organization)
    current.refresh_from_db()
    with transaction.atomic():
        _emit(current, "broadcast.canceled")
    return current


def broadcast_fail(*, broadcast_id: str, code: str, message: str) -> Broadcast | None:
    with transaction.atomic():
        current = (Broadcast.objects.dangerously_unscoped().select_for_update(of=("self",))
                   .select_related("organization").filter(pk=broadcast_id).first())
        if current is None or current.status not in ACTIVE_STATUSES:
            return current
        current.status = BroadcastStatus.FAILED
        current.error_code = str(code)[:64]
        current.error_message = str(message)[:1000]
        current.completed_at = timezone.now()
        current.save(update_fields=["status", "error_code", "error_message", "completed_at",
                                    "updated_at"])
    _cancel_pending(current.pk, current.organization)
    current.refresh_from_db()
    with transaction.atomic():
        _emit(current, "broadcast.failed")
    logger.warning("broadcast %s failed: %s %s", broadcast_id, code, message)
    return current


# --- Start: the audience snapshot ---------------------------------------------------------


def _audience_sql(broadcast: Broadcast) -> tuple[str, list[Any], str]:
    from contacts.models import Contact
    from contacts.segments.models import Segment
    from contacts.segments.selectors import segment_members

    organization = broadcast.organization
    column = "email" if broadcast.channel == Channel.EMAIL else "phone"
    if broadcast.list_id:
        contacts = Contact.objects.for_organization(organization).filter(
            memberships__contact_list_id=broadcast.list_id)
    else:
        segment = Segment.objects.for_organization(organization).filter(
            pk=broadcast.segment_id).first()
        if segment is None:
            raise APIError("NOT_FOUND", "The broadcast's segment no longer exists.")
        contacts = segment_members(segment)
    query = contacts.exclude(**{column: ""}).order_by().values("id", column)
    sql, params = query.query.sql_with_params()
    return sql, list(params), column


def _snapshot(broadcast: Broadcast) -> int:
    """Copy the audience into recipient rows: one statement, whatever the size."""
    from contacts.models import ContactList

    if broadcast.list_id and not ContactList.objects.for_organization(
            broadcast.organization).filter(pk=broadcast.list_id).exists():
        raise APIError("NOT_FOUND", "The broadcast's contact list no longer exists.")
    select_sql, params, column = _audience_sql(broadcast)
    table = BroadcastRecipient._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (organization_id, broadcast_id, contact_id, address, status) "  # noqa: S608
            f"SELECT %s, %s, audience.id, audience.{column}, %s FROM ({select_sql}) AS audience "
            "WHERE 1 = 1 ON CONFLICT (broadcast_id, contact_id) DO NOTHING",
            [broadcast.organization_id, broadcast.pk, RecipientStatus.PENDING, *params],
        )
        cursor.execute(f"SELECT COUNT(*) FROM {table} WHERE broadcast_id = %s",  # noqa: S608
                       [broadcast.pk])
        return cursor.fetchone()[0]


def broadcast_start(*, broadcast_id: str, now=None) -> str:
    """queued (or due scheduled) -> running: snapshot, `broadcast.started`, runners."""
    now = now or timezone.now()
    failure: APIError | None = None
    with transaction.atomic():
        broadcast = (Broadcast.objects.dangerously_unscoped().select_for_update(of=("self",))
                     .select_related("organization", "messaging_service")
                     .filter(pk=broadcast_id).first())
        if broadcast is None:
            return "missing"
        if broadcast.status == BroadcastStatus.SCHEDULED and (
                broadcast.send_at is None or broadcast.send_at > now):
            return "not_due"
        if broadcast.status not in (BroadcastStatus.QUEUED, BroadcastStatus.SCHEDULED):
            return "skipped"
        organization = broadcast.organization
        with tenant_context(organization):
            try:
                _check_runtime(organization, _config_of(broadcast))
                with transaction.atomic():
                    total = _snapshot(broadcast)
            except APIError as exc:
                failure = exc
            else:
                broadcast.status = BroadcastStatus.RUNNING
                broadcast.total_recipients = total
                broadcast.started_at = now
                broadcast.heartbeat_at = now
                broadcast.save(update_fields=["status", "total_recipients", "started_at",
                                              "heartbeat_at", "updated_at"])
                _emit(broadcast, "broadcast.started")
                runners = min(runner_count(), max(1, total))
                transaction.on_commit(lambda: enqueue_runners(broadcast_id, runners))
    if failure is not None:
        broadcast_fail(broadcast_id=broadcast_id, code=failure.code, message=failure.message)
        return "failed"
    return "started"


# --- Run: the batches ---------------------------------------------------------------------


@dataclass
class _Run:
    broadcast: Broadcast
    organization: Any
    config: Config
    rate: float
    shorten_links: bool | None
    personal: bool
    single_sender: str | None
    waits: list[float] = field(default_factory=list)


class _Fatal(Exception):
    def __init__(self, error: APIError) -> None:
        super().__init__(error.message)
        self.error = error


def _is_fatal(exc: APIError) -> bool:
    if exc.code in FATAL_CODES:
        return True
    reason = (exc.details or {}).get("reason") if isinstance(exc.details, dict) else None
    return exc.code == "INVALID_TEMPLATE" and reason in FATAL_TEMPLATE_REASONS


def _prepare(broadcast: Broadcast) -> _Run:
    organization = broadcast.organization
    config = _config_of(broadcast)
    rate = broadcast.rate_per_second or throttle.default_rate()
    single = None
    if config.from_address:
        single = config.from_address
    elif config.service is None:
        single = messaging.resolve_sender(organization=organization, channel=config.channel,
                                          recipient="")
    return _Run(
        broadcast=broadcast, organization=organization, config=config, rate=rate,
        shorten_links=config.shorten_links,
        personal=personalize.uses_contact(config.body, config.subject,
                                          *config.variables.values()),
        single_sender=single,
    )


def _contacts_for(run: _Run, rows: list[BroadcastRecipient]) -> dict[str, dict]:
    if not run.personal:
        return {}
    from contacts.models import Contact

    return {c["id"]: c for c in Contact.objects.for_organization(run.organization)
            .filter(pk__in=[r.contact_id for r in rows]).values(*personalize.CONTACT_COLUMNS)}


def _send_one(run: _Run, row: BroadcastRecipient, sender: str, contact: dict | None) -> Message:
    config = run.config
    return messaging.message_send(
        organization=run.organization, channel=config.channel, to=row.address, from_=sender,
        body=personalize.render(config.body, contact),
        subject=personalize.render(config.subject, contact),
        media_url=config.media_urls or None, template_name=config.template_name,
        language=config.language,
        variables=personalize.render_variables(config.variables, contact) or None,
        messaging_service_id=config.service.pk if config.service else None,
        shorten_links=run.shorten_links, contact_id=row.contact_id,
        campaign_id=run.broadcast.pk,
    )


def _claim(run: _Run, limit: int) -> list[BroadcastRecipient]:
    return list(
        BroadcastRecipient.objects.for_organization(run.organization)
        .select_for_update(skip_locked=True)
        .filter(broadcast_id=run.broadcast.pk, status=RecipientStatus.PENDING)
        .order_by("id")[:limit]
    )


def _mark(rows: list[BroadcastRecipient], now) -> None:
    """Store the batch's outcomes in one statement (messaging/bulk.py)."""
    for row in rows:
        row.processed_at = now
    bulk_write(BroadcastRecipient, rows, ["status", "message_id", "error_code", "processed_at"])


def _run_batch(run: _Run) -> tuple[str, int, float]:
    """One batch in one transaction: ("stopped" | "empty" | "throttled" | "sent", n, wait)."""
    broadcast = run.broadcast
    organization = run.organization
    status = (Broadcast.objects.for_organization(organization).filter(pk=broadcast.pk)
              .values_list("status", flat=True).first())
    if status != BroadcastStatus.RUNNING:
        return "stopped", 0, 0.0
    wait = 0.0
    with transaction.atomic():
        if run.single_sender is not None:
            granted, wait = throttle.take(organization_id=organization.pk,
                                          sender=run.single_sender, want=batch_size(),
                                          rate=run.rate)
            if granted == 0:
                return "throttled", 0, wait
            rows = _claim(run, granted)
            senders = {row.pk: run.single_sender for row in rows}
        else:
            pool = max(1, len(run.config.service.senders_for(run.config.channel)))
            rows = _claim(run, min(batch_size(), max(1, int(run.rate * pool))))
            senders = {row.pk: messaging.sticky_sender_for(
                service=run.config.service, channel=run.config.channel,
                recipient=row.address) or "" for row in rows}
            wanted = Counter(senders.values())
            allowed: dict[str, int] = {}
            for sender, count in wanted.items():
                allowed[sender], sender_wait = throttle.take(
                    organization_id=organization.pk, sender=sender, want=count, rate=run.rate)
                wait = max(wait, sender_wait)
            kept = []
            for row in rows:  # the rest stay pending, released at commit
                if allowed[senders[row.pk]] > 0:
                    allowed[senders[row.pk]] -= 1
                    kept.append(row)
            if rows and not kept:
                return "throttled", 0, wait
            rows = kept
        if not rows:
            return "empty", 0, 0.0
        contacts = _contacts_for(run, rows)
        counts: Counter[str] = Counter()
        now = timezone.now()
        for row in rows:
            try:
                message = _send_one(run, row, senders[row.pk], contacts.get(row.contact_id))
            except APIError as exc:
                if _is_fatal(exc):
                    raise _Fatal(exc) from exc
                if exc.code == "RECIPIENT_OPTED_OUT":
                    row.status = RecipientStatus.SKIPPED_OPTED_OUT
                    counts["skipped_opted_out"] += 1
                else:
                    row.status = RecipientStatus.SKIPPED_INVALID
                    counts["skipped_invalid"] += 1
                row.error_code = exc.code[:64]
            except IntegrityError:
                # A message for this recipient exists already (never expected: the mark
                # and the message commit together); record it, never send another.
                existing = (Message.objects.for_organization(organization)
                            .filter(campaign_id=broadcast.pk, contact_id=row.contact_id)
                            .values_list("pk", flat=True).first())
                logger.error("broadcast %s: recipient %s already had message %s",
                             broadcast.pk, row.contact_id, existing)
                row.status, row.message_id = RecipientStatus.QUEUED, existing
                counts["queued"] += 1
            else:
                row.status = RecipientStatus.QUEUED
                row.message_id = message.pk
                counts["queued"] += 1
            row.processed_at = now
        _mark(rows, now)
        Broadcast.objects.for_organization(organization).filter(pk=broadcast.pk).update(
            heartbeat_at=now, updated_at=now,
            **{name: F(name) + value for name, value in counts.items()})
    return "sent", len(rows), wait


def _slot_key(broadcast_id: str, index: int) -> str:
    return f"messaging:broadcast:{broadcast_id}:runner:{index}"


def _take_slot(broadcast_id: str) -> tuple[str, str] | None:
    """One of the broadcast's BROADCAST_RUNNERS runner slots (a cache key held for a slice
    and a margin): extra runners (the beat's resumes, redelivered tasks) exit at once
    instead of piling up on worker processes. A killed runner's slot expires."""
    token = uuid.uuid4().hex
    for index in range(runner_count()):
        key = _slot_key(broadcast_id, index)
        if cache.add(key, token, timeout=slice_seconds() + SLOT_MARGIN_SECONDS):
            return key, token
    return None


def _release_slot(slot: tuple[str, str]) -> None:
    key, token = slot
    if cache.get(key) == token:
        cache.delete(key)


def broadcast_run(*, broadcast_id: str, budget_seconds: float | None = None) -> str:
    """Run batches for one slice. Answers "done" (nothing pending: completed if it was the
    last), "continue" (the slice ended: queue the next), "waiting" (throttled for longer
    than MAX_SLEEP_SECONDS: the next slice is queued with that countdown), "busy" (every
    runner slot is taken), "stopped" (not running) or "failed"."""
    broadcast = (Broadcast.objects.dangerously_unscoped()
                 .select_related("organization", "messaging_service")
                 .filter(pk=broadcast_id).first())
    if broadcast is None or broadcast.status != BroadcastStatus.RUNNING:
        return "stopped"
    slot = _take_slot(broadcast_id)
    if slot is None:
        return "busy"
    try:
        return _run_slice(broadcast, budget_seconds)
    finally:
        _release_slot(slot)


def _run_slice(broadcast: Broadcast, budget_seconds: float | None) -> str:
    broadcast_id = broadcast.pk
    budget = slice_seconds() if budget_seconds is None else budget_seconds
    deadline = time.monotonic() + budget
    with tenant_context(broadcast.organization):
        try:
            run = _prepare(broadcast)
        except APIError as exc:
            broadcast_fail(broadcast_id=broadcast_id, code=exc.code, message=exc.message)
            return "failed"
        while True:
            try:
                outcome, _count, wait = _run_batch(run)
            except _Fatal as fatal:
                broadcast_fail(broadcast_id=broadcast_id, code=fatal.error.code,
                               message=fatal.error.message)
                return "failed"
            if outcome == "stopped":
                return "stopped"
            if outcome == "empty":
                broadcast_complete_if_done(broadcast_id=broadcast_id)
                return "done"
            left = deadline - time.monotonic()
            if left <= 0:
                return "continue"
            if wait > 0:
                # Throttled: wait for the next token, or for half a batch's worth of
                # tokens, so a busy sender is served in batches rather than one by one.
                gather = min(batch_size(), throttle.capacity_for(run.rate)) / run.rate / 2
                pause = max(wait, gather)
                if pause > MAX_SLEEP_SECONDS:
                    # A slow sender: free the worker process meanwhile.
                    enqueue_runners(broadcast_id, 1, countdown=pause)
                    return "waiting"
                time.sleep(min(pause, left))


def broadcast_complete_if_done(*, broadcast_id: str) -> bool:
    """running -> completed once no recipient is pending (`broadcast.completed`)."""
    with transaction.atomic():
        broadcast = (Broadcast.objects.dangerously_unscoped().select_for_update(of=("self",))
                     .select_related("organization").filter(pk=broadcast_id).first())
        if broadcast is None or broadcast.status != BroadcastStatus.RUNNING:
            return False
        if BroadcastRecipient.objects.for_organization(broadcast.organization).filter(
                broadcast_id=broadcast_id, status=RecipientStatus.PENDING).exists():
            return False
        broadcast.status = BroadcastStatus.COMPLETED
        broadcast.completed_at = timezone.now()
        broadcast.save(update_fields=["status", "completed_at", "updated_at"])
        _emit(broadcast, "broadcast.completed")
    return True


# --- Counters moved by the message pipeline and the short links ---------------------------


def _counter_increments(previous: str, status: str) -> dict[str, int]:
    """What one message's move adds to its broadcast's counters."""
    if status == MessageStatus.SENT:
        return {"sent": 1}
    if status == MessageStatus.DELIVERED:
        # A receipt that came before the send result counts the send too.
        return {"delivered": 1, **({"sent": 1} if previous == MessageStatus.QUEUED else {})}
    if status in FAILURE_STATUSES:
        return {"failed": 1}  # one accepted first stays counted in `sent`
    return {}


def on_messages_transition(moves: Sequence[tuple[Message, str, str]]) -> None:
    """Broadcast messages moved, `(message, previous, status)` each, in one status batch
    (`status.StatusBatch.write`, in its transaction, under the messages' row locks, so each
    transition is counted once): their recipients follow, one UPDATE per recipient status,
    and each broadcast's counters move by the batch's sums, one UPDATE per broadcast."""
    counted = [(m, previous, status) for m, previous, status in moves
               if _counter_increments(previous, status)]
    if not counted:
        return
    recipients = BroadcastRecipient.objects.dangerously_unscoped()
    # A recipient is marked exactly when its message exists: count only those found.
    found = set(recipients.filter(message_id__in=[m.pk for m, _p, _s in counted])
                .values_list("message_id", flat=True))
    final: dict[str, str] = {}
    sums: dict[tuple[str, str], Counter[str]] = {}
    for message, previous, status in counted:
        if message.pk not in found:
            continue
        final[message.pk] = (RecipientStatus.FAILED if status in FAILURE_STATUSES
                             else RecipientStatus(status))
        sums.setdefault((message.organization_id, message.campaign_id), Counter()).update(
            _counter_increments(previous, status))
    by_status: dict[str, list[str]] = {}
    for message_id, status in final.items():
        by_status.setdefault(status, []).append(message_id)
    for status, message_ids in by_status.items():
        recipients.filter(message_id__in=message_ids).update(status=status)
    for (organization_id, campaign_id), increments in sums.items():
        Broadcast.objects.dangerously_unscoped().filter(
            organization_id=organization_id, pk=campaign_id).update(
            **{name: F(name) + value for name, value in increments.items()})


def on_click(*, organization_id: str, campaign_id: str | None, message_id: str | None,
             clicked_at) -> bool:
    """A tracked link of a broadcast message was followed: the first click of each
    recipient counts once in `clicked`."""
    if not campaign_id or not message_id:
        return False
    with transaction.atomic():
        first = (BroadcastRecipient.objects.dangerously_unscoped()
                 .filter(organization_id=organization_id, broadcast_id=campaign_id,
                         message_id=message_id, clicked_at__isnull=True)
                 .update(clicked_at=clicked_at))
        if first:
            Broadcast.objects.dangerously_unscoped().filter(
                organization_id=organization_id, pk=campaign_id).update(clicked=F("clicked") + 1)
    return bool(first)


# --- The beat -----------------------------------------------------------------------------


def broadcasts_due(*, now=None, limit: int = 100) -> dict[str, int]:
    """Start due scheduled broadcasts, restart lost starts, resume stalled runners,
    finish the pending recipients of a broadcast canceled or failed mid-way."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=stall_seconds())
    rows = Broadcast.objects.dangerously_unscoped()
    counts = {"started": 0, "resumed": 0, "finished": 0}
    due = list(rows.filter(status=BroadcastStatus.SCHEDULED, send_at__lte=now)
               .values_list("pk", flat=True)[:limit])
    lost = list(rows.filter(status=BroadcastStatus.QUEUED, created_at__lte=stale)
                .values_list("pk", flat=True)[:limit])
    for broadcast_id in [*due, *lost]:
        if broadcast_start(broadcast_id=broadcast_id, now=now) == "started":
            counts["started"] += 1
    stalled = list(rows.filter(status=BroadcastStatus.RUNNING, heartbeat_at__lt=stale)
                   .values_list("pk", flat=True)[:limit])
    for broadcast_id in stalled:
        # Claim the resume (one beat tick resumes it once), then queue fresh runners.
        claimed = rows.filter(pk=broadcast_id, status=BroadcastStatus.RUNNING,
                              heartbeat_at__lt=stale).update(heartbeat_at=now)
        if claimed:
            counts["resumed"] += 1
            enqueue_runners(broadcast_id, runner_count())
    ended = list(rows.filter(status__in=[BroadcastStatus.CANCELED, BroadcastStatus.FAILED],
                             updated_at__gte=now - timedelta(days=1))
                 .select_related("organization")[:limit])
    for broadcast in ended:
        if broadcast.pending and _cancel_pending(broadcast.pk, broadcast.organization):
            counts["finished"] += 1
    return counts
