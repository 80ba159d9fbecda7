"""From accepted to sent: the messages table is the outbox, a batch dispatcher drains it.

`message_send` only inserts the message (`queued`, or `scheduled` with `send_at`) with
`announced_at` unset: one statement, no broker round trip in the request. After commit
it calls `kick()`. The dispatcher (`dispatch_accepted`, task `messaging.dispatch_accepted`
on the `sends` queue) runs the send drain (messaging/sending/drain.py) until it finds
nothing: each claim announces the accepted messages (`message.queued` /
`message.scheduled`, with their status callbacks) and claims the queued ones, then the
batch is sent and written back. A status change that reaches a message before the
dispatcher does announces it first (`status.StatusBatch.announce`), so the events of a
message always start with its acceptance.

The batch size adapts to the backlog: a run claims 1 message first, then four times more
after each full claim (up to MESSAGING_SEND_BATCH_MAX, 256): an idle system sends a lone
message at once, a backlog goes out hundreds at a time. After each full claim the run
kicks once more, so another worker process (if one is free) joins the drain.

`kick()` is a coalesced drain signal (platform_core/drains.py): it costs the request a
`threading.Event.set()`, and a deployment has at most one dispatcher queued at a time. The
dispatcher clears the signal's flag before every claim and stops only after a claim that
was not full (it took every row it could see), so a message committed before a kick that
found the flag set is always claimed by the dispatcher that set it. A kick lost with a
dying process is made up by the timed drain (messaging/timed.py, beat), which runs the
dispatcher too.
"""

from __future__ import annotations

from django.conf import settings

from platform_core.drains import DrainSignal


def _task():
    from .tasks import dispatch_accepted

    return dispatch_accepted


# The flag outlives a dispatcher lost before it ran by a minute at worst; kicks of the next
# 20 ms ride along with one check of it.
SIGNAL = DrainSignal("messaging-dispatch", _task, flag_ttl=60, coalesce=0.02)
PENDING_FLAG = SIGNAL.flag


def kick() -> None:
    """Make sure a dispatcher will claim what was committed before this call."""
    SIGNAL.kick()


def dispatch_accepted(*, batch: int | None = None) -> int:
    """Announce and send accepted messages until none is left; the number handled."""
    from .sending import drain

    largest = batch or drain.batch_max()
    size, total = 1, 0
    while True:
        SIGNAL.clear()  # before the claim: a later kick queues a new run
        claimed = drain.claim(size)
        if not claimed.handled:
            return total
        drain.send(claimed.to_send)
        total += claimed.handled
        if claimed.handled < size:
            return total  # it took every claimable row: the backlog is drained
        size = min(size * 4, largest)
        if not getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
            SIGNAL.wake()  # a backlog: another worker may join
