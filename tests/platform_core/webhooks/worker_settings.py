"""Settings of the real Celery workers started by test_worker_kill.py.

The test settings run tasks eagerly; a real worker must not. Everything else is the test
settings, with the database, broker and timings given by the test through the environment.
"""

import os

from config.settings.test import *  # noqa: F403

CELERY_TASK_ALWAYS_EAGER = False
ALLOW_PRIVATE_WEBHOOK_TARGETS = True
WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("WEBHOOK_TIMEOUT_SECONDS", "5"))
if os.environ.get("WEBHOOK_DELIVERY_LEASE_SECONDS"):  # else the default, timeout + 5 s
    WEBHOOK_DELIVERY_LEASE_SECONDS = float(os.environ["WEBHOOK_DELIVERY_LEASE_SECONDS"])
# A queue of the test's own, so its tasks (and the beat's) never meet anyone else's.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("WEBHOOK_TEST_QUEUE", "celery")
CELERY_BEAT_SCHEDULE = {
    "webhooks-dispatch-due": {"task": "webhooks.dispatch_due", "schedule": 1.0,
                              "options": {"queue": CELERY_TASK_DEFAULT_QUEUE}},
}
CELERY_WORKER_ENABLE_REMOTE_CONTROL = False
