"""Settings of the daphne server of the Contacts browser tests (no tests here): the test
settings with Celery NOT eager, so a queued import or export waits in the in-memory broker
and the test itself plays the worker, one chunk at a time, to watch the progress bar move
through a real mid-way state."""

from config.settings.test import *  # noqa: F403

CELERY_TASK_ALWAYS_EAGER = False
