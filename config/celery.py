"""The Celery application: `celery -A config worker` and `celery -A config beat`."""

import os
import warnings
from pathlib import Path

from celery import Celery
from celery.exceptions import SecurityWarning

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")


def _root_in_container() -> bool:
    markers = ("/.dockerenv", "/run/.containerenv")
    return os.geteuid() == 0 and (
        # podman and systemd-nspawn set the lower-case `container` variable.
        any(Path(marker).exists() for marker in markers)
        or bool(os.environ.get("container")))  # noqa: SIM112


# Containers commonly run their one process as root, where Celery warns on every start;
# the project's tasks are JSON (never pickle), which is what makes root dangerous.
if _root_in_container():
    warnings.filterwarnings("ignore", category=SecurityWarning)

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
