"""Template helpers of the dashboard: role checks and timestamps."""

from __future__ import annotations

from datetime import UTC, datetime

from django import template

register = template.Library()


@register.filter
def can(principal, scope: str) -> bool:
    """`{% if principal|can:"contacts:write" %}`: show a control only to roles that hold
    the scope (the server refuses the write anyway)."""
    return principal is not None and principal.has_scope(scope)


@register.filter
def when(value: datetime | None) -> str:
    """A timestamp as the person reads it (UTC, to the minute)."""
    if not value:
        return ""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


@register.filter
def startswith(value, prefix: str) -> bool:
    """`{% if request.path|startswith:item.url %}`: the nav entry of the current screen."""
    return str(value).startswith(str(prefix))
