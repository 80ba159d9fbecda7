"""SCIM reads: users and groups of one organization (the tenant manager scopes them)."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet

from platform_core.tenancy.models import Membership, Organization

from ..models import ScimGroup, ScimUser


def users(organization: Organization, q: Q | None = None) -> QuerySet[ScimUser]:
    members = Membership.objects.for_organization(organization).filter(user_id=OuterRef("user_id"))
    qs = (
        ScimUser.objects.for_organization(organization)
        .select_related("user")
        .prefetch_related("groups")
        .annotate(is_member=Exists(members))
        .order_by("created_at", "pk")
    )
    return qs.filter(q) if q is not None else qs


def user(organization: Organization, user_id: str) -> ScimUser | None:
    return users(organization).filter(user_id=user_id).first()


def groups(organization: Organization, q: Q | None = None) -> QuerySet[ScimGroup]:
    qs = (
        ScimGroup.objects.for_organization(organization)
        .prefetch_related("members")
        .order_by("created_at", "pk")
    )
    if q is not None:
        ids = ScimGroup.objects.for_organization(organization).filter(q).values("pk")
        qs = qs.filter(pk__in=ids)
    return qs


def group(organization: Organization, group_id: str) -> ScimGroup | None:
    return groups(organization).filter(pk=group_id).first()
