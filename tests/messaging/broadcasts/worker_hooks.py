"""Imported by the test workers (CELERY_IMPORTS in worker_settings.py): every call of the
sandbox provider's `send` is appended to a Redis list, so the test can prove that no
message reached the provider twice."""

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
