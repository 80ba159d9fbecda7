"""Background work of account security."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="accounts.send_password_reset", ignore_result=True)
def send_password_reset(email: str, ip: str | None = None) -> bool:
    """Look the address up and email a reset link when it is an account's (see the service)."""
    return services.password_reset_request(email=email, ip=ip)
