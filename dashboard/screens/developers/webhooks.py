"""Webhook endpoints and their delivery log, through the webhooks family's services.

Create (the signing secret shown once), edit, disable or enable, delete; each endpoint's
deliveries with the request as sent and the answer as received; retry and replay of a
failed delivery (`delivery_retry`, `delivery_replay`: the same calls as the API's
/webhooks/{id}/deliveries/{id}/retry and /replay, with the same 409 for a delivery that is
not failed). Scopes are the API's: webhooks:read to look, webhooks:write to change.
"""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.views.base import validated
from platform_core.errors import APIError, validation_error
from platform_core.webhooks import selectors, services
from platform_core.webhooks.api.serializers import EndpointWriteSerializer
from platform_core.webhooks.api.views import DeliveryViewSet, EndpointViewSet
from platform_core.webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint

from .common import after_write, lines, shown_once
from .nav import DevelopersView

READ, WRITE = EndpointViewSet.required_scopes["GET"], EndpointViewSet.required_scopes["POST"]
DELIVERY_WRITE = DeliveryViewSet.required_scopes["POST"]
LOG_SIZE = 50
BASE = "/dashboard/developers/webhooks"


def _pretty(value) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str) if value else ""


def _header_lines(text: str) -> dict[str, str]:
    """`Name: value` lines as a dict (the API takes the same as a JSON object)."""
    headers: dict[str, str] = {}
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise validation_error("headers", f"Write each header as `Name: value`: {line!r}.")
        headers[name.strip()] = value.strip()
    return headers


def _endpoint_body(form, *, partial: bool) -> dict:
    """The form's fields in the API's body shape, validated by the API's serializer."""
    body = {
        "url": form.get("url", "").strip(),
        "events": lines(form.get("events")) or ["*"],
        "description": form.get("description", "").strip(),
        "headers": _header_lines(form.get("headers", "")),
    }
    if not partial:
        body["enabled"] = True
    return validated(EndpointWriteSerializer, body, partial=partial)


def _endpoint_or_404(endpoint_id: str) -> WebhookEndpoint:
    endpoint = selectors.endpoint(endpoint_id)
    if endpoint is None:
        raise APIError("NOT_FOUND", "No such webhook endpoint.")
    return endpoint


def _delivery_or_404(endpoint_id: str, delivery_id: str) -> WebhookDelivery:
    delivery = selectors.endpoint_delivery(endpoint_id, delivery_id)
    if delivery is None:
        raise APIError("NOT_FOUND", "No such delivery.")
    return delivery


class _WebhooksView(DevelopersView):
    tab = "webhooks"

    def error_back_url(self, request: HttpRequest) -> str:
        endpoint_id = self.kwargs.get("endpoint_id")
        return f"{BASE}/{endpoint_id}" if endpoint_id else BASE

    def log_context(self, request: HttpRequest, endpoint: WebhookEndpoint) -> dict:
        # The API list's filters (status, type, event_id), newest first, a page at a time.
        rows = list(selectors.endpoint_deliveries(endpoint.pk, request.GET,
                                                  before=request.GET.get("before"))
                    .defer("payload")[:LOG_SIZE + 1])
        return {
            "endpoint": endpoint,
            "deliveries": rows[:LOG_SIZE],
            "older": rows[LOG_SIZE - 1].pk if len(rows) > LOG_SIZE else None,
            "paged": bool(request.GET.get("before")),
            "status_filter": request.GET.get("status", ""),
            "statuses": DeliveryStatus.values,
            "write_scope": WRITE,
        }


