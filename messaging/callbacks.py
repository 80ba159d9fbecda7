"""Per-message status callbacks and messaging services' inbound webhooks.

A message's `status_callback` (`webhook_url` over REST) receives every status transition
of that message; a messaging service's `inbound_webhook_url` receives the
`message.received` events of messages sent to its numbers. Each is one HTTP POST whose body
is the event envelope the webhooks receive (Document 1, 2.3: `{id, type, created_at,
data}`), with the same headers and signatures as a webhook delivery (0-conventions.md
section 4: `X-Service-Signature`, `X-Orbit-Signature`, Standard Webhooks'
`webhook-id`/`webhook-timestamp`/`webhook-signature`), keyed by the organization's
callback signing secret (`GET /api/v1/messaging/callback-secret`, rotatable), since a
per-message URL has no endpoint secret of its own.

They ride the webhooks' outbound engine (platform_core/webhooks/engine.py): a callback
owed is a `CallbackDelivery` row written in the caller's transaction (nothing leaves for a
change that rolls back), due now; after commit the callback drain (`messaging.deliver_callback`
on the `webhooks` queue) claims due rows in batches, at most WEBHOOK_ENDPOINT_CONCURRENCY
in flight per origin, and POSTs them concurrently through the hardened client (SSRF-checked
at send time, connection pinned to the checked address, no redirects, bounded timeout).
A non-2xx answer or a transport error is retried at the next slot of
`CALLBACK_RETRY_SCHEDULE` (default 10 s, 60 s, 300 s; the beat sweep picks the due ones
up), then dropped with a log line. There is no delivery record: a row lives only while the
callback is owed. Durable, recorded delivery is what webhook endpoints are for.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from platform_core.drains import DrainSignal
from platform_core.events.models import Event
from platform_core.net import http
from platform_core.webhooks import conf as webhook_conf
from platform_core.webhooks import signing
from platform_core.webhooks.engine import Job, Outcome, Source
from platform_core.webhooks.models import CallbackDelivery

logger = logging.getLogger("messaging.callbacks")

DEFAULT_RETRY_SCHEDULE = (10, 60, 300)


def retry_schedule() -> list[int]:
    value = getattr(settings, "CALLBACK_RETRY_SCHEDULE", None)
    if isinstance(value, str):
        value = [int(v) for v in value.split(",") if v.strip()]
    return [int(v) for v in value] if value is not None else list(DEFAULT_RETRY_SCHEDULE)


def _drain_task():
    from .tasks import deliver_callback

    return deliver_callback


DRAIN = DrainSignal("callbacks", _drain_task)


def origin(url: str) -> str:
    """The per-origin cap's key: scheme://host:port."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"[:300]


def callbacks_enqueue(items: Sequence[tuple[str, str, str]]) -> None:
    """Owe callbacks, `(organization_id, event_id, url)` each: one INSERT in the current
    transaction; they go out once it commits."""
    if not items:
        return
    now = timezone.now()
    CallbackDelivery.objects.dangerously_unscoped().bulk_create([
        CallbackDelivery(organization_id=organization_id, event_id=event_id, url=url,
                         origin=origin(url), next_retry_at=now, created_at=now)
        for organization_id, event_id, url in items
    ])
    transaction.on_commit(DRAIN.kick)


def build_request(event: Event, secret: str, timestamp: int) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(event.envelope(), separators=(",", ":"), ensure_ascii=False).encode()
    headers = {
        "Content-Type": "application/json",
        "X-Service-Event-Type": event.type,
        "X-Service-Delivery-Id": f"cbk_{event.pk.removeprefix('evt_')}",
        **signing.signature_headers(secret=secret, event_id=event.pk, timestamp=timestamp,
                                    body=body),
    }
    return body, headers


class CallbackSource(Source):
    name = "callbacks"
    table = CallbackDelivery._meta.db_table
    key_column = "origin"
    signal = DRAIN

    def cap(self) -> int:
        return webhook_conf.endpoint_concurrency()

    def lease_seconds(self) -> float:
        return webhook_conf.lease_seconds()

    def prepare(self, ids: Sequence[str], token: str, lease_deadline: float) -> list[Job]:
        from platform_core.tenancy.context import tenant_context

        from .services import callback_secret_get

        rows = list(CallbackDelivery.objects.dangerously_unscoped().filter(pk__in=list(ids)))
        events = {e.pk: e for e in Event.objects.dangerously_unscoped()
                  .select_related("organization")
                  .filter(pk__in=[row.event_id for row in rows])}
        secret_of: dict[str, str] = {}
        timestamp = int(time.time())
        jobs = []
        for row in rows:
            job = Job(id=row.pk, key=row.origin, token=token, lease_deadline=lease_deadline,
                      timeout=webhook_conf.timeout_seconds(), row=row, url=row.url)
            event = events.get(row.event_id)
            try:
                if event is None or event.organization_id != row.organization_id:
                    raise LookupError(f"event {row.event_id} is gone")
                if row.organization_id not in secret_of:
                    with tenant_context(event.organization):
                        secret_of[row.organization_id] = callback_secret_get(
                            event.organization).secret
                job.body, job.headers = build_request(event, secret_of[row.organization_id],
                                                      timestamp)
            except Exception as exc:  # a row we cannot build fails alone
                logger.warning("status callback %s could not be built: %s", row.pk, exc)
                job.outcome = Outcome(error=http.OutboundError("internal_error", str(exc)))
            jobs.append(job)
        return jobs

    def record(self, finished: list[tuple[Job, Outcome]]) -> None:
        now = timezone.now()
        schedule = retry_schedule()
        current = {row.pk: row for row in CallbackDelivery.objects.dangerously_unscoped()
                   .select_for_update().filter(pk__in=[job.id for job, _ in finished])}
        done: list[str] = []
        retry: list[CallbackDelivery] = []
        for job, outcome in finished:
            row = current.get(job.id)
            if row is None or row.claim_token != job.token:
                continue  # the lease ended and another drain owns it now
            row.claim_token = ""
            row.updated_at = now
            if outcome.released:
                row.next_retry_at = now
                retry.append(row)
                continue
            response = outcome.response
            if response is not None and 200 <= response.status_code < 300:
                done.append(row.pk)
                continue
            problem = (str(outcome.error) if outcome.error is not None
                       else f"answered {response.status_code}")
            if row.attempts >= len(schedule):
                logger.warning("status callback of %s to %s given up: %s", row.event_id,
                               row.url, problem)
                done.append(row.pk)
                continue
            row.next_retry_at = now + timedelta(seconds=schedule[row.attempts])
            row.attempts += 1
            row.last_error = problem[:500]
            retry.append(row)
        if done:
            CallbackDelivery.objects.dangerously_unscoped().filter(pk__in=done).delete()
        if retry:
            CallbackDelivery.objects.dangerously_unscoped().bulk_update(
                retry, ["claim_token", "next_retry_at", "attempts", "last_error", "updated_at"])


SOURCE = CallbackSource()


def callbacks_deliver_due() -> int:
    """Send every due callback (the drain and its sweep); the number attempted."""
    from platform_core.webhooks import engine

    return engine.run(SOURCE)
