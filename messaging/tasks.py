"""Celery tasks of messaging. They take ids and call services.

- `messaging.send_message`: send one queued message (retried on transient provider errors).
- `messaging.sandbox_delivery_receipt`: the sandbox double's simulated carrier receipt.
- `messaging.deliver_callback`: the drain of owed status callbacks / inbound webhook
  POSTs (callbacks.py), on the `webhooks` queue; kicked after commit, swept by beat.
- `messaging.dispatch_accepted`: the batch dispatcher of accepted sends (kicked after each
  API send, see dispatcher.py).
- `messaging.dispatch_due` (beat, config/beat.py): due scheduled sends, stale queued
  messages, due no-receipt fallbacks.
"""

from __future__ import annotations

import logging

from celery import shared_task

from config import queues
from platform_core.tenancy.context import tenant_context

from . import callbacks, dispatcher, services
from .models import Message, MessageStatus

logger = logging.getLogger("messaging")

SEND_RETRY_DELAYS = (5, 30, 120, 600)


@shared_task(name="messaging.send_message", ignore_result=True, acks_late=True)
def send_message(message_id: str, attempt: int = 0) -> str:
    """Send one queued message. A transient provider error queues the next attempt (the
    claim is released meanwhile); after the last one the message fails."""
    final = attempt >= len(SEND_RETRY_DELAYS)
    outcome = services.message_dispatch(message_id=message_id, final_attempt=final)
    if outcome == "retry":
        send_message.apply_async((message_id, attempt + 1),
                                 countdown=SEND_RETRY_DELAYS[attempt])
    return outcome


@shared_task(name="messaging.sandbox_delivery_receipt", ignore_result=True)
def sandbox_delivery_receipt(message_id: str, provider_message_id: str | None = None) -> bool:
    """What a carrier's delivery receipt does in live mode: the message is delivered."""
    message = (Message.objects.dangerously_unscoped().select_related("organization")
               .filter(pk=message_id).first())
    if message is None:
        return False
    with tenant_context(message.organization):
        return services.message_apply_status(message=message, status=MessageStatus.DELIVERED,
                                             provider_message_id=provider_message_id)


@shared_task(name="messaging.deliver_callback", ignore_result=True, queue=queues.WEBHOOKS)
def deliver_callback() -> int:
    """The status-callback drain: send every due callback (callbacks.py), kicked after
    the commit that owes them and swept by beat for retries; the number attempted."""
    return callbacks.callbacks_deliver_due()


@shared_task(name="messaging.dispatch_accepted", ignore_result=True)
def dispatch_accepted() -> int:
    """Announce accepted messages and queue their sends (messaging/dispatcher.py)."""
    return dispatcher.dispatch_accepted()


@shared_task(name="messaging.dispatch_due", ignore_result=True)
def dispatch_due() -> dict[str, int]:
    return services.messages_dispatch_due()


# Broadcasts' tasks live with their family; importing them here registers them with the
# worker (Celery discovers `messaging.tasks`).
from .broadcasts import tasks as _broadcast_tasks  # noqa: E402,F401
