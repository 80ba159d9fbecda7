"""Templates with their approval state: the per-channel summary, the variants list (the
filters of `GET /api/v1/messages/templates`), creating one, and in test mode the
carrier's decision on a pending one, through the templates family's selectors and
services with the API's scopes."""

from __future__ import annotations

from django.contrib import messages as flash
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from dashboard.paging import keyset_page
from dashboard.views.base import DashboardView
from platform_core.errors import APIError
from templates import selectors, services
from templates.models import (
    APPROVAL_CHANNELS,
    MessageTemplate,
    TemplateCategory,
    TemplateChannel,
    TemplateStatus,
)

from .common import ListWithFormView, text, with_badges

READ, WRITE = "templates:read", "templates:write"
URL = "/dashboard/messaging/templates/"


class TemplatesView(ListWithFormView):
    required_scopes = {"GET": READ, "POST": WRITE}
    template_name = "dashboard/messaging/templates.html"

    def _context(self, request: HttpRequest, **extra) -> dict:
        organization = self.principal.organization
        queryset = selectors.templates_filtered(MessageTemplate.objects.all(), request.GET)
        page = keyset_page(request, queryset.only(
            "id", "name", "channel", "language", "category", "status", "rejection_reason",
            "decided_at", "created_at", "organization_id"))
        summary = selectors.template_summary(organization)
        statuses = TemplateStatus.values
        return {
            "page": page, "rows": with_badges(page.rows), "summary": summary,
            "summary_rows": [(channel, [entry["by_status"][s] for s in statuses],
                              entry["total"])
                             for channel, entry in summary["by_channel"].items()],
            "statuses": statuses, "channels": TemplateChannel.values,
            "categories": TemplateCategory.values,
            "approval_channels": sorted(APPROVAL_CHANNELS), "sandbox": organization.sandbox,
            "form": {}, **extra,
        }

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "dashboard/messaging/templates.html", self._context(request))

    def post(self, request: HttpRequest) -> HttpResponse:
        data = request.POST
        template = services.template_create(
            principal=self.principal, request=request, name=data.get("name", "").strip(),
            channel=data.get("channel", ""), language=data.get("language", "").strip(),
            category=text(data, "category"), content=data.get("content") or None,
            subject=text(data, "subject"))
        flash.success(request, f"Template {template.name} ({template.channel}, "
                               f"{template.language}) created: {template.status}.")
        return redirect(URL)



class TemplateDecisionView(DashboardView):
    """POST (test mode only): approve or reject a pending template, as the carrier would."""

    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, template_id: str) -> HttpResponse:
        template = MessageTemplate.objects.filter(pk=template_id).first()
        if template is None:
            raise APIError("NOT_FOUND", "No such template in this organization.")
        template = services.template_sandbox_decide(
            principal=self.principal, template=template,
            decision=request.POST.get("decision", ""),
            reason=text(request.POST, "reason"), request=request)
        flash.success(request, f"Template {template.name} ({template.channel}, "
                               f"{template.language}) is now {template.status}.")
        return redirect(URL)

    def handle_error(self, request: HttpRequest, error: APIError) -> HttpResponse:
        if not request.htmx:
            flash.error(request, f"{error.message} ({error.code})")
            return redirect(URL)
        return super().handle_error(request, error)
