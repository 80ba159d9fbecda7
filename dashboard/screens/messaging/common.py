"""What the messaging screens share: status badges, the filter choices, form reading."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render

from dashboard.views.base import DashboardView
from messaging.models import FAILURE_STATUSES
from platform_core.errors import APIError

# Badge class per status of a message, a broadcast or a template.
BADGES = {
    "delivered": "ok", "received": "ok", "completed": "ok", "approved": "ok", "verified": "ok",
    "queued": "warn", "scheduled": "warn", "running": "warn", "pending": "warn",
    "paused": "warn",
    "canceled": "", "disabled": "", "sent": "",
    "rejected": "bad", "failed": "bad", **dict.fromkeys(FAILURE_STATUSES, "bad"),
}


def with_badges(rows: Iterable[Any]) -> list[Any]:
    """Each row gets `badge`, its status's badge class (templates cannot index a dict)."""
    rows = list(rows)
    for row in rows:
        row.badge = BADGES.get(row.status, "")
    return rows


def text(data: QueryDict, name: str) -> str | None:
    """A posted field, stripped; None when absent or blank (the services' 'not given')."""
    value = (data.get(name) or "").strip()
    return value or None


class ListWithFormView(DashboardView):
    """A list page that also takes its create (or send) form. A refused POST shows the page
    again with the form open, what was typed, and the error above it. Subclasses give
    `template_name`, `form_name` and `_context(request, **extra)`."""

    template_name: ClassVar[str]
    form_name: ClassVar[str] = "create"

    def _context(self, request: HttpRequest, **extra: Any) -> dict[str, Any]:
        raise NotImplementedError

    def handle_error(self, request: HttpRequest, error: APIError) -> HttpResponse:
        if request.method != "POST":
            return super().handle_error(request, error)
        context = self._context(request, form=request.POST,
                                **{f"{self.form_name}_error": error,
                                   f"{self.form_name}_open": True})
        return render(request, self.template_name, context, status=error.status)
