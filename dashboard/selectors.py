"""Reads the dashboard's frame needs (the signed-in member, the organizations to switch
to, the impersonation in progress). Screens read through their own apps' selectors."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.cache import cache

from platform_core.accounts.models import ConsentRecord, ImpersonationGrant
from platform_core.identity.models import User
from platform_core.identity.principal import Principal
from platform_core.tenancy.models import Membership

CONSENT_CACHE_SECONDS = 3600


@dataclass(frozen=True)
class MemberOrganization:
    slug: str
    name: str
    role: str


def member_organizations(user_id: str) -> list[MemberOrganization]:
    """Every active organization the person belongs to (the organization switcher)."""
    rows = (
        Membership.objects.dangerously_unscoped()
        .filter(user_id=user_id, organization__is_active=True)
        .select_related("organization")
        .order_by("organization__name")
    )
    return [MemberOrganization(m.organization.slug, m.organization.name, m.role) for m in rows]


def signed_in_user(principal: Principal) -> User | None:
    return User.objects.filter(pk=principal.user_id).first()


def impersonation_of(principal: Principal) -> ImpersonationGrant | None:
    """The grant behind an impersonated session (operator, reason), or None."""
    if not principal.impersonator_id or not principal.session_id:
        return None
    return ImpersonationGrant.objects.filter(session_id=principal.session_id).first()


def consent_current(user_id: str, terms_version: str, privacy_version: str) -> bool:
    """Whether the person accepted these versions. Asked on every page, so a yes is
    remembered (an acceptance of given versions is never withdrawn; new versions ask anew)."""
    key = f"dashboard-consent:{user_id}:{terms_version}:{privacy_version}"
    if cache.get(key):
        return True
    accepted = ConsentRecord.objects.filter(
        user_id=user_id, terms_version=terms_version, privacy_version=privacy_version
    ).exists()
    if accepted:
        cache.set(key, True, CONSENT_CACHE_SECONDS)
    return accepted
