"""The frame every signed-in page shares: who is signed in, where they may go, the
organizations they can switch to, and the impersonation banner."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from . import selectors


@dataclass(frozen=True)
class NavItem:
    label: str
    url: str
    scope: str | None  # shown when the role holds it


NAV = [
    NavItem("Inbox", "/dashboard/inbox/", "conversations:read"),
    NavItem("Team chat", "/dashboard/team-chat/", "conversations:read"),
    NavItem("Contacts", "/dashboard/contacts/", "contacts:read"),
    NavItem("Messaging", "/dashboard/messaging/", "messages:read"),
    NavItem("Analytics", "/dashboard/analytics/", "insights:read"),
    NavItem("Developers", "/dashboard/developers/", "webhooks:read"),
    NavItem("Settings", "/dashboard/settings/", "settings:read"),
]


def frame(request: HttpRequest) -> dict:
    principal = getattr(request, "principal", None)
    if principal is None:
        return {}
    # Lazy: the reads run only when a template uses them (a full page, not a fragment).
    return {
        "principal": principal,
        "member": SimpleLazyObject(lambda: selectors.signed_in_user(principal)),
        "nav": [item for item in NAV if item.scope is None or principal.has_scope(item.scope)],
        "member_organizations": SimpleLazyObject(
            lambda: selectors.member_organizations(principal.user_id)),
        "impersonation": SimpleLazyObject(lambda: selectors.impersonation_of(principal)),
    }
