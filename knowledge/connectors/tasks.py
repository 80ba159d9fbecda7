"""Celery tasks of the connectors: they take ids and call the services."""

from __future__ import annotations

from celery import shared_task

from platform_core.tenancy.context import tenant_context


@shared_task(name="knowledge.sync_connector")
def sync_connector(connector_id: str) -> str:
    from . import services
    from .models import Connector

    connector = Connector.objects.dangerously_unscoped().select_related(
        "organization", "knowledge_base").filter(pk=connector_id).first()
    if connector is None:
        return "gone"
    with tenant_context(connector.organization):
        return services.sync(connector).sync_status


@shared_task(name="knowledge.sync_due_connectors")
def sync_due_connectors() -> int:
    from . import services

    return services.drain_due()
