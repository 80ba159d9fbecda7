"""Settings of the real Celery workers started by test_worker_kill.py.

The test settings run tasks eagerly; a real worker must not. Everything else is the test
settings, with the database, broker, queue and timings given by the test (environment).
Short timings make the recovery paths run within the test: the beat resumes a broadcast
whose runner stopped writing its heartbeat 5 s ago and settles send claims 5 s old that
stored no answer (from the send journal); the sandbox receipts are due 50 ms after the
send (timed work).
"""

import os

from config.settings.test import *  # noqa: F403

CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("BROADCAST_TEST_QUEUE", "celery")
CELERY_WORKER_ENABLE_REMOTE_CONTROL = False
CELERY_IMPORTS = ["tests.messaging.broadcasts.worker_hooks"]
CELERY_BEAT_SCHEDULE = {
    "messaging-broadcasts-due": {"task": "messaging.broadcasts_due", "schedule": 1.0},
    "messaging-dispatch-due": {"task": "messaging.dispatch_due", "schedule": 3.0},
}
MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS = 0.05
MESSAGING_DISPATCH_LEASE_SECONDS = 5
MESSAGING_SENDER_RATE_PER_SECOND = float(os.environ.get("BROADCAST_TEST_RATE", "5000"))
BROADCAST_STALL_SECONDS = 5
BROADCAST_RUN_SLICE_SECONDS = 5
BROADCAST_RUNNERS = 2
