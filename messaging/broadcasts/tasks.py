"""Celery tasks of broadcasts (imported by messaging/tasks.py so the worker knows them).

- `messaging.broadcast_start`: snapshot the audience and start the runners.
- `messaging.broadcast_run`: one slice of batches; queues the next slice itself.
- `messaging.broadcasts_due` (beat, config/beat.py): due scheduled broadcasts, lost
  starts, stalled runners (a killed worker), canceled broadcasts' leftovers.
"""

from __future__ import annotations

from celery import shared_task

from config import queues

from . import services


@shared_task(name="messaging.broadcast_start", ignore_result=True, acks_late=True,
             queue=queues.DEFAULT)
def broadcast_start(broadcast_id: str) -> str:
    return services.broadcast_start(broadcast_id=broadcast_id)


@shared_task(name="messaging.broadcast_run", ignore_result=True, acks_late=True,
             queue=queues.DEFAULT)
def broadcast_run(broadcast_id: str) -> str:
    outcome = services.broadcast_run(broadcast_id=broadcast_id)
    if outcome == "continue":
        services.enqueue_runners(broadcast_id, 1)
    return outcome


@shared_task(name="messaging.broadcasts_due", ignore_result=True, queue=queues.DEFAULT)
def broadcasts_due() -> dict[str, int]:
    return services.broadcasts_due()
