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

They go through the hardened client (`platform_core.net.http`): SSRF-checked at send time
(DNS resolved now, connection pinned to the checked address, no redirects, bounded
timeout). They are not webhook-endpoint deliveries: there is no delivery record; a
non-2xx answer or a transport error is retried by the task a few times
(`CALLBACK_RETRY_SCHEDULE`, default 10 s, 60 s, 300 s), then dropped with a log line.
Durable, recorded delivery is what webhook endpoints are for.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence

from django.conf import settings
from django.db import transaction

from platform_core.events.models import Event
from platform_core.net import http
from platform_core.webhooks import conf as webhook_conf
from platform_core.webhooks import signing

logger = logging.getLogger("messaging.callbacks")

DEFAULT_RETRY_SCHEDULE = (10, 60, 300)


def retry_schedule() -> list[int]:
    value = getattr(settings, "CALLBACK_RETRY_SCHEDULE", None)
    if isinstance(value, str):
        value = [int(v) for v in value.split(",") if v.strip()]
    return [int(v) for v in value] if value is not None else list(DEFAULT_RETRY_SCHEDULE)


class CallbackFailed(Exception):
    pass


def callbacks_enqueue(items: Sequence[tuple[str, str, str]]) -> None:
    """Deliver callbacks, `(organization_id, event_id, url)` each, once the current
    transaction commits (nothing leaves for a change that rolls back)."""
    if not items:
        return
    pending = list(items)

    def enqueue() -> None:
        from .tasks import deliver_callback

        for organization_id, event_id, url in pending:
            try:
                deliver_callback.delay(organization_id, event_id, url)
            except Exception:
                logger.exception("could not queue the callback of event %s", event_id)

    transaction.on_commit(enqueue)


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


def callback_deliver(*, organization_id: str, event_id: str, url: str) -> int | None:
    """POST the event to `url`; the answer's status, None when the event is gone.
    Raises CallbackFailed on a transport error or a non-2xx answer."""
    from platform_core.tenancy.context import tenant_context

    from .services import callback_secret_get

    event = (Event.objects.dangerously_unscoped().select_related("organization")
             .filter(pk=event_id, organization_id=organization_id).first())
    if event is None:
        return None
    with tenant_context(event.organization):
        secret = callback_secret_get(event.organization).secret
    body, headers = build_request(event, secret, int(time.time()))
    try:
        response = http.post(url, content=body, headers=headers,
                             timeout=webhook_conf.timeout_seconds())
    except http.OutboundError as exc:
        raise CallbackFailed(f"{exc.kind}: {exc}") from exc
    if not 200 <= response.status_code < 300:
        raise CallbackFailed(f"answered {response.status_code}")
    return response.status_code
