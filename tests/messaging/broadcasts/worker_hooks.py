"""Imported by the test workers (CELERY_IMPORTS in worker_settings.py): every call of the
sandbox provider's `send` is appended to a Redis list, so the test can prove that no
message reached the provider twice; and every task goes to the run's own queue instead of
its family's (config/queues.py names fixed queues a concurrent run would share)."""

import os

import redis

from messaging.providers.sandbox import SandboxProvider

SEND_LOG = os.environ.get("BROADCAST_TEST_SEND_LOG", "")

if SEND_LOG:
    _client = redis.Redis.from_url(os.environ["CELERY_BROKER_URL"])
    _send = SandboxProvider.send

    def _logged_send(self, message, account):
        _client.rpush(SEND_LOG, message.pk)
        return _send(self, message, account)

    SandboxProvider.send = _logged_send

TEST_QUEUE = os.environ.get("BROADCAST_TEST_QUEUE", "")

if TEST_QUEUE:
    from config.celery import app

    # CELERY_IMPORTS load after the tasks were discovered, before any is published: the
    # queue a task names in its decorator is read on its first publication.
    for _task in app.tasks.values():
        _task.queue = TEST_QUEUE
