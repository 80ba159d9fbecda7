"""The outbound delivery engine: a table of due rows in, concurrent signed POSTs out.

Webhook deliveries (delivery.py) and status callbacks (messaging/callbacks.py) are both
a *source*: a table whose `pending` rows carry a due time (`next_retry_at`), a claim
token and a *key* (the endpoint, or the callback URL's origin). `run(source)` is the
drain of one source:

1. Claim. Which keys have due rows and how many of their rows are claimed right now is
   read with a skip scan over the pending index (one probe per key, whatever the
   backlog); each key gets room up to the per-key cap minus its claimed rows (so the cap
   holds across every worker, give or take two drains claiming at the same instant),
   handed out round-robin from a rotating start so no key starves, up to the free threads.
   One statement then locks the rows (`FOR UPDATE SKIP LOCKED` per key, oldest due first)
   and leases them (`claim_token`, `next_retry_at = now + lease`).
2. Send. The source loads the claimed rows and builds each request (a row it cannot build
   is recorded as a failed attempt; it never blocks the others); each goes out on a pool
   thread through the hardened client (platform_core/net/pool.py). A slow key holds only
   its own capped slots: the others keep being claimed and sent (no head-of-line blocking).
3. Record. Whatever finished is written back in bulk (`source.record`), as soon as it
   finishes, in one transaction; if that fails the rows are recorded one by one so one bad
   row never loses the batch.

The drain loops until a claim finds nothing and nothing is in flight, or for
`max_seconds`, after which it kicks a fresh drain and returns. A worker killed in the
middle leaves its rows leased: they are due again when the lease ends and the source's
sweep (beat) takes them over. A request never starts when its lease could end before the
timeout does, so a lease only ends on a dead worker (at least once, never twice on a
live one).
"""

from __future__ import annotations

import itertools
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from platform_core.drains import DrainSignal
from platform_core.net import http, pool

logger = logging.getLogger("platform_core.webhooks")

POLL_SECONDS = 0.05  # how long the drain waits for a request to finish before re-claiming
# After one request finishes, how long to wait for others in flight so that they are
# recorded (and their slots claimed again) together: a few statements for many rows.
LINGER_SECONDS = 0.01


@dataclass
class Outcome:
    response: http.OutboundResponse | None = None
    error: http.OutboundError | None = None
    released: bool = False  # not attempted: the claim is given back (disabled endpoint...)


@dataclass
class Job:
    """One claimed row on its way out."""

    id: str
    key: str
    token: str
    lease_deadline: float  # time.monotonic() when the lease ends
    url: str = ""
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 10.0
    row: Any = None
    outcome: Outcome | None = None  # decided without a request (a bad row, a release)

    def send(self) -> Outcome:
        if self.outcome is not None:
            return self.outcome
        if time.monotonic() + self.timeout > self.lease_deadline:
            return Outcome(released=True)  # could outlive its lease: someone else's now
        try:
            return Outcome(response=http.post(self.url, content=self.body,
                                              headers=self.headers, timeout=self.timeout))
        except http.OutboundError as exc:
            return Outcome(error=exc)


class Source:
    """What a table of outbound rows provides to the engine (see delivery.py)."""

    name: str
    table: str
    key_column: str
    key_join: str = ""  # SQL joined on `keys.k` to keep only keys that may be sent to
    signal: DrainSignal

    def cap(self) -> int:
        raise NotImplementedError

    def lease_seconds(self) -> float:
        raise NotImplementedError

    def prepare(self, ids: Sequence[str], token: str, lease_deadline: float) -> list[Job]:
        raise NotImplementedError

    def record(self, finished: list[tuple[Job, Outcome]]) -> None:
        raise NotImplementedError


# --- Claims ----------------------------------------------------------------------------

_cursor: dict[str, str] = {}


def keys_with_due_rows(source: Source, now) -> list[tuple[str, int]]:
    """(key, rows claimed now) for every key with due rows, by a skip scan of the pending
    index: one probe per key with pending rows, whatever the backlog."""
    t, k = source.table, source.key_column
    sql = f"""
        WITH RECURSIVE keys(k) AS (
            (SELECT {k} FROM {t} WHERE status = 'pending' ORDER BY {k} LIMIT 1)
            UNION ALL
            SELECT (SELECT p.{k} FROM {t} p WHERE p.status = 'pending' AND p.{k} > keys.k
                    ORDER BY p.{k} LIMIT 1)
            FROM keys WHERE keys.k IS NOT NULL
        )
        SELECT keys.k,
               (SELECT count(*) FROM {t} c WHERE c.{k} = keys.k AND c.status = 'pending'
                  AND c.claim_token <> '' AND c.next_retry_at > %s)
        FROM keys {source.key_join}
        WHERE keys.k IS NOT NULL AND EXISTS (
            SELECT 1 FROM {t} d WHERE d.{k} = keys.k AND d.status = 'pending'
              AND d.next_retry_at <= %s)
    """  # noqa: S608 - table and column names are the sources' constants
    with connection.cursor() as cursor:
        cursor.execute(sql, [now, now])
        return [(key, claimed) for key, claimed in cursor.fetchall()]


