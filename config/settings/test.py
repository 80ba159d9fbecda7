"""Test settings: the whole suite runs on PostgreSQL and Redis at their standard local ports.

Each pytest-xdist worker gets its own database (pytest-django suffixes it) and its own
Redis key prefix, so parallel workers never see each other's cache, counters or feeds.
"""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/engage")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")
_worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
_run = os.environ.get("TEST_RUN_ID", str(os.getpid()))
os.environ["CACHE_KEY_PREFIX"] = f"test:{_run}:{_worker}"

from .base import *  # noqa: E402,F403
from .base import DATABASES, REST_FRAMEWORK  # noqa: E402

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
DATABASES["default"]["CONN_MAX_AGE"] = 0
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
REST_FRAMEWORK = {**REST_FRAMEWORK, "TEST_REQUEST_DEFAULT_FORMAT": "json"}
# The sandbox's carrier receipt comes at once (in the send batch); tests of the delayed
# receipt set a delay and sweep under time-machine (messaging/timed.py).
MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS = 0.0
# The insights replica router's tests: a second alias on the same test database (inactive
# unless a test sets DATABASE_REPLICA_ALIAS = "replica").
DATABASES["replica"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}
