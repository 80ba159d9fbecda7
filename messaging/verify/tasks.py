"""Celery tasks of verify. `verify.expire_due` (beat, config/beat.py): lapsed codes."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="verify.expire_due", ignore_result=True)
def expire_due() -> int:
    return services.verifications_expire_due()