def share_room(source: Source, keys: list[tuple[str, int]], limit: int) -> dict[str, int]:
    """Rows to claim per key: up to the cap minus what is claimed, round-robin from the key
    after the one served last, `limit` in all."""
    cap = source.cap()
    room = {key: cap - claimed for key, claimed in sorted(keys) if claimed < cap}
    if not room or limit <= 0:
        return {}
    ordered = list(room)
    last = _cursor.get(source.name, "")
    start = next((i for i, key in enumerate(ordered) if key > last), 0)
    ordered = ordered[start:] + ordered[:start]
    given: dict[str, int] = {}
    for key in itertools.cycle(ordered):
        if limit <= 0 or not room:
            break
        if key not in room:
            continue
        given[key] = given.get(key, 0) + 1
        limit -= 1
        room[key] -= 1
        if not room[key]:
            del room[key]
            if not room:
                break
    if given:
        _cursor[source.name] = ordered[min(len(given), len(ordered)) - 1]
    return given


def claim(source: Source, limit: int) -> tuple[list[str], str]:
    """Lease up to `limit` due rows within each key's room; (ids, claim token)."""
    now = timezone.now()
    room = share_room(source, keys_with_due_rows(source, now), limit)
    if not room:
        return [], ""
    token = secrets.token_hex(8)
    lease = now + timedelta(seconds=source.lease_seconds())
    t, k = source.table, source.key_column
    sql = f"""
        WITH want(k, n) AS (SELECT * FROM unnest(%s::varchar[], %s::int[])),
        picked AS (
            SELECT p.id FROM want CROSS JOIN LATERAL (
                SELECT d.id FROM {t} d
                WHERE d.{k} = want.k AND d.status = 'pending' AND d.next_retry_at <= %s
                ORDER BY d.next_retry_at LIMIT want.n
                FOR UPDATE OF d SKIP LOCKED
            ) p
        )
        UPDATE {t} AS u SET claim_token = %s, next_retry_at = %s, updated_at = %s
        FROM picked WHERE u.id = picked.id
        RETURNING u.id
    """  # noqa: S608 - table and column names are the sources' constants
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [list(room), list(room.values()), now, token, lease, now])
        ids = [row[0] for row in cursor.fetchall()]
    return ids, token


# --- The drain -----------------------------------------------------------------------------


def _record(source: Source, finished: list[tuple[Job, Outcome]]) -> None:
    try:
        with transaction.atomic():
            source.record(finished)
        return
    except Exception:
        if len(finished) == 1:
            logger.exception("%s: recording %s failed; it is retried when its lease ends",
                             source.name, finished[0][0].id)
            return
        logger.exception("%s: recording a batch of %d failed; recording one by one",
                         source.name, len(finished))
    for item in finished:
        _record(source, [item])


def _as_outcome(result: Any) -> Outcome:
    if isinstance(result, Outcome):
        return result
    # send() raised something the client does not classify: a failed attempt all the same.
    return Outcome(error=http.OutboundError("internal_error", str(result) or type(result).__name__))


def run(source: Source, *, max_seconds: float = 30.0, poll: float = POLL_SECONDS) -> int:
    """Drain `source`: claim, send concurrently, record, until nothing is due and nothing
    is in flight (or `max_seconds`, then a fresh drain is kicked). The number of rows
    recorded (attempted or released)."""
    batch = pool.SendBatch()
    started = time.monotonic()
    total = 0
    accepting = True
    while True:
        claimed = 0
        accepting = time.monotonic() - started < max_seconds
        free = pool.free_slots()
        if accepting and free > 0:
            source.signal.clear()  # before the claim: a kick from now on queues a new drain
            ids, token = claim(source, free)
            if ids:
                lease_deadline = time.monotonic() + source.lease_seconds()
                for job in source.prepare(ids, token, lease_deadline):
                    batch.submit(job, job.send)
                claimed = len(ids)
        if not batch.in_flight and not claimed:
            break
        # A claim fills every room there is: the next one is worth making only once a
        # request has finished (or after `poll`, for rows that came due meanwhile).
        finished = batch.collect(poll, LINGER_SECONDS)
        if finished:
            _record(source, [(job, _as_outcome(result)) for job, result in finished])
            total += len(finished)
    if not accepting:
        source.signal.kick()
    return total
