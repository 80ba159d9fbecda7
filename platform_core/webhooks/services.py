"""Writes of the webhooks family: endpoints, the fan-out, attempts, retries and replays.

Endpoint changes are atomic, audited and reported as events. Deliveries move as
Document 1, 3.1 and 0-conventions.md section 4 say:

- The bus fan-out (`deliveries_create_for_event`) creates one delivery per subscribed,
  enabled endpoint, unique on (endpoint, event), already claimed by a fresh token, and
  queues `deliver_webhook` after commit.
- The beat job (`deliveries_dispatch_due`) claims pending deliveries that are due
  (`next_retry_at <= now`) with SELECT ... FOR UPDATE SKIP LOCKED, giving each claim a
  lease (`next_retry_at = now + lease`): a worker killed in the middle of an attempt leaves
  the delivery pending, and it is due again when the lease ends.
- `delivery_attempt` sends one signed POST through the hardened client and records it:
  2xx succeeds; anything else waits for the next slot of the retry schedule (with jitter,
  never before the receiver's Retry-After); after the last slot the delivery is `failed`,
  enters the dead-letter queue and `webhook.delivery.exhausted` is emitted. A 410 Gone
  fails the delivery at once and disables the endpoint (WEBHOOK_DISABLE_ON_GONE); an
  endpoint that has been failing without a single success for WEBHOOK_DISABLE_AFTER_SECONDS
  is disabled; both emit `webhook.endpoint.disabled`. Pending deliveries of a disabled
  endpoint wait; re-enabling it resumes them.
- Retry (failed -> pending, `next_retry_at = now`, payload unchanged: one more attempt) and
  replay (a new delivery of the same type and payload under a fresh event id).
"""

from __future__ import annotations

import codecs
import json
import logging
import random
import secrets
import time
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal
from platform_core.ids import new_id
from platform_core.net import http, ssrf

