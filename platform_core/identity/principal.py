"""Who is calling: the authenticated principal attached to a request as `request.auth`."""

from __future__ import annotations

from dataclasses import dataclass, field

from platform_core.tenancy.models import Organization, Role

from .scopes import ADMIN, WILDCARD, role_grants, scopes_grant


@dataclass(frozen=True, slots=True)
class Principal:
    kind: str  # "api_key", "session" or "internal"
    organization: Organization
    role: str
    scopes: frozenset[str] = field(default_factory=frozenset)
    user_id: str | None = None
    key_id: str | None = None
    key_type: str | None = None
    session_id: str | None = None
    impersonator_id: str | None = None

    def has_scope(self, scope: str) -> bool:
        if self.kind == "api_key":
            return scopes_grant(self.scopes, scope)
        return role_grants(self.role, scope)

    @property
    def rate_limit_identity(self) -> str:
        return self.key_id or self.session_id or f"internal:{self.organization.pk}"

    @property
    def actor_id(self) -> str:
        return self.user_id or self.key_id or "internal"


def role_for_key(key_type: str, scopes: frozenset[str]) -> str:
    """The role an API key acts with where an endpoint is gated by role, not scope."""
    if key_type == "public":
        return Role.VIEWER
    if WILDCARD in scopes or ADMIN in scopes:
        return Role.ADMIN
    return Role.DEVELOPER


class PrincipalUser:
    """`request.user` for every authenticated request: cheap, with the user loaded lazily."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, principal: Principal) -> None:
        self.principal = principal
        self.pk = self.id = principal.user_id
        self._user = None

    def get_user(self):
        if self._user is None and self.principal.user_id:
            from .models import User

            self._user = User.objects.filter(pk=self.principal.user_id).first()
        return self._user

    def __str__(self) -> str:
        return self.principal.actor_id
