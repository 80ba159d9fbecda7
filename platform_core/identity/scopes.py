"""Scopes and roles: what a credential may do (Document 1, section 5 rules 4 and 6).

Scopes are `resource:action`. A key holding `*` or `admin` may do anything; `resource:*`
covers every action on the resource; `resource:write` implies `resource:read`. Dashboard
sessions and the internal service token act through their role instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from platform_core.tenancy.models import ROLE_RANK, Role

WILDCARD = "*"
ADMIN = "admin"

# Scopes a public (browser) key may never hold (rule 4), beyond any `:write` scope.
PUBLIC_KEY_FORBIDDEN = frozenset({WILDCARD, ADMIN, "billing:read", "settings:read"})

# What the agent role works with day to day; everything else it may only read if listed.
_AGENT_WRITE = frozenset({"conversations", "contacts", "messages", "voice", "video", "verify",
                          "ai"})
_AGENT_READ = _AGENT_WRITE | {"templates", "knowledge", "files", "events"}
# Administrative resources only owners and admins manage.
_ADMIN_ONLY = frozenset({"admin", "billing", "users", "settings"})


def scopes_grant(granted: Iterable[str], required: str) -> bool:
    granted = frozenset(granted)
    if WILDCARD in granted or ADMIN in granted or required in granted:
        return True
    resource, _, action = required.partition(":")
    if f"{resource}:*" in granted:
        return True
    return action == "read" and f"{resource}:write" in granted


def role_grants(role: str, required: str) -> bool:
    if role in (Role.OWNER, Role.ADMIN):
        return True
    resource, _, action = required.partition(":")
    if role == Role.DEVELOPER:
        return resource not in _ADMIN_ONLY
    if role == Role.AGENT:
        if action == "read":
            return resource in _AGENT_READ
        return resource in _AGENT_WRITE
    if role == Role.VIEWER:
        return action == "read" and resource not in _ADMIN_ONLY
    return False


def role_at_least(role: str, minimum: str) -> bool:
    return ROLE_RANK.get(role, 0) >= ROLE_RANK[minimum]


def invalid_public_scopes(scopes: Iterable[str]) -> list[str]:
    return sorted(s for s in scopes if s in PUBLIC_KEY_FORBIDDEN or not s.endswith(":read"))


def is_valid_scope(scope: str) -> bool:
    if scope in (WILDCARD, ADMIN):
        return True
    resource, sep, action = scope.partition(":")
    return (
        bool(sep)
        and resource.replace("_", "").replace("-", "").isalnum()
        and action
        in (
            "read",
            "write",
            "reveal",
            "*",
        )
    )
