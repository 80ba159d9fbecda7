"""Writes on organizations, users, sessions and API keys. Each is atomic and audited."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth.hashers import check_password, make_password
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.tenancy.models import ROLE_RANK, Membership, Organization, Role

from . import credentials
from .models import APIKey, KeyMode, KeyType, User, UserSession
from .principal import Principal
from .scopes import ADMIN, WILDCARD, invalid_public_scopes, is_valid_scope

# A constant hash to compare against for unknown emails, so timing does not enumerate.
_DUMMY_PASSWORD_HASH = make_password("timing-equalizer-not-a-password")


def organization_create(
    *,
    name: str,
    slug: str,
    owner_email: str,
    owner_password: str | None = None,
    sandbox: bool = False,
) -> tuple[Organization, User, str | None, APIKey, str]:
    """Bootstrap: organization, its owner and one `*` secret key matching its mode.

    A new owner gets `owner_password`, or a generated one. An existing user (same email) is
    made owner as they are: their password is never reset here. Naming a password for them
    is allowed only when it is their current one; the returned password is then that one,
    and None when none was given.
    """
    owner_email = User.objects.normalize_email(owner_email).strip().lower()
    with transaction.atomic():
        if Organization.objects.filter(slug=slug).exists():
            raise APIError("ALREADY_EXISTS", f"An organization with slug {slug!r} already exists.")
        user = User.objects.filter(email__iexact=owner_email).first()
        if user is None:
            password: str | None = owner_password or secrets.token_urlsafe(12)
            user = User.objects.create_user(owner_email, password)
        else:
            if owner_password is not None and not user.check_password(owner_password):
                raise APIError(
                    "ALREADY_EXISTS",
                    f"A user {owner_email!r} already exists with a different password; it is "
                    "not changed here. Omit the password to make them owner as they are.",
                )
            password = owner_password
        try:
            with transaction.atomic():
                org = Organization.objects.create(name=name, slug=slug, sandbox=sandbox)
        except IntegrityError:  # a concurrent run took the slug
            raise APIError(
                "ALREADY_EXISTS", f"An organization with slug {slug!r} already exists."
            ) from None
        Membership.objects.for_organization(org).create(
            organization=org, user=user, role=Role.OWNER
        )
        key, raw = api_key_create(
            organization=org,
            name="Default secret key",
            key_type=KeyType.SECRET,
            mode=KeyMode.TEST if sandbox else KeyMode.LIVE,
            scopes=["*"],
            created_by_id=user.pk,
        )
        audit_record(
            action="organization.created",
            organization=org,
            actor_type="system",
            target=org,
            metadata={"owner_id": user.pk},
        )
    return org, user, password, key, raw


def organization_update(
    *, organization: Organization, principal: Principal, request=None, **fields: Any
) -> Organization:
    with transaction.atomic():
        org = Organization.objects.select_for_update().get(pk=organization.pk)
        changed = {k: v for k, v in fields.items() if getattr(org, k) != v}
        for name, value in changed.items():
            setattr(org, name, value)
        if changed:
            org.save()
            audit_record(
                action="organization.updated",
                principal=principal,
                target=org,
                request=request,
                metadata={"fields": sorted(changed)},
            )
    return org


# --- API keys ----------------------------------------------------------------------------


def api_key_create(
    *,
    organization: Organization,
    name: str,
    key_type: str,
    mode: str | None,
    scopes: list[str],
    allowed_ips: list[str] | None = None,
    created_by_id: str | None = None,
    principal: Principal | None = None,
    request=None,
) -> tuple[APIKey, str]:
    mode = mode or (KeyMode.TEST if organization.sandbox else KeyMode.LIVE)
    unknown = [s for s in scopes if not is_valid_scope(s)]
    if unknown:
        raise validation_error("scopes", f"Unknown scope format: {', '.join(unknown)}.")
    if key_type == KeyType.PUBLIC:
        refused = invalid_public_scopes(scopes)
        if refused:
            raise validation_error(
                "scopes",
                f"Public keys may hold read-only scopes only; refused: {', '.join(refused)}.",
            )
    _check_scopes_grantable(principal, scopes)
    raw = credentials.generate_key(mode, key_type)
    with transaction.atomic():
        key = APIKey.objects.for_organization(organization).create(
            organization=organization,
            name=name,
            type=key_type,
            mode=mode,
            prefix=raw[:16],
            last4=raw[-4:],
            key_hash=credentials.digest(raw),
            scopes=list(dict.fromkeys(scopes)),
            allowed_ips=allowed_ips or [],
            created_by_id=created_by_id or (principal.user_id if principal else None),
        )
        if principal is not None:
            audit_record(
                action="api_key.created",
                principal=principal,
                target=key,
                request=request,
                metadata={"type": key_type, "mode": mode},
            )
    return key, raw


def _may_grant(principal: Principal, scope: str) -> bool:
    if scope in (WILDCARD, ADMIN):
        if principal.kind == "api_key":
            return WILDCARD in principal.scopes or ADMIN in principal.scopes
        return principal.role in (Role.OWNER, Role.ADMIN)
    return principal.has_scope(scope)


def _check_scopes_grantable(principal: Principal | None, scopes: list[str]) -> None:
    """No escalation: a caller may only hand a new key scopes it holds itself."""
    if principal is None:  # system code (bootstrap, fixtures)
        return
    refused = sorted({s for s in scopes if not _may_grant(principal, s)})
    if refused:
        raise APIError(
            "INSUFFICIENT_PERMISSIONS",
            f"You cannot grant scopes you do not hold: {', '.join(refused)}.",
            details={"scopes": refused},
        )


def api_key_revoke(*, key: APIKey, principal: Principal | None = None, request=None) -> None:
    with transaction.atomic():
        if key.revoked_at is None:
            key.revoked_at = timezone.now()
            key.save(update_fields=["revoked_at"])
        audit_record(
            action="api_key.revoked",
            principal=principal,
            organization=key.organization,
            target=key,
            request=request,
        )
    credentials.forget_api_key(key.key_hash)


def api_keys_revoke_created_by(*, user: User) -> int:
    """Deactivate every key the user created, in every organization, effective at once."""
    keys = list(APIKey.objects.dangerously_unscoped().filter(created_by=user, revoked_at=None))
    now = timezone.now()
    with transaction.atomic():
        APIKey.objects.dangerously_unscoped().filter(pk__in=[k.pk for k in keys]).update(
            revoked_at=now
        )
        for key in keys:
            audit_record(
                action="api_key.revoked",
                organization=key.organization,
                actor_type="user",
                actor_id=user.pk,
                target=key,
                metadata={"reason": "post_reset_revoke"},
            )
    for key in keys:
        credentials.forget_api_key(key.key_hash)
    return len(keys)


# --- Sessions ------------------------------------------------------------------------------


def _lockout_key(email: str, ip: str | None) -> str:
    who = f"{email.strip().lower()}|{ip or 'unknown'}"
    return "login-fail:" + hashlib.sha256(who.encode()).hexdigest()[:32]


def _check_not_locked_out(email: str, ip: str | None) -> None:
    """Password sign-in of an address from one client address stops for
    LOGIN_LOCKOUT_SECONDS after LOGIN_LOCKOUT_ATTEMPTS wrong passwords (known or unknown
    address alike, so the answer does not tell whether the account exists). Keyed by both,
    as django-axes' username+IP mode: a guesser is locked out of the account for far longer
    than the per-IP login limit's minute, while nobody else can lock its owner out."""
    failures = cache.get(_lockout_key(email, ip)) or 0
    if failures >= settings.LOGIN_LOCKOUT_ATTEMPTS:
        raise APIError(
            "RATE_LIMITED",
            "Too many failed sign-ins for this address; try again later or reset the password.",
            details={"retry_after_seconds": settings.LOGIN_LOCKOUT_SECONDS},
            headers={"Retry-After": str(settings.LOGIN_LOCKOUT_SECONDS)},
        )


