"""The settings of the Celery worker of the message-delivery scenario: the project's own,
with the sandbox double's delivery receipt after BENCH_SANDBOX_RECEIPT_DELAY seconds
(default 0) instead of 1 s, so the figure is the pipeline's throughput, not a timer's.
(config/settings/base.py reads no variable for MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS.)
"""

import os

from config.settings.base import *  # noqa: F403

MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS = float(os.environ.get("BENCH_SANDBOX_RECEIPT_DELAY",
                                                               "0"))
