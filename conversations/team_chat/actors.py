"""Who is acting: team chat always acts as a user.

A dashboard session is its user; an API key acts as the user who created it, while that
user is an active member of the key's organization (Document 2, 4.9: dashboard users are
the callers). Anything else answers 403 TEAM_CHAT_USER_REQUIRED.
"""

from __future__ import annotations

from django.db.models import Subquery

from platform_core.errors import APIError
from platform_core.identity.models import APIKey
from platform_core.identity.principal import Principal
from platform_core.tenancy.models import Membership


def acting_user_id(principal: Principal) -> str:
    if principal.user_id:
        return principal.user_id
    if principal.kind == "api_key" and principal.key_id:
        creator = APIKey.objects.dangerously_unscoped().filter(
            pk=principal.key_id).values("created_by_id")
        user_id = (Membership.objects.for_organization(principal.organization)
                   .filter(user_id=Subquery(creator), user__is_active=True)
                   .values_list("user_id", flat=True).first())
        if user_id:
            return user_id
    raise APIError("TEAM_CHAT_USER_REQUIRED")