def _count_failed_login(email: str, ip: str | None) -> None:
    key = _lockout_key(email, ip)
    if cache.add(key, 1, settings.LOGIN_LOCKOUT_SECONDS):
        return
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, settings.LOGIN_LOCKOUT_SECONDS)


def session_login(
    *, email: str, password: str, organization_slug: str | None, ip: str | None, user_agent: str
) -> tuple[UserSession, str]:
    email = (email or "").strip()
    _check_not_locked_out(email, ip)
    user = User.objects.filter(email__iexact=email).first()
    if user is None:
        check_password(password or "", _DUMMY_PASSWORD_HASH)
        _count_failed_login(email, ip)
        raise APIError("INVALID_CREDENTIALS")
    if not user.is_active or not user.check_password(password or ""):
        _count_failed_login(email, ip)
        raise APIError("INVALID_CREDENTIALS")
    cache.delete(_lockout_key(email, ip))
    memberships = (
        Membership.objects.dangerously_unscoped().filter(user=user).select_related("organization")
    )
    if organization_slug:
        memberships = memberships.filter(organization__slug=organization_slug)
    membership = memberships.order_by("created_at").first()
    if membership is None or not membership.organization.is_active:
        raise APIError("INVALID_CREDENTIALS", "You are not a member of that organization.")
    return session_start(
        user=user, organization=membership.organization, ip=ip, user_agent=user_agent
    )