from . import conf, signing
from . import headers as header_rules
from .models import (
    DeliveryStatus,
    DisabledReason,
    WebhookDelivery,
    WebhookDeliveryAttempt,
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
BODY_KEPT_BYTES = 500


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


def _disable_endpoint(endpoint_id: str, organization, *, reason: str, now: datetime,
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


def _enqueue(claims: list[tuple[str, str]]) -> None:
    from .tasks import deliver_webhook

    for delivery_id, token in claims:
        try:
            deliver_webhook.delay(delivery_id, token)
        except Exception:  # the broker is down: the lease ends and the beat job re-claims it
            logger.exception("could not enqueue webhook delivery %s", delivery_id)


def deliveries_create_for_event(event) -> list[WebhookDelivery]:
    """Bus fan-out handler: one delivery per subscribed enabled endpoint (idempotent)."""
    organization = event.organization
    endpoints = [
        e for e in WebhookEndpoint.objects.for_organization(organization)
        .filter(enabled=True).only("id", "events", "enabled", "organization_id")
        if _wants(e, event)
    ]
    if not endpoints:
        return []
    envelope = json.loads(json.dumps(event.envelope(), default=str))
    token = secrets.token_hex(8)
    lease_until = timezone.now() + timedelta(seconds=conf.lease_seconds())
    rows = [
        WebhookDelivery(
            organization=organization, endpoint_id=e.pk, event_id=event.pk,
            event_type=event.type, payload=envelope, status=DeliveryStatus.PENDING,
            next_retry_at=lease_until, claim_token=token,
        )
        for e in endpoints
    ]
    WebhookDelivery.objects.for_organization(organization).bulk_create(rows, ignore_conflicts=True)
    claims = [(row.pk, token) for row in rows]
    transaction.on_commit(lambda: _enqueue(claims))
    return rows


def deliveries_dispatch_due(*, max_batches: int = 20) -> int:
    """Beat job: claim due pending deliveries (SKIP LOCKED) and queue their attempts."""
    total = 0
    batch = conf.dispatch_batch()
    for _ in range(max_batches):
        now = timezone.now()
        token = secrets.token_hex(8)
        with transaction.atomic():
            ids = list(
                WebhookDelivery.objects.dangerously_unscoped()
                .select_for_update(skip_locked=True, of=("self",))
                .filter(status=DeliveryStatus.PENDING, next_retry_at__lte=now,
                        endpoint__enabled=True)
                .order_by("next_retry_at")
                .values_list("pk", flat=True)[:batch]
            )
            if ids:
                WebhookDelivery.objects.dangerously_unscoped().filter(pk__in=ids).update(
                    claim_token=token,
                    next_retry_at=now + timedelta(seconds=conf.lease_seconds()),
                )
        _enqueue([(pk, token) for pk in ids])
        total += len(ids)
        if len(ids) < batch:
            break
    return total


# --- One attempt -----------------------------------------------------------------------------


def _body_text(body: bytes) -> str:
    """The first 500 bytes as text: no truncation marker, a cut character dropped."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return decoder.decode(body[:BODY_KEPT_BYTES], final=False).replace("\x00", "")


def _retry_after_seconds(value: str | None, now: datetime) -> float | None:
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


def delivery_attempt(*, delivery_id: str, claim_token: str) -> str | None:
    """Make one attempt of a claimed delivery; returns its outcome (None: not ours)."""
    now = timezone.now()
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.dangerously_unscoped()
            .select_for_update(skip_locked=True, of=("self",))
            .select_related("endpoint", "organization")
            .filter(pk=delivery_id, status=DeliveryStatus.PENDING, claim_token=claim_token)
            .first()
        )
        if delivery is None:  # done, re-claimed by someone else, or being attempted now
            return None
        endpoint = delivery.endpoint
        if not endpoint.enabled:
            # Release it; the beat job resumes it once the endpoint is enabled again.
            delivery.claim_token = ""
            delivery.next_retry_at = now
            delivery.save(update_fields=["claim_token", "next_retry_at", "updated_at"])
            return "waiting"
        # Take the claim over with a token of this attempt (a duplicate of the task message
        # then finds nothing to do) and refresh the lease for the duration of the attempt.
        claim_token = secrets.token_hex(8)
        delivery.claim_token = claim_token
        delivery.next_retry_at = now + timedelta(seconds=conf.lease_seconds())
        delivery.save(update_fields=["claim_token", "next_retry_at", "updated_at"])

    body, headers = build_request(delivery, endpoint, int(time.time()))
    response: http.OutboundResponse | None = None
    error: http.OutboundError | None = None
    try:
        response = http.post(endpoint.url, content=body, headers=headers,
                             timeout=conf.timeout_seconds())
    except http.OutboundError as exc:
        error = exc
    return _record_attempt(delivery, claim_token, response, error)


def _record_attempt(delivery: WebhookDelivery, claim_token: str,
                    response: http.OutboundResponse | None,
                    error: http.OutboundError | None) -> str | None:
    organization = delivery.organization
    now = timezone.now()
    with transaction.atomic():
        current = (
            WebhookDelivery.objects.for_organization(organization).select_for_update()
            .filter(pk=delivery.pk, status=DeliveryStatus.PENDING, claim_token=claim_token)
            .first()
        )
        if current is None:  # the lease ran out and another worker owns it now
            return None
        number = current.attempts + 1
        sent = response.request_headers if response is not None else error.request_headers
        status_code = response.status_code if response is not None else None
        current.attempts = number
        current.last_attempt_at = now
        current.request_headers = header_rules.redact(sent)
        current.response_status = status_code
        current.response_headers = (header_rules.response_headers(response.headers)
                                    if response is not None else None)
        current.last_response_body = _body_text(response.body) if response is not None else ""
        current.last_error = "" if error is None else str(error)[:500]
        current.duration_ms = response.elapsed_ms if response is not None else error.elapsed_ms
        current.claim_token = ""

        succeeded = status_code is not None and 200 <= status_code < 300
        gone = status_code == 410 and conf.disable_on_gone()
        if succeeded:
            outcome = "succeeded"
            current.status = DeliveryStatus.SUCCEEDED
            current.succeeded_at = now
            current.next_retry_at = None
        else:
            retry_after = (_retry_after_seconds(response.header("Retry-After"), now)
                           if response is not None else None)
            delay = None if gone else next_retry_delay(number, retry_after)
            if delay is None:
                outcome = "failed"
                current.status = DeliveryStatus.FAILED
                current.failed_at = now
                current.dead_lettered_at = now
                current.next_retry_at = None
            else:
                outcome = "retrying"
                current.next_retry_at = now + timedelta(seconds=delay)
        current.save()
        WebhookDeliveryAttempt.objects.for_organization(organization).create(
            organization=organization, delivery=current, number=number, attempted_at=now,
            request_headers=current.request_headers, response_status=status_code,
            response_headers=current.response_headers,
            response_body=current.last_response_body, error=current.last_error,
            duration_ms=current.duration_ms, outcome=outcome,
        )
        _update_breaker(current, organization, succeeded=succeeded, gone=gone, now=now)
        if outcome == "failed" and not gone and current.event_type != EVENT_DELIVERY_EXHAUSTED:
            # Not for deliveries of an exhausted event itself: no chains of failures.
            _emit(organization, EVENT_DELIVERY_EXHAUSTED, {
                "delivery_id": current.pk, "endpoint_id": current.endpoint_id,
                "event_id": current.event_id, "event_type": current.event_type,
                "attempts": number, "last_response_status": status_code,
                "last_error": current.last_error or None,
            })
    return outcome


def _update_breaker(delivery: WebhookDelivery, organization, *, succeeded: bool, gone: bool,
                    now: datetime) -> None:
    endpoints = WebhookEndpoint.objects.for_organization(organization).filter(
        pk=delivery.endpoint_id)
    if succeeded:
        # Written only when something changes, so a busy endpoint's row stays cool.
        endpoints.filter(
            Q(failing_since__isnull=False) | Q(last_success_at__isnull=True)
            | Q(last_success_at__lt=now - timedelta(seconds=60))
        ).update(failing_since=None, last_success_at=now)
        return
    endpoints.filter(failing_since__isnull=True).update(failing_since=now)
    endpoints.filter(Q(last_failure_at__isnull=True)
                     | Q(last_failure_at__lt=now - timedelta(seconds=60))).update(
        last_failure_at=now)
    if gone:
        _disable_endpoint(delivery.endpoint_id, organization, reason=DisabledReason.GONE,
                          now=now)
        return
    period = conf.disable_after_seconds()
    if period > 0:
        _disable_endpoint(delivery.endpoint_id, organization, reason=DisabledReason.FAILING,
                          now=now, only_if_failing_since=now - timedelta(seconds=period))


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
    token = secrets.token_hex(8)
    with transaction.atomic():
        replay = WebhookDelivery.objects.for_organization(delivery.organization).create(
            organization=delivery.organization, endpoint_id=delivery.endpoint_id,
            event_id=event_id, event_type=delivery.event_type,
            payload={**delivery.payload, "id": event_id}, status=DeliveryStatus.PENDING,
            next_retry_at=now + timedelta(seconds=conf.lease_seconds()), claim_token=token,
            replay_of=delivery,
        )
        audit_record(action="webhook.delivery.replayed", organization=delivery.organization,
                     principal=principal, target=delivery, request=request,
                     metadata={"replay_delivery_id": replay.pk, "replay_event_id": event_id})
        transaction.on_commit(lambda: _enqueue([(replay.pk, token)]))
    return replay
