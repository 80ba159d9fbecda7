"""The send journal: what a send batch did at the provider before the database knows it.

A batch claims its messages (`dispatched_at`, committed), calls the provider for each and
writes every answer back in one transaction. A worker killed in between leaves claimed
messages whose outcome the database does not hold; sending them again could deliver them
twice. So around each provider call the batch writes, to the shared cache (Redis):

    messaging:sendcall:<message id> = "started"         just before the call
                                    = {status, provider_message_id, error...}   after it

(the answer of one call and the start of the next in one round trip). Once a claim is older
than MESSAGING_DISPATCH_LEASE_SECONDS the timed drain settles it from here
(messaging/timed.py): an answer is applied as if the batch had written it; "started" means
the provider may have acted, so the message fails `DISPATCH_INTERRUPTED` (at most one per
call in flight: a pool's width); nothing means the provider was never called, so the
message is released and sent by a later batch. Without a shared cache (the embedded
default) the journal dies with its process: a stale claim then always fails, as before.
Entries are deleted once the batch is written, and expire after a day otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.cache import cache

from platform_core.shared_cache import is_shared

from ..providers.base import SendResult

STARTED = "started"
TTL_SECONDS = 24 * 3600


def _key(message_id: str) -> str:
    return f"messaging:sendcall:{message_id}"


def answer(result: SendResult) -> dict[str, Any]:
    return {"status": result.status, "provider_message_id": result.provider_message_id,
            "error_code": result.error_code, "error_message": result.error_message}


def record(*, answered: tuple[str, dict[str, Any]] | None = None,
           starting: str | None = None) -> None:
    """Write the answer of the call that just ended and/or the start of the next one."""
    entries = {}
    if answered is not None:
        entries[_key(answered[0])] = answered[1]
    if starting is not None:
        entries[_key(starting)] = STARTED
    if entries:
        cache.set_many(entries, timeout=TTL_SECONDS)


def read(message_ids: Iterable[str]) -> dict[str, Any]:
    """What the journal holds for `message_ids`: "started" or an answer dict, by id."""
    ids = list(message_ids)
    if not ids or not is_shared():
        return {}
    found = cache.get_many([_key(pk) for pk in ids])
    return {pk: found[_key(pk)] for pk in ids if _key(pk) in found}


def trustworthy() -> bool:
    """Whether a missing entry proves the provider was never called (a shared journal)."""
    return is_shared()


def forget(message_ids: Iterable[str]) -> None:
    keys = [_key(pk) for pk in message_ids]
    if keys:
        cache.delete_many(keys)