def session_start(
    *,
    user: User,
    organization: Organization,
    ip: str | None,
    user_agent: str,
    impersonator_id: str | None = None,
) -> tuple[UserSession, str]:
    with transaction.atomic():
        session = UserSession.objects.for_organization(organization).create(
            organization=organization,
            user=user,
            expires_at=credentials.session_expiry(),
            ip_address=ip,
            user_agent=(user_agent or "")[:400],
        )
        audit_record(
            action="session.created",
            organization=organization,
            actor_type="user",
            actor_id=user.pk,
            target=session,
            metadata={"impersonator_id": impersonator_id} if impersonator_id else None,
        )
    User.objects.filter(pk=user.pk).update(last_login=timezone.now())
    return session, credentials.issue_session_token(session, impersonator_id=impersonator_id)


def session_revoke(
    *, session: UserSession, principal: Principal | None = None, request=None
) -> None:
    with transaction.atomic():
        if session.revoked_at is None:
            session.revoked_at = timezone.now()
            session.save(update_fields=["revoked_at"])
            if principal is not None:  # the operator console writes its own row
                audit_record(action="session.revoked", principal=principal, target=session,
                             request=request)
    credentials.forget_session(session.pk)


def sessions_revoke_all(*, user: User, except_session_id: str | None = None) -> int:
    sessions = UserSession.objects.dangerously_unscoped().filter(user=user, revoked_at=None)
    if except_session_id:
        sessions = sessions.exclude(pk=except_session_id)
    ids = list(sessions.values_list("pk", flat=True))
    UserSession.objects.dangerously_unscoped().filter(pk__in=ids).update(revoked_at=timezone.now())
    credentials.forget_sessions(ids)
    return len(ids)


# --- Users of an organization ----------------------------------------------------------------


def _check_role_assignable(principal: Principal, role: str) -> None:
    if role not in Role.values:
        raise validation_error("role", f"role must be one of {', '.join(Role.values)}.")
    if ROLE_RANK[role] > ROLE_RANK.get(principal.role, 0):
        raise APIError("INSUFFICIENT_PERMISSIONS", "You cannot grant a role above your own.")


def user_invite(
    *,
    principal: Principal,
    email: str,
    name: str = "",
    role: str,
    password: str | None = None,
    request=None,
) -> Membership:
    """Add a person to the principal's organization. An existing user (matched by email) joins
    as they are: their name and password are never changed by another organization's admin."""
    _check_role_assignable(principal, role)
    org = principal.organization
    email = email.strip().lower()
    with transaction.atomic():
        user = User.objects.filter(email__iexact=email).first()
        if user is None:
            user = User.objects.create_user(email, password, name=name or "")
            if not password:
                user.set_unusable_password()
                user.save(update_fields=["password"])
        try:
            with transaction.atomic():
                membership = Membership.objects.create(organization=org, user=user, role=role)
        except IntegrityError:
            raise APIError("ALREADY_EXISTS", "This user is already a member.") from None
        audit_record(
            action="user.added",
            principal=principal,
            target=user,
            request=request,
            metadata={"role": role},
        )
    return membership


