"""Webhook deliveries as a source of the outbound engine (engine.py): claimed in batches
per endpoint, sent concurrently, recorded in bulk.

Recording a batch is a constant number of statements whatever its size: the claimed rows
are re-read under lock (only those still holding this drain's claim token are recorded: a
row whose lease ended belongs to whoever re-claimed it), then one UPDATE of the
deliveries, one INSERT of their attempt rows, the circuit breaker's endpoint updates (one
statement per kind of change, for every endpoint of the batch) and one INSERT of the
`webhook.delivery.exhausted` events. Disabling an endpoint (410 Gone, failing for the
breaker's period) is per endpoint, and rare.
"""

from __future__ import annotations

import codecs
import json
import logging
import time
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from platform_core.net import http

from . import conf, services, signing
from . import headers as header_rules
from .engine import Job, Outcome, Source
from .models import (
    DeliveryStatus,
    DisabledReason,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookEndpoint,
)

logger = logging.getLogger("platform_core.webhooks")

BODY_KEPT_BYTES = 500
# What an attempt changes on its delivery, with the array type each travels as.
_RECORDED = (("attempts", "int"), ("last_attempt_at", "timestamptz"),
             ("request_headers", "jsonb"), ("response_status", "int"),
             ("response_headers", "jsonb"), ("last_response_body", "text"),
             ("last_error", "text"), ("duration_ms", "int"), ("claim_token", "text"),
             ("status", "text"), ("succeeded_at", "timestamptz"),
             ("failed_at", "timestamptz"), ("dead_lettered_at", "timestamptz"),
             ("next_retry_at", "timestamptz"), ("updated_at", "timestamptz"))


