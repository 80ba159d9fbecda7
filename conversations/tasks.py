"""Celery tasks of conversations: they take ids and call services.

- `conversations.route` (after commit: a thread entered the queue, capacity freed, an
  agent became available): one routing pass of an organization.
- `conversations.sweep` (beat, config/beat.py): expired offers pass on, elapsed snoozes
  wake up.
"""

from __future__ import annotations

from celery import shared_task

from platform_core.tenancy.models import Organization

from . import routing, services


@shared_task(name="conversations.route", ignore_result=True)
def route_organization(organization_id) -> int:
    organization = Organization.objects.filter(pk=organization_id).first()
    return routing.route(organization) if organization is not None else 0


@shared_task(name="conversations.sweep", ignore_result=True)
def sweep() -> dict[str, int]:
    return {"offers_expired": routing.expire_offers(),
            "snoozes_woken": services.conversations_wake_due()}
