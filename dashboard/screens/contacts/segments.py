"""Saved segments: the list, the editor with its filter builder, and the live count.

Create and update call `segment_create` / `segment_update` (as `SegmentViewSet`); the live
count compiles the edited tree with `contacts.segments.filters.contacts_matching`, the
same compilation the segment's membership and the autopilot's `matched_count` use, so the
count shown is what saving would materialize.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from contacts.segments import filters as segment_filters
from contacts.segments import selectors, services
from contacts.segments.models import Segment, SegmentKind
from dashboard.paging import keyset_page
from dashboard.views.base import DashboardView
from platform_core.errors import APIError

from .forms import FIELD_SUGGESTIONS, NO_VALUE, rows_from_tree, tree_from_form

READ, WRITE = "contacts:read", "contacts:write"
COUNT_CAP = 100_000  # the live count stops there ("100,000+")
BLANK_ROW = {"field": "", "operator": "eq", "value": ""}


def segment_or_404(segment_id: str) -> Segment:
    segment = Segment.objects.filter(pk=segment_id).first()
    if segment is None:
        raise APIError("NOT_FOUND", "No segment with this id.")
    return segment


def _issues(error: APIError) -> list[str]:
    issues = (error.details or {}).get("issues") or []
    return [f"{i.get('field')}: {i.get('message')}" for i in issues] or [error.message]


def editor_context(*, segment: Segment | None, name: str, description: str, tree: Any,
                   **extra: Any) -> dict[str, Any]:
    op, rows, json_text = rows_from_tree(tree)
    return {"segment": segment, "name": name, "description": description, "op": op,
            "rows": [*rows, BLANK_ROW] if not json_text else [],
            "filters_json": json_text, "operators": segment_filters.OPERATORS,
            "field_suggestions": FIELD_SUGGESTIONS, "no_value": NO_VALUE,
            "section": "segments", **extra}


class SegmentsView(DashboardView):
    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest) -> HttpResponse:
        page = keyset_page(request, Segment.objects.all(), ordering=("-id",))
        return render(request, "dashboard/contacts/segments.html",
                      {"page": page, "section": "segments"})


class SegmentEditView(DashboardView):
    """`segments/new` (segment_id None) and `segments/<id>`: GET the editor, POST save."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def get(self, request: HttpRequest, segment_id: str | None = None) -> HttpResponse:
        segment = segment_or_404(segment_id) if segment_id else None
        tree = segment.filters if segment else {"op": "and", "rules": []}
        members = list(selectors.segment_members(segment).order_by("-id")[:20]) if segment else []
        return render(request, "dashboard/contacts/segment_form.html", editor_context(
            segment=segment, name=segment.name if segment else "",
            description=(segment.description or "") if segment else "", tree=tree,
            members=members))

    def post(self, request: HttpRequest, segment_id: str | None = None) -> HttpResponse:
        segment = segment_or_404(segment_id) if segment_id else None
        data = request.POST
        name = data.get("name", "").strip()
        description = data.get("description", "").strip() or None
        tree: Any = {"op": "and", "rules": []}
        try:
            tree = tree_from_form(data)
            if not name:
                raise APIError("VALIDATION_ERROR", "A segment needs a name.", status=422)
            if segment is None:
                segment = services.segment_create(principal=self.principal, name=name[:255],
                                                  filters=tree, description=description,
                                                  request=request)
            else:
                changes: dict[str, Any] = {"name": name[:255], "description": description}
                if segment.kind == SegmentKind.FILTER:
                    changes["filters"] = tree
                segment = services.segment_update(principal=self.principal, segment=segment,
                                                  request=request, **changes)
        except APIError as error:
            # Re-show the editor with what was typed and every issue of the tree.
            return render(request, "dashboard/contacts/segment_form.html", editor_context(
                segment=segment, name=name, description=description or "", tree=tree,
                errors=_issues(error)), status=error.status)
        messages.success(request, f"Segment {segment.name} saved: "
                                  f"{segment.member_count} contacts.")
        return redirect(f"/dashboard/contacts/segments/{segment.pk}")


class SegmentCountView(DashboardView):
    """The live count of the editor: how many contacts the tree being typed matches. An
    unfinished tree answers its issues in the count region (not an error page)."""

    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest) -> HttpResponse:
        context: dict[str, Any] = {"count": None, "issues": []}
        try:
            tree = tree_from_form(request.GET)
            if tree.get("rules"):
                matching = segment_filters.contacts_matching(
                    tree, organization=self.principal.organization)
                count = selectors.capped_count(matching, COUNT_CAP)
                context.update(count=min(count, COUNT_CAP), capped=count > COUNT_CAP)
        except APIError as error:
            context["issues"] = _issues(error)
        return render(request, "dashboard/contacts/_segment_count.html", context)


class RuleRowView(DashboardView):
    """One more empty row of the filter builder."""

    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "dashboard/contacts/_rule_row.html", {
            "row": BLANK_ROW, "operators": segment_filters.OPERATORS,
            "field_suggestions": FIELD_SUGGESTIONS})