def body_text(body: bytes) -> str:
    """The first 500 bytes as text: no truncation marker, a cut character dropped."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return decoder.decode(body[:BODY_KEPT_BYTES], final=False).replace("\x00", "")


def build_request(delivery: WebhookDelivery, endpoint: WebhookEndpoint,
                  timestamp: int) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()
    headers = {
        "Content-Type": "application/json",
        "X-Service-Event-Type": delivery.event_type,
        "X-Service-Delivery-Id": delivery.pk,
        **signing.signature_headers(secret=endpoint.secret, event_id=delivery.event_id,
                                    timestamp=timestamp, body=body),
        **endpoint.headers,
    }
    return body, headers


class WebhookSource(Source):
    name = "webhooks"
    table = WebhookDelivery._meta.db_table
    key_column = "endpoint_id"
    key_join = (f"JOIN {WebhookEndpoint._meta.db_table} ep"
                " ON ep.id = keys.k AND ep.enabled")
    # FIFO per (endpoint, subject), in the order the events were created (engine.py).
    subject_column = "subject"
    order_columns = ("event_created_at", "event_id")
    signal = services.DRAIN

    def cap(self) -> int:
        return conf.endpoint_concurrency()

    def lease_seconds(self) -> float:
        return conf.lease_seconds()

    def prepare(self, ids: Sequence[str], token: str, lease_deadline: float) -> list[Job]:
        timeout = conf.timeout_seconds()
        timestamp = int(time.time())
        rows, unreadable = _load(ids)
        jobs = [Job(id=pk, key="", token=token, lease_deadline=lease_deadline,
                    outcome=Outcome(error=http.OutboundError(
                        "internal_error", "the delivery or its endpoint could not be read")))
                for pk in unreadable]
        for row in rows:
            job = Job(id=row.pk, key=row.endpoint_id, token=token,
                      lease_deadline=lease_deadline, timeout=timeout, row=row)
            try:
                if not row.endpoint.enabled:
                    job.outcome = Outcome(released=True)  # waits until it is enabled again
                else:
                    job.url = row.endpoint.url
                    job.body, job.headers = build_request(row, row.endpoint, timestamp)
            except Exception as exc:  # a row we cannot build fails alone, as an attempt
                logger.exception("webhook delivery %s could not be built", row.pk)
                job.outcome = Outcome(error=http.OutboundError(
                    "internal_error", f"the request could not be built: {type(exc).__name__}"))
            jobs.append(job)
        return jobs

    def record(self, finished: list[tuple[Job, Outcome]]) -> None:
        now = timezone.now()
        current = {
            row.pk: row for row in
            WebhookDelivery.objects.dangerously_unscoped()
            .select_for_update(of=("self",)).select_related("organization")
            .filter(pk__in=[job.id for job, _ in finished], status=DeliveryStatus.PENDING)
        }
        changed: list[WebhookDelivery] = []
        attempts: list[WebhookDeliveryAttempt] = []
        succeeded_eps: set[str] = set()
        failed_eps: set[str] = set()
        gone_eps: dict[str, object] = {}
        organizations: dict[str, object] = {}
        exhausted = []
        for job, outcome in finished:
            row = current.get(job.id)
            if row is None or row.claim_token != job.token:
                continue  # done, or the lease ended and another drain owns it now
            row.updated_at = now
            row.claim_token = ""
            if outcome.released:
                row.next_retry_at = now
                changed.append(row)
                continue
            result = _apply_attempt(row, outcome, now)
            changed.append(row)
            attempts.append(WebhookDeliveryAttempt(
                organization_id=row.organization_id, delivery=row, number=row.attempts,
                attempted_at=now, request_headers=row.request_headers,
                response_status=row.response_status, response_headers=row.response_headers,
                response_body=row.last_response_body, error=row.last_error,
                duration_ms=row.duration_ms, outcome=result,
            ))
            organizations[row.endpoint_id] = row.organization
            if result == "succeeded":
                succeeded_eps.add(row.endpoint_id)
                continue
            failed_eps.add(row.endpoint_id)
            if row.response_status == 410 and conf.disable_on_gone():
                gone_eps[row.endpoint_id] = row.organization
            elif (result == "failed"
                  and row.event_type != services.EVENT_DELIVERY_EXHAUSTED):
                # Not for deliveries of an exhausted event itself: no chains of failures.
                exhausted.append((row.organization, services.EVENT_DELIVERY_EXHAUSTED, {
                    "delivery_id": row.pk, "endpoint_id": row.endpoint_id,
                    "event_id": row.event_id, "event_type": row.event_type,
                    "attempts": row.attempts, "last_response_status": row.response_status,
                    "last_error": row.last_error or None,
                }))
        if changed:
            _write_back(changed)
        if attempts:
            _write_attempts(attempts)
        _update_breakers(succeeded=succeeded_eps, failed=failed_eps - succeeded_eps,
                         gone=gone_eps, organizations=organizations, now=now)
        if exhausted:
            from platform_core.events.bus import emit_batch

            emit_batch(exhausted)


def _write_back(rows: list[WebhookDelivery]) -> None:
    """One UPDATE for every recorded delivery. On PostgreSQL the rows travel as one JSON
    document read by `jsonb_to_recordset`: serialized in C by `json.dumps`, where arrays
    of text (`unnest(%s::text[])`) were escaped element by element in Python by the
    driver, most of the drain's CPU (bench/profile_webhooks.py). Elsewhere (the embedded
    SQLite default), Django's portable bulk_update."""
    if connection.vendor != "postgresql":
        WebhookDelivery.objects.dangerously_unscoped().bulk_update(
            rows, [name for name, _ in _RECORDED])
        return
    table = WebhookDelivery._meta.db_table
    columns = ", ".join(["id text"] + [f"{name} {kind}" for name, kind in _RECORDED])
    sets = ", ".join(f"{name} = v.{name}" for name, _ in _RECORDED)
    document = json.dumps([
        {"id": row.pk, **{name: _json_value(getattr(row, name)) for name, _ in _RECORDED}}
        for row in rows], ensure_ascii=False, separators=(",", ":"))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS d SET {sets}"  # noqa: S608 - the model's own table
            f" FROM jsonb_to_recordset(%s::jsonb) AS v({columns}) WHERE d.id = v.id",
            [document])


_ATTEMPT_COLUMNS = (("organization_id", "text"), ("delivery_id", "text"), ("number", "int"),
                    ("attempted_at", "timestamptz"), ("request_headers", "jsonb"),
                    ("response_status", "int"), ("response_headers", "jsonb"),
                    ("response_body", "text"), ("error", "text"), ("duration_ms", "int"),
                    ("outcome", "text"))


def _write_attempts(attempts: list[WebhookDeliveryAttempt]) -> None:
    """The attempt log of a batch in one INSERT. On PostgreSQL from one JSON document, as
    `_write_back` (Django's bulk_create sends text arrays the driver escapes in Python,
    the JSON headers character by character); elsewhere Django's bulk_create."""
    if connection.vendor != "postgresql":
        WebhookDeliveryAttempt.objects.dangerously_unscoped().bulk_create(attempts)
        return
    table = WebhookDeliveryAttempt._meta.db_table
    names = ", ".join(name for name, _ in _ATTEMPT_COLUMNS)
    columns = ", ".join(f"{name} {kind}" for name, kind in _ATTEMPT_COLUMNS)
    document = json.dumps([{name: _json_value(getattr(attempt, name))
                            for name, _ in _ATTEMPT_COLUMNS} for attempt in attempts],
                          ensure_ascii=False, separators=(",", ":"))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({names}) SELECT {names}"  # noqa: S608 - the model's table
            f" FROM jsonb_to_recordset(%s::jsonb) AS v({columns})", [document])


