"""Writes of the messaging family, one import for the other apps (issue 6; messaging
contract; 0-conventions.md section 6). Each stage of a message's life has its own module:

- acceptance: `sending/accept.py` (`message_send`, `message_cancel`), with the sender and
  opt-outs in `sending/senders.py`, templates and short links in `sending/content.py`
  and the one INSERT in `acceptance.py`;
- announce and send: `dispatcher.py` (the kick, the drain loop), `sending/drain.py` (claim,
  provider calls, write-back in batches), `sending/journal.py` (what a killed batch did);
- the status lifecycle: `status.py` (`message_apply_status`, `StatusBatch`);
- timed work (scheduled sends, retries, sandbox receipts, fallback timers, a killed
  worker's claims): `timed.py`; fallback chains: `fallback.py`;
- received messages: `inbound/services.py`; messaging services: `messaging_services.py`;
  the callback signing secret: `callback_secret.py`; broadcasts: `broadcasts/`.
"""

from __future__ import annotations

from .callback_secret import callback_secret_get, callback_secret_rotate
from .inbound.services import inbound_message_create, normalized_block, service_for_address
from .messaging_services import (
    messaging_service_create,
    messaging_service_delete,
    messaging_service_update,
)
from .sending import drain
from .sending.accept import message_cancel, message_send
from .sending.content import short_link_base, shorten_body_links
from .sending.drain import SEND_RETRY_DELAYS
from .sending.senders import channel_family, opt_out_for, resolve_sender, sticky_sender_for
from .status import (
    MESSAGE_FAILED,
    STATUS_ALIASES,
    event_type_for,
    message_apply_status,
    message_event,
)
from .timed import (
    DISPATCH_LEASE_SECONDS,
    INTERRUPTED_ERROR_MESSAGE,
    dispatch_lease_seconds,
    messages_dispatch_due,
)


def message_dispatch(*, message_id: str, final_attempt: bool = True) -> str:
    """Claim and send one queued message now (outside the drain): `skipped` when it is not
    claimable (not queued, already claimed, unknown), else `sent`, `queued` (the provider
    will report), `failed` or `retry` (a transient error; due again at `retry_at`)."""
    return drain.send_one(message_id, final=final_attempt)


__all__ = [
    "DISPATCH_LEASE_SECONDS", "INTERRUPTED_ERROR_MESSAGE", "MESSAGE_FAILED",
    "SEND_RETRY_DELAYS", "STATUS_ALIASES", "callback_secret_get", "callback_secret_rotate",
    "channel_family", "dispatch_lease_seconds", "event_type_for", "inbound_message_create",
    "message_apply_status", "message_cancel", "message_dispatch", "message_event",
    "message_send", "messages_dispatch_due", "messaging_service_create",
    "messaging_service_delete", "messaging_service_update", "normalized_block",
    "opt_out_for", "resolve_sender", "service_for_address", "short_link_base",
    "shorten_body_links", "sticky_sender_for",
]
