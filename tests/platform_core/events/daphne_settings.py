"""Settings of the daphne server the stream tests start: the test settings, short heartbeats."""

import os

from config.settings.test import *  # noqa: F403

EVENTS_STREAM_HEARTBEAT_SECONDS = float(os.environ.get("EVENTS_STREAM_HEARTBEAT_SECONDS", "0.5"))