def user_update(
    *,
    principal: Principal,
    membership: Membership,
    request=None,
    name: str | None = None,
    role: str | None = None,
) -> Membership:
    with transaction.atomic():
        if role is not None and role != membership.role:
            _check_role_assignable(principal, role)
            if ROLE_RANK[membership.role] > ROLE_RANK.get(principal.role, 0):
                raise APIError("INSUFFICIENT_PERMISSIONS", "You cannot change a higher role.")
            if membership.role == Role.OWNER and role != Role.OWNER:
                _ensure_another_owner(membership)
            membership.role = role
            membership.save(update_fields=["role"])
        if name is not None and name != membership.user.name:
            _ensure_sole_membership_or_self(principal, membership)
            membership.user.name = name
            membership.user.save(update_fields=["name"])
        audit_record(
            action="user.updated",
            principal=principal,
            target=membership.user,
            request=request,
            metadata={"role": membership.role},
        )
    return membership


def _ensure_another_owner(membership: Membership) -> None:
    """Call inside the transaction that demotes or removes an owner. Locking every owner row
    serializes two owners stepping down at once, so one of them always remains."""
    owners = list(
        Membership.objects.for_organization(membership.organization)
        .select_for_update()
        .filter(role=Role.OWNER)
        .values_list("pk", flat=True)
    )
    if not any(pk != membership.pk for pk in owners):
        raise APIError("CONFLICT", "An organization keeps at least one owner.")


def _ensure_sole_membership_or_self(principal: Principal, membership: Membership) -> None:
    """A person's name is theirs, not one organization's: an admin may rename only a user who
    belongs to no other organization."""
    if membership.user_id == principal.user_id:
        return
    elsewhere = (
        Membership.objects.dangerously_unscoped()
        .filter(user_id=membership.user_id)
        .exclude(organization_id=membership.organization_id)
    )
    if elsewhere.exists():
        raise APIError(
            "CONFLICT",
            "This person also belongs to another organization; only they can change their name.",
        )


def user_remove(*, principal: Principal, membership: Membership, request=None) -> None:
    """Remove a member; their sessions in this organization end at once (not elsewhere).
    Nobody removes themselves (another admin does), so an organization is never left
    by accident without the person managing it."""
    if membership.user_id == principal.user_id:
        raise APIError("CONFLICT", "You cannot remove yourself; ask another admin.")
    if ROLE_RANK[membership.role] > ROLE_RANK.get(principal.role, 0):
        raise APIError("INSUFFICIENT_PERMISSIONS", "You cannot remove a higher role.")
    org = membership.organization
    with transaction.atomic():
        if membership.role == Role.OWNER:
            _ensure_another_owner(membership)
        user = membership.user
        membership.delete()
        sessions = UserSession.objects.for_organization(org).filter(user=user, revoked_at=None)
        session_ids = list(sessions.values_list("pk", flat=True))
        sessions.update(revoked_at=timezone.now())
        audit_record(
            action="user.removed",
            principal=principal,
            target=user,
            request=request,
            metadata={"sessions_revoked": len(session_ids)},
        )
    credentials.forget_sessions(session_ids)


def session_switch_organization(
    *, principal: Principal, organization_slug: str, ip: str | None, user_agent: str
) -> tuple[UserSession, str]:
    """The dashboard's organization switcher: a new session in another organization the
    person belongs to; the current one ends. Impersonated sessions stay where they were
    let in."""
    if principal.kind != "session" or principal.impersonator_id:
        raise APIError("INSUFFICIENT_PERMISSIONS",
                       "Only a member's own session can switch organizations.")
    membership = (
        Membership.objects.dangerously_unscoped()
        .filter(user_id=principal.user_id, organization__slug=organization_slug,
                organization__is_active=True)
        .select_related("organization", "user")
        .first()
    )
    if membership is None:
        raise APIError("NOT_FOUND", "You are not a member of that organization.")
    current = UserSession.objects.dangerously_unscoped().get(pk=principal.session_id)
    session, token = session_start(user=membership.user, organization=membership.organization,
                                   ip=ip, user_agent=user_agent)
    session_revoke(session=current)
    return session, token