def _json_value(value):
    """A column value as JSON: datetimes in full ISO 8601 (microseconds and offset kept;
    DjangoJSONEncoder would cut them to milliseconds); JSON columns as they are."""
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _load(ids: Sequence[str]) -> tuple[list[WebhookDelivery], list[str]]:
    """The claimed deliveries with their endpoints; if one cannot be read (a secret that
    no longer decrypts...), the others still are: (rows, ids that could not be read)."""
    query = WebhookDelivery.objects.dangerously_unscoped().select_related("endpoint")
    try:
        return list(query.filter(pk__in=list(ids))), []
    except Exception:
        logger.exception("a batch of webhook deliveries could not be read; reading one by one")
    rows, unreadable = [], []
    for pk in ids:
        try:
            rows.extend(query.filter(pk=pk))
        except Exception:
            logger.exception("webhook delivery %s could not be read", pk)
            unreadable.append(pk)
    return rows, unreadable


def _apply_attempt(row: WebhookDelivery, outcome: Outcome, now: datetime) -> str:
    """Write one attempt's result on its delivery; the attempt's outcome."""
    response, error = outcome.response, outcome.error
    row.attempts += 1
    row.last_attempt_at = now
    sent = response.request_headers if response is not None else error.request_headers
    row.request_headers = header_rules.redact(sent)
    row.response_status = response.status_code if response is not None else None
    row.response_headers = (header_rules.response_headers(response.headers)
                            if response is not None else None)
    row.last_response_body = body_text(response.body) if response is not None else ""
    row.last_error = "" if error is None else str(error)[:500]
    row.duration_ms = response.elapsed_ms if response is not None else error.elapsed_ms
    status = row.response_status
    if status is not None and 200 <= status < 300:
        row.status = DeliveryStatus.SUCCEEDED
        row.succeeded_at = now
        row.next_retry_at = None
        return "succeeded"
    gone = status == 410 and conf.disable_on_gone()
    retry_after = (services.retry_after_seconds(response.header("Retry-After"), now)
                   if response is not None else None)
    delay = None if gone else services.next_retry_delay(row.attempts, retry_after)
    if delay is None:
        row.status = DeliveryStatus.FAILED
        row.failed_at = now
        row.dead_lettered_at = now
        row.next_retry_at = None
        return "failed"
    row.next_retry_at = now + timedelta(seconds=delay)
    return "retrying"


def _update_breakers(*, succeeded: set[str], failed: set[str], gone: dict[str, object],
                     organizations: dict[str, object], now: datetime) -> None:
    """The circuit breaker of every endpoint of a batch, in a few statements."""
    endpoints = WebhookEndpoint.objects.dangerously_unscoped()
    if succeeded:
        # Written only when something changes, so a busy endpoint's row stays cool.
        endpoints.filter(pk__in=succeeded).filter(
            Q(failing_since__isnull=False) | Q(last_success_at__isnull=True)
            | Q(last_success_at__lt=now - timedelta(seconds=60))
        ).update(failing_since=None, last_success_at=now)
    if not failed:
        return
    endpoints.filter(pk__in=failed, failing_since__isnull=True).update(failing_since=now)
    endpoints.filter(pk__in=failed).filter(
        Q(last_failure_at__isnull=True) | Q(last_failure_at__lt=now - timedelta(seconds=60))
    ).update(last_failure_at=now)
    for endpoint_id, organization in gone.items():
        services.disable_endpoint(endpoint_id, organization, reason=DisabledReason.GONE,
                                  now=now)
    period = conf.disable_after_seconds()
    if period <= 0:
        return
    failing_too_long = endpoints.filter(
        pk__in=failed - set(gone), enabled=True,
        failing_since__lte=now - timedelta(seconds=period)).values_list("pk", flat=True)
    for endpoint_id in failing_too_long:
        services.disable_endpoint(endpoint_id, organizations[endpoint_id],
                                  reason=DisabledReason.FAILING, now=now,
                                  only_if_failing_since=now - timedelta(seconds=period))


SOURCE = WebhookSource()