class EndpointsView(_WebhooksView):
    """GET the endpoints and the create form; POST registers one (secret shown once)."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def context(self, **extra) -> dict:
        return {"endpoints": list(selectors.endpoints()), "write_scope": WRITE, **extra}

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page(request, "dashboard/developers/webhooks.html", self.context())

    def post(self, request: HttpRequest) -> HttpResponse:
        data = _endpoint_body(request.POST, partial=False)
        endpoint, secret = services.endpoint_create(
            organization=self.principal.organization, url=data["url"], events=data["events"],
            description=data.get("description", ""), enabled=True,
            headers=data.get("headers") or {}, principal=self.principal, request=request)
        context = self.context(created=endpoint, secret=secret)
        if request.htmx:
            return shown_once(render(request, "dashboard/developers/_endpoint_created.html",
                                     context))
        return shown_once(self.page(request, "dashboard/developers/webhooks.html", context,
                                    status=201))


class EndpointView(_WebhooksView):
    """GET one endpoint (settings and delivery log); POST saves the edit form."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def get(self, request: HttpRequest, endpoint_id: str) -> HttpResponse:
        endpoint = _endpoint_or_404(endpoint_id)
        context = {**self.log_context(request, endpoint),
                   "header_text": "\n".join(f"{k}: {v}" for k, v in
                                            endpoint.redacted_headers.items())}
        return self.page(request, "dashboard/developers/endpoint.html", context)

    def post(self, request: HttpRequest, endpoint_id: str) -> HttpResponse:
        endpoint = _endpoint_or_404(endpoint_id)
        data = _endpoint_body(request.POST, partial=True)
        services.endpoint_update(endpoint=endpoint, principal=self.principal, request=request,
                                 **data)
        return after_write(request, f"{BASE}/{endpoint.pk}", "Endpoint saved.")


class EndpointEnabledView(_WebhooksView):
    """POST enabled=0 disables the endpoint (its deliveries wait), enabled=1 resumes it."""

    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, endpoint_id: str) -> HttpResponse:
        endpoint = _endpoint_or_404(endpoint_id)
        enabled = request.POST.get("enabled") == "1"
        services.endpoint_update(endpoint=endpoint, principal=self.principal, request=request,
                                 enabled=enabled)
        return after_write(request, f"{BASE}/{endpoint.pk}",
                           "Endpoint enabled." if enabled else "Endpoint disabled.")


class EndpointDeleteView(_WebhooksView):
    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, endpoint_id: str) -> HttpResponse:
        endpoint = _endpoint_or_404(endpoint_id)
        services.endpoint_delete(endpoint=endpoint, principal=self.principal, request=request)
        return after_write(request, BASE, f"Endpoint {endpoint.url} deleted.")


class DeliveriesView(_WebhooksView):
    """The delivery log of one endpoint (the fragment the page refreshes)."""

    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest, endpoint_id: str) -> HttpResponse:
        endpoint = _endpoint_or_404(endpoint_id)
        return render(request, "dashboard/developers/_deliveries.html",
                      self.log_context(request, endpoint))


class DeliveryView(_WebhooksView):
    """One delivery: the request as sent, the last answer, every attempt."""

    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest, endpoint_id: str, delivery_id: str) -> HttpResponse:
        endpoint = _endpoint_or_404(endpoint_id)
        context = delivery_context(endpoint, _delivery_or_404(endpoint_id, delivery_id))
        if request.htmx:
            return render(request, "dashboard/developers/_delivery.html", context)
        return self.page(request, "dashboard/developers/delivery.html", context)


def delivery_context(endpoint: WebhookEndpoint, delivery: WebhookDelivery, **extra) -> dict:
    return {
        "endpoint": endpoint,
        "delivery": delivery,
        "attempts": list(selectors.delivery_attempts(delivery)),
        "request_headers": _pretty(delivery.request_headers),
        "request_body": _pretty(delivery.payload),
        "response_headers": _pretty(delivery.response_headers),
        "can_resend": delivery.status == DeliveryStatus.FAILED,
        "write_scope": DELIVERY_WRITE,
        **extra,
    }


class DeliveryActionView(_WebhooksView):
    """POST retry (failed -> pending, sent again by the next sweep) or replay (a new
    delivery of the same payload under a fresh event id, sent at once)."""

    required_scopes = {"POST": DELIVERY_WRITE}

    def post(self, request: HttpRequest, endpoint_id: str, delivery_id: str,
             action: str) -> HttpResponse:
        endpoint = _endpoint_or_404(endpoint_id)
        delivery = _delivery_or_404(endpoint_id, delivery_id)
        if action == "retry":
            shown = services.delivery_retry(delivery=delivery, principal=self.principal,
                                            request=request)
            note = "Retry queued: the delivery is pending again."
        else:
            replay = services.delivery_replay(delivery=delivery, principal=self.principal,
                                              request=request)
            replay.refresh_from_db()  # as the drain left it (sent at once when it could)
            shown = replay
            note = f"Replayed as event {replay.event_id}."
        if not request.htmx:
            return after_write(request, f"{BASE}/{endpoint.pk}/deliveries/{shown.pk}", note)
        context = {**self.log_context(request, endpoint),
                   **delivery_context(endpoint, shown, note=note, oob_log=True)}
        return render(request, "dashboard/developers/_delivery.html", context)
