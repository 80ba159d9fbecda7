"""Writes of the webhooks family: endpoints, the fan-out, retries and replays.

Endpoint changes are atomic, audited and reported as events. Deliveries move as
Document 1, 3.1 and 0-conventions.md section 4 say:

- The bus fan-out (`deliveries_create_for_events`, a batch of events at a time) creates
  one delivery per subscribed, enabled endpoint, unique on (endpoint, event), due now, in
  one INSERT, and kicks the delivery drain after commit (`DRAIN`).
- The drain (engine.py over delivery.py's source; task `webhooks.drain` on the `webhooks`
  queue, and the beat sweep `deliveries_dispatch_due`) claims due deliveries in batches
  under a lease, sends them concurrently with a per-endpoint cap, and records the attempts
  in bulk: 2xx succeeds; anything else waits for the next slot of the retry schedule (with
  jitter, never before the receiver's Retry-After); after the last slot the delivery is
  `failed`, enters the dead-letter queue and `webhook.delivery.exhausted` is emitted. A
  410 Gone fails the delivery at once and disables the endpoint (WEBHOOK_DISABLE_ON_GONE);
  an endpoint that has been failing without a single success for
  WEBHOOK_DISABLE_AFTER_SECONDS is disabled; both emit `webhook.endpoint.disabled`.
  Pending deliveries of a disabled endpoint wait; re-enabling it resumes them.
- Retry (failed -> pending, `next_retry_at = now`, payload unchanged: one more attempt on
  the next sweep) and replay (a new delivery of the same type and payload under a fresh
  event id, sent at once).
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.drains import DrainSignal
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal
from platform_core.ids import new_id
from platform_core.net import ssrf

from . import conf, signing
from . import headers as header_rules
from .models import (
    DeliveryStatus,
    DisabledReason,
    WebhookDelivery,
    WebhookEndpoint,
)

logger = logging.getLogger("platform_core.webhooks")

EVENT_DELIVERY_EXHAUSTED = "webhook.delivery.exhausted"
EVENT_ENDPOINT_DISABLED = "webhook.endpoint.disabled"
EVENT_ENDPOINT_CREATED = "webhook.endpoint.created"
EVENT_ENDPOINT_UPDATED = "webhook.endpoint.updated"
EVENT_ENDPOINT_DELETED = "webhook.endpoint.deleted"
# Operational events about an endpoint are never delivered to that same endpoint.
_ABOUT_AN_ENDPOINT = frozenset({EVENT_DELIVERY_EXHAUSTED, EVENT_ENDPOINT_DISABLED})


def _emit(organization, event_type: str, data: dict[str, Any]) -> None:
    from platform_core.events.bus import emit

    emit(organization=organization, type=event_type, data=data)


def _endpoint_event_data(endpoint: WebhookEndpoint) -> dict[str, Any]:
    return {"endpoint_id": endpoint.pk, "url": endpoint.url, "events": endpoint.events,
            "enabled": endpoint.enabled}


# --- Endpoints ---------------------------------------------------------------------------


def validate_url(url: str) -> str:
    """Refuse anything but a public http(s) target (422) unless private targets are allowed."""
    if len(url) > 2048:
        raise validation_error("url", "The URL is longer than 2048 characters.")
    try:
        ssrf.check_url(url)
    except ssrf.UnsafeTarget as exc:
        raise validation_error("url", f"The URL is not an allowed webhook target: {exc}.") from None
    return url


def endpoint_create(
    *,
    organization,
    url: str,
    events: list[str],
    description: str = "",
    enabled: bool = True,
    headers: dict[str, str] | None = None,
    principal: Principal | None = None,
    request=None,
) -> tuple[WebhookEndpoint, str]:
    """Register an endpoint; returns it and its signing secret (shown once)."""
    validate_url(url)
    secret = signing.generate_secret()
    with transaction.atomic():
        endpoint = WebhookEndpoint(
            organization=organization, url=url, events=events, description=description,
            enabled=enabled, secret=secret,
            disabled_reason="" if enabled else DisabledReason.MANUAL,
            disabled_at=None if enabled else timezone.now(),
        )
        endpoint.headers = headers or {}
        endpoint.save()
        audit_record(action="webhook.endpoint.created", organization=organization,
                     principal=principal, target=endpoint, request=request,
                     metadata={"url": url, "events": events})
        _emit(organization, EVENT_ENDPOINT_CREATED, _endpoint_event_data(endpoint))
    return endpoint, secret


def endpoint_update(*, endpoint: WebhookEndpoint, principal: Principal | None = None,
                    request=None, **fields: Any) -> WebhookEndpoint:
    """Merge-update url, events, description, enabled, headers.

    A custom header sent back as `<redacted>` keeps its stored value. Enabling an endpoint
    clears its breaker state, and its waiting deliveries resume.
    """
    if "url" in fields:
        validate_url(fields["url"])
    with transaction.atomic():
        locked = WebhookEndpoint.objects.for_organization(endpoint.organization) \
            .select_for_update().get(pk=endpoint.pk)
        changed: list[str] = []
        if "headers" in fields:
            try:
                new_headers = header_rules.merge_keeping_redacted(fields.pop("headers") or {},
                                                                  locked.headers)
            except ValueError as exc:
                raise validation_error("headers", str(exc)) from None
            if new_headers != locked.headers:
                locked.headers = new_headers
                changed.append("headers")
        for name in ("url", "events", "description"):
            if name in fields and getattr(locked, name) != fields[name]:
                setattr(locked, name, fields[name])
                changed.append(name)
        if "enabled" in fields and fields["enabled"] != locked.enabled:
            locked.enabled = fields["enabled"]
            changed.append("enabled")
            if locked.enabled:
                locked.disabled_reason = ""
                locked.disabled_at = None
                locked.failing_since = None
            else:
                locked.disabled_reason = DisabledReason.MANUAL
                locked.disabled_at = timezone.now()
        if changed:
            locked.save()
            audit_record(action="webhook.endpoint.updated", organization=locked.organization,
                         principal=principal, target=locked, request=request,
                         metadata={"fields": sorted(changed)})
            _emit(locked.organization, EVENT_ENDPOINT_UPDATED,
                  {**_endpoint_event_data(locked), "changed": sorted(changed)})
    return locked


def endpoint_delete(*, endpoint: WebhookEndpoint, principal: Principal | None = None,
                    request=None) -> None:
    """Remove the endpoint with its deliveries (pending ones are dropped)."""
    with transaction.atomic():
        data = _endpoint_event_data(endpoint)
        audit_record(action="webhook.endpoint.deleted", organization=endpoint.organization,
                     principal=principal, target=endpoint, request=request,
                     metadata={"url": endpoint.url})
        endpoint.delete()
        _emit(endpoint.organization, EVENT_ENDPOINT_DELETED, data)


def endpoint_rotate_secret(*, endpoint: WebhookEndpoint, principal: Principal | None = None,
                           request=None) -> tuple[WebhookEndpoint, str]:
    """Replace the signing secret at once; every later attempt is signed with the new one."""
    secret = signing.generate_secret()
    with transaction.atomic():
        WebhookEndpoint.objects.for_organization(endpoint.organization).filter(
            pk=endpoint.pk).update(secret=secret, updated_at=timezone.now())
        audit_record(action="webhook.endpoint.secret_rotated",
                     organization=endpoint.organization, principal=principal,
                     target=endpoint, request=request)
    endpoint.refresh_from_db()
    return endpoint, secret


def disable_endpoint(endpoint_id: str, organization, *, reason: str, now: datetime,
                      only_if_failing_since: datetime | None = None) -> bool:
    """Disable an enabled endpoint (conditional update) and emit the event. True if done."""
    query = WebhookEndpoint.objects.for_organization(organization).filter(
        pk=endpoint_id, enabled=True)
    if only_if_failing_since is not None:
        query = query.filter(failing_since__lte=only_if_failing_since)
    if not query.update(enabled=False, disabled_reason=reason, disabled_at=now, updated_at=now):
        return False
    endpoint = WebhookEndpoint.objects.for_organization(organization).get(pk=endpoint_id)
    audit_record(action="webhook.endpoint.disabled", organization=organization,
                 actor_type="system", target=endpoint, metadata={"reason": reason})
    _emit(organization, EVENT_ENDPOINT_DISABLED, {
        **_endpoint_event_data(endpoint), "reason": reason,
        "failing_since": endpoint.failing_since, "disabled_at": now,
    })
    logger.warning("webhook endpoint %s disabled (%s)", endpoint_id, reason)
    return True


# --- The fan-out ---------------------------------------------------------------------------


def _wants(endpoint: WebhookEndpoint, event) -> bool:
    if not endpoint.subscribes_to(event.type):
        return False
    return not (event.type in _ABOUT_AN_ENDPOINT
                and (event.data or {}).get("endpoint_id") == endpoint.pk)


def _drain_task():
    from .tasks import drain_deliveries

    return drain_deliveries


# Kicked after a commit that made deliveries due now (the fan-out, a replay).
DRAIN = DrainSignal("webhooks", _drain_task)


def deliveries_create_for_events(events: Sequence) -> list[WebhookDelivery]:
    """Bus fan-out handler (batch form): one delivery per (event, subscribed enabled
    endpoint), due now, in one INSERT for the whole batch (idempotent: unique on endpoint
    and event). One query for the endpoints of every organization of the batch."""
    org_ids = {event.organization_id for event in events}
    by_org: dict[str, list[WebhookEndpoint]] = {}
    for endpoint in (WebhookEndpoint.objects.dangerously_unscoped()
                     .filter(organization_id__in=org_ids, enabled=True)
                     .only("id", "events", "enabled", "organization_id")):
        by_org.setdefault(endpoint.organization_id, []).append(endpoint)
    if not by_org:
        return []
    now = timezone.now()
    rows: list[WebhookDelivery] = []
    for event in events:
        endpoints = [e for e in by_org.get(event.organization_id, ()) if _wants(e, event)]
        if not endpoints:
            continue
        envelope = json.loads(json.dumps(event.envelope(), default=str))
        rows.extend(
            WebhookDelivery(
                organization_id=event.organization_id, endpoint_id=e.pk, event_id=event.pk,
                event_type=event.type, payload=envelope, status=DeliveryStatus.PENDING,
                next_retry_at=now,
            )
            for e in endpoints
        )
    if rows:
        WebhookDelivery.objects.dangerously_unscoped().bulk_create(rows, ignore_conflicts=True)
        transaction.on_commit(DRAIN.kick)
    return rows


def deliveries_create_for_event(event) -> list[WebhookDelivery]:
    """The same for one event."""
    return deliveries_create_for_events([event])


def deliveries_dispatch_due() -> int:
    """Beat sweep: deliver every pending delivery whose time has come (retries, expired
    leases of a killed worker, resumed endpoints); the number attempted."""
    from . import delivery, engine

    return engine.run(delivery.SOURCE)


# --- The retry policy -----------------------------------------------------------------------


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max((when - now).total_seconds(), 0.0)


def next_retry_delay(attempt_number: int, retry_after: float | None = None) -> float | None:
    """Seconds until the next attempt after failed attempt `attempt_number`; None: no more."""
    schedule = conf.retry_schedule()
    if attempt_number > len(schedule):
        return None
    base = schedule[attempt_number - 1]
    jitter = conf.retry_jitter()
    delay = base * (1 + random.uniform(-jitter, jitter))  # noqa: S311 - not cryptographic
    if retry_after is not None:
        delay = max(delay, min(retry_after, conf.retry_after_max_seconds()))
    return delay


# --- Retry and replay ----------------------------------------------------------------------


def delivery_retry(*, delivery: WebhookDelivery, principal: Principal | None = None,
                   request=None) -> WebhookDelivery:
    """failed -> pending, next_retry_at = now, payload unchanged (Document 1, 3.1)."""
    now = timezone.now()
    with transaction.atomic():
        updated = WebhookDelivery.objects.for_organization(delivery.organization).filter(
            pk=delivery.pk, status=DeliveryStatus.FAILED,
        ).update(status=DeliveryStatus.PENDING, next_retry_at=now, claim_token="",
                 dead_lettered_at=None, updated_at=now)
        if not updated:
            raise APIError("CONFLICT", "Only a failed delivery can be retried.",
                           details={"status": delivery.status})
        audit_record(action="webhook.delivery.retried", organization=delivery.organization,
                     principal=principal, target=delivery, request=request)
    delivery.refresh_from_db()
    return delivery


def delivery_replay(*, delivery: WebhookDelivery, principal: Principal | None = None,
                    request=None) -> WebhookDelivery:
    """A new delivery of the same type and payload under a fresh event id (3.1)."""
    if delivery.status != DeliveryStatus.FAILED:
        raise APIError("CONFLICT", "Only a failed delivery can be replayed.",
                       details={"status": delivery.status})
    now = timezone.now()
    failed_at = delivery.failed_at or delivery.created_at
    if failed_at < now - timedelta(seconds=conf.replay_window_seconds()):
        raise APIError("REPLAY_WINDOW_EXPIRED", details={"failed_at": failed_at})
    event_id = new_id("evt")
    with transaction.atomic():
        replay = WebhookDelivery.objects.for_organization(delivery.organization).create(
            organization=delivery.organization, endpoint_id=delivery.endpoint_id,
            event_id=event_id, event_type=delivery.event_type,
            payload={**delivery.payload, "id": event_id}, status=DeliveryStatus.PENDING,
            next_retry_at=now,
            replay_of=delivery,
        )
        audit_record(action="webhook.delivery.replayed", organization=delivery.organization,
                     principal=principal, target=delivery, request=request,
                     metadata={"replay_delivery_id": replay.pk, "replay_event_id": event_id})
        transaction.on_commit(DRAIN.kick)
    return replay
