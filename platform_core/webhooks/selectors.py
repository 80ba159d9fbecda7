"""Reads of the webhooks family."""

from __future__ import annotations

from django.db.models import QuerySet

from .models import DeliveryStatus, WebhookDelivery, WebhookEndpoint


def multi_values(query_params, name: str) -> list[str]:
    """A filter given as a repeated parameter, a comma-separated list, or both."""
    values: list[str] = []
    for raw in query_params.getlist(name):
        values.extend(v.strip() for v in raw.split(",") if v.strip())
    return list(dict.fromkeys(values))


def deliveries_filtered(queryset: QuerySet, query_params) -> QuerySet:
    event_ids = multi_values(query_params, "event_id")
    if event_ids:
        queryset = queryset.filter(event_id__in=event_ids)
    types = multi_values(query_params, "type")
    if types:
        queryset = queryset.filter(event_type__in=types)
    statuses = multi_values(query_params, "status")
    if statuses:
        queryset = queryset.filter(status__in=statuses)
    return queryset


def dead_letters(queryset: QuerySet) -> QuerySet:
    return queryset.filter(status=DeliveryStatus.FAILED, dead_lettered_at__isnull=False)


def delivery_attempts(delivery: WebhookDelivery):
    return delivery.attempt_log.order_by("number")


def endpoints() -> QuerySet[WebhookEndpoint]:
    """The current organization's endpoints, newest first."""
    return WebhookEndpoint.objects.order_by("-id")


def endpoint(endpoint_id: str) -> WebhookEndpoint | None:
    return WebhookEndpoint.objects.filter(pk=endpoint_id).first()


def endpoint_deliveries(endpoint_id: str, query_params, *, before: str | None = None
                        ) -> QuerySet:
    """One endpoint's deliveries, newest first, with the API list's filters; `before` (a
    delivery id) pages to older ones (ids sort by creation)."""
    queryset = WebhookDelivery.objects.filter(endpoint_id=endpoint_id).order_by("-id")
    if before:
        queryset = queryset.filter(pk__lt=before)
    return deliveries_filtered(queryset, query_params)


def endpoint_delivery(endpoint_id: str, delivery_id: str) -> WebhookDelivery | None:
    return WebhookDelivery.objects.filter(endpoint_id=endpoint_id, pk=delivery_id).first()
