"""Celery tasks of messaging. They take ids (or nothing: "drain") and call services.

- `messaging.dispatch_accepted` (queue `sends`): the send drain, kicked after each API send
  (messaging/dispatcher.py): claims, announces and sends accepted messages in batches.
- `messaging.dispatch_due` (queue `sends`; beat, config/beat.py, and woken for earlier due
  times by `timed.arm`): the timed drain, messaging/timed.py (scheduled sends, retries,
  sandbox receipts, no-receipt fallbacks, claims of a killed worker).
- `messaging.deliver_callback`: one status callback / inbound webhook POST, retried.
- `messaging.send_message` and `messaging.sandbox_delivery_receipt`: the per-message tasks
  of the previous release, kept so that those still in a broker at an upgrade do their
  work through the batch path; nothing queues them any more.
"""

from __future__ import annotations

import logging

from celery import shared_task

from config import queues

from . import callbacks, dispatcher, timed
from .models import Message, MessageStatus
from .status import message_apply_status

logger = logging.getLogger("messaging")


@shared_task(name="messaging.send_message", ignore_result=True, queue=queues.SENDS)
def send_message(message_id: str, attempt: int = 0) -> str:
    """(Previous release.) The message is in the table: let the send drain take it."""
    dispatcher.kick()
    return "kicked"


@shared_task(name="messaging.sandbox_delivery_receipt", ignore_result=True,
             queue=queues.SENDS)
def sandbox_delivery_receipt(message_id: str, provider_message_id: str | None = None) -> bool:
    """(Previous release.) The sandbox double's receipt: the message is delivered."""
    message = (Message.objects.dangerously_unscoped().select_related("organization")
               .filter(pk=message_id).first())
    if message is None:
        return False
    return message_apply_status(message=message, status=MessageStatus.DELIVERED,
                                provider_message_id=provider_message_id)


@shared_task(name="messaging.deliver_callback", ignore_result=True)
def deliver_callback(organization_id: str, event_id: str, url: str, attempt: int = 0
                     ) -> int | None:
    """One POST of a status callback / inbound webhook; failures queue the next attempt
    (`callbacks.retry_schedule()`), then the callback is dropped with a log line."""
    try:
        return callbacks.callback_deliver(organization_id=organization_id, event_id=event_id,
                                          url=url)
    except callbacks.CallbackFailed as exc:
        schedule = callbacks.retry_schedule()
        if attempt >= len(schedule):
            logger.warning("status callback of %s to %s given up: %s", event_id, url, exc)
            return None
        deliver_callback.apply_async((organization_id, event_id, url, attempt + 1),
                                     countdown=schedule[attempt])
        return None


@shared_task(name="messaging.dispatch_accepted", ignore_result=True, queue=queues.SENDS)
def dispatch_accepted() -> int:
    """Announce accepted messages and send them in batches (messaging/dispatcher.py)."""
    return dispatcher.dispatch_accepted()


@shared_task(name="messaging.dispatch_due", ignore_result=True, queue=queues.SENDS)
def dispatch_due() -> dict[str, int]:
    return timed.messages_dispatch_due()


# Broadcasts' tasks live with their family; importing them here registers them with the
# worker (Celery discovers `messaging.tasks`).
from .broadcasts import tasks as _broadcast_tasks  # noqa: E402,F401
