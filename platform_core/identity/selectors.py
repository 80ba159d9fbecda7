"""Reads of the identity family for screens (the API's viewsets read the same rows through
their tenant-scoped querysets, newest first)."""

from __future__ import annotations

from django.db.models import QuerySet

from platform_core.tenancy.models import Membership

from .models import APIKey


def api_keys() -> QuerySet[APIKey]:
    """The current organization's keys, newest first (revoked ones included)."""
    return APIKey.objects.order_by("-id")


def api_key(key_id: str) -> APIKey | None:
    return APIKey.objects.filter(pk=key_id).first()


def members() -> QuerySet[Membership]:
    """The current organization's members with their user, by email."""
    return Membership.objects.select_related("user").order_by("user__email")


def member(user_id: str) -> Membership | None:
    """One member by the user's id (the id of `/api/v1/users/{id}`)."""
    return Membership.objects.select_related("user").filter(user_id=user_id).first()
