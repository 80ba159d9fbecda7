"""Account security writes: password reset, the revoke-API-keys link, consent, impersonation.

Each is keyword-only, atomic and audited. Emails are sent after the transaction commits,
and a mail failure never undoes the change it reports.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth import password_validation
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.identity import credentials
from platform_core.identity import services as identity_services
from platform_core.identity.models import APIKey, User, UserSession
from platform_core.identity.principal import Principal
from platform_core.tenancy.models import Membership, Organization

from . import conf
from .emails import send_quietly
from .models import AccountToken, ConsentRecord, ImpersonationGrant, TokenPurpose

OPERATOR = "operator"


def token_digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def _new_token() -> tuple[str, str]:
    raw = secrets.token_urlsafe(32)
    return raw, token_digest(raw)


def normalize_email(email: str) -> str:
    return (email or "").strip().lower()


# --- Forgot and reset password ---------------------------------------------------------------


def password_reset_request(*, email: str, ip: str | None = None) -> bool:
    """Email a one-hour single-use reset link if `email` is an active account's address.

    Runs in a Celery task, off the request: the HTTP answer does exactly the same work for
    every address, so neither its body nor its timing tells whether an account exists.
    Returns whether an email was sent (for the task's log only).
    """
    user = User.objects.filter(email__iexact=normalize_email(email), is_active=True).first()
    raw, digest = _new_token()  # the same hashing work either way
    if user is None:
        return False
    with transaction.atomic():
        AccountToken.objects.create(
            user=user,
            purpose=TokenPurpose.PASSWORD_RESET,
            token_hash=digest,
            expires_at=timezone.now() + timedelta(seconds=conf.RESET_TOKEN_TTL_SECONDS),
            requested_ip=ip,
        )
        audit_record(action="password.reset_requested", actor_type="user", actor_id=user.pk,
                     target=user, metadata={"ip": ip})
    return send_quietly(
        to=user.email,
        template="password_reset",
        context={
            "user": user,
            "link": conf.password_reset_link(raw),
            "valid_minutes": conf.RESET_TOKEN_TTL_SECONDS // 60,
        },
    )


def _usable_token(raw: str, purpose: str) -> AccountToken | None:
    """The token row, locked, if `raw` is a live unused token of `purpose`; else None."""
    if not raw or len(raw) > 200:
        return None
    token = (
        AccountToken.objects.select_for_update()
        .select_related("user")
        .filter(token_hash=token_digest(raw), purpose=purpose)
        .first()
    )
    if token is None or not token.is_usable or not token.user.is_active:
        return None
    return token


def _check_password_policy(password: str, user: User) -> None:
    try:
        password_validation.validate_password(password, user)
    except ValidationError as exc:
        issues = [{"field": "password", "message": m} for m in exc.messages]
        raise APIError("VALIDATION_ERROR", issues[0]["message"], status=422,
                       details={"issues": issues}) from None


@dataclass(frozen=True)
class ResetResult:
    user: User
    sessions_revoked: int


def password_reset_complete(*, token: str, password: str, ip: str | None = None,
                            user_agent: str = "") -> ResetResult:
    """Set a new password with a reset token: policy first, then sign the person out of
    every session, burn the token (and any other outstanding reset link), and email the
    offer to revoke the API keys they created."""
    now = timezone.now()
    with transaction.atomic():
        row = _usable_token(token, TokenPurpose.PASSWORD_RESET)
        if row is None:
            raise APIError("INVALID_RESET_TOKEN")
        user = row.user
        _check_password_policy(password, user)
        user.set_password(password)
        user.save(update_fields=["password"])
        AccountToken.objects.filter(
            user=user, purpose=TokenPurpose.PASSWORD_RESET, used_at=None
        ).update(used_at=now)
        revoked = identity_services.sessions_revoke_all(user=user)
        raw_revoke, revoke_digest = _new_token()
        AccountToken.objects.create(
            user=user,
            purpose=TokenPurpose.REVOKE_API_KEYS,
            token_hash=revoke_digest,
            expires_at=now + timedelta(seconds=conf.REVOKE_KEYS_TOKEN_TTL_SECONDS),
            requested_ip=ip,
        )
        audit_record(action="password.reset", actor_type="user", actor_id=user.pk, target=user,
                     metadata={"sessions_revoked": revoked, "ip": ip,
                               "user_agent": (user_agent or "")[:200]})
    active_keys = APIKey.objects.dangerously_unscoped().filter(
        created_by=user, revoked_at=None
    ).count()
    send_quietly(
        to=user.email,
        template="revoke_api_keys_offer",
        context={
            "user": user,
            "link": conf.revoke_api_keys_link(raw_revoke),
            "active_keys": active_keys,
            "valid_hours": conf.REVOKE_KEYS_TOKEN_TTL_SECONDS // 3600,
        },
    )
    return ResetResult(user=user, sessions_revoked=revoked)


def api_keys_revoke_by_link(*, token: str) -> int:
    """Deactivate every API key the token's user created (in every organization), at once:
    the authentication cache forgets them, so the next request with one is refused."""
    with transaction.atomic():
        row = _usable_token(token, TokenPurpose.REVOKE_API_KEYS)
        if row is None:
            raise APIError("INVALID_REVOKE_TOKEN")
        row.used_at = timezone.now()
        row.save(update_fields=["used_at"])
        return identity_services.api_keys_revoke_created_by(user=row.user)


# --- Consent -------------------------------------------------------------------------------


def consent_record(*, principal: Principal, terms_version: str, privacy_version: str,
                   locale: str, ip: str | None, user_agent: str,
                   request=None) -> tuple[ConsentRecord, bool]:
    """Store (or update in place) the signed-in person's acceptance. Returns (record, created)."""
    now = timezone.now()
    with transaction.atomic():
        record, created = ConsentRecord.objects.update_or_create(
            user_id=principal.user_id,
            defaults={
                "terms_version": terms_version,
                "privacy_version": privacy_version,
                "locale": locale,
                "accepted_at": now,
                "ip_address": ip,
                "user_agent": (user_agent or "")[:400],
                "organization_id": principal.organization.pk,
            },
        )
        audit_record(action="consent.accepted", principal=principal, target=record,
                     request=request,
                     metadata={"terms_version": terms_version, "privacy_version": privacy_version,
                               "locale": locale})
    return record, created


# --- Impersonation ---------------------------------------------------------------------------


def impersonation_grant_create(*, operator: User, organization: Organization, user: User,
                               reason: str, request=None) -> tuple[ImpersonationGrant, str]:
    """Issue a short-lived, single-use impersonation token. Returns (grant, raw token); the
    raw token is shown to the operator once and never stored."""
    reason = (reason or "").strip()
    if not reason:
        raise APIError("VALIDATION_ERROR", "A reason is required.", status=422,
                       details={"issues": [{"field": "reason", "message": "A reason is required."}]})
    if not (operator.is_active and operator.is_staff):
        raise APIError("INSUFFICIENT_PERMISSIONS", "Only staff operators may impersonate.")
    if operator.pk == user.pk:
        raise APIError("VALIDATION_ERROR", "You cannot impersonate yourself.", status=422,
                       details={"issues": [{"field": "user", "message": "That is you."}]})
    if not Membership.objects.for_organization(organization).filter(user=user).exists():
        raise APIError("VALIDATION_ERROR", "The user is not a member of that organization.",
                       status=422, details={"issues": [
                           {"field": "user", "message": "Not a member of the organization."}]})
    raw = "imp_" + secrets.token_urlsafe(32)
    with transaction.atomic():
        grant = ImpersonationGrant.objects.create(
            operator=operator,
            operator_email=operator.email,
            organization=organization,
            user=user,
            reason=reason,
            token_hash=token_digest(raw),
            expires_at=timezone.now() + timedelta(seconds=conf.impersonation_token_ttl()),
        )
        audit_record(
            action="impersonation.granted",
            organization=organization,
            actor_type=OPERATOR,
            actor_id=operator.pk,
            actor_display=operator.email,
            target=grant,
            request=request,
            metadata={"operator_id": operator.pk, "operator_email": operator.email,
                      "user_id": user.pk, "reason": reason,
                      "expires_at": grant.expires_at.isoformat()},
        )
    return grant, raw


def impersonation_refused() -> APIError:
    """The one answer to every unusable impersonation token (expired, ended, replayed,
    forged or malformed): same status, body and headers."""
    return APIError("INVALID_IMPERSONATION_TOKEN",
                    headers={"WWW-Authenticate": 'Bearer realm="impersonation"'})


def _refusal(grant: ImpersonationGrant) -> str | None:
    """Why a grant cannot be used now, or None. Callers answer every reason the same way."""
    if grant.ended_at is not None:
        return "ended"
    if grant.consumed_at is not None:
        return "replayed"
    if grant.expires_at <= timezone.now():
        return "expired"
    operator = grant.operator
    if operator is None or not (operator.is_active and operator.is_staff):
        return "operator_inactive"
    if not grant.organization.is_active or not grant.user.is_active:
        return "inactive"
    if not Membership.objects.for_organization(grant.organization).filter(
        user_id=grant.user_id
    ).exists():
        return "not_a_member"
    return None


def _grants_for(raw: str):
    if not raw or not isinstance(raw, str) or len(raw) > 200:
        return None
    return ImpersonationGrant.objects.select_related("operator", "organization", "user").filter(
        token_hash=token_digest(raw)
    )


def _audit_refused(grant: ImpersonationGrant, why: str, via: str, request) -> None:
    audit_record(action="impersonation.refused", organization=grant.organization,
                 actor_type=OPERATOR, actor_id=grant.operator_id or "",
                 actor_display=grant.operator_email, target=grant, request=request,
                 metadata={"why": why, "via": via})


def impersonation_verify(*, token: str, request=None) -> ImpersonationGrant:
    """Check a token without using it (the cookie-set step)."""
    grants = _grants_for(token)
    grant = grants.first() if grants is not None else None
    if grant is None:
        raise impersonation_refused()
    why = _refusal(grant)
    if why is not None:
        _audit_refused(grant, why, "cookie-set", request)
        raise impersonation_refused()
    return grant


@dataclass(frozen=True)
class ImpersonationSession:
    grant: ImpersonationGrant
    session: UserSession
    token: str


def impersonation_exchange(*, token: str, via: str, ip: str | None, user_agent: str,
                           request=None) -> ImpersonationSession:
    """Use the token once: start a session for the impersonated user that records the
    operator as impersonator (`imp` claim; audit rows it writes carry `impersonator_id`).

    Expired, ended, replayed and forged tokens all raise the same INVALID_IMPERSONATION_TOKEN.
    """
    grants = _grants_for(token)
    if grants is None:
        raise impersonation_refused()
    why = None
    with transaction.atomic():
        grant = grants.select_for_update(of=("self",)).first()
        if grant is None:
            raise impersonation_refused()
        why = _refusal(grant)
        if why is None:
            session, session_token = _start_session(grant, ip=ip, user_agent=user_agent)
            grant.consumed_at = timezone.now()
            grant.consumed_via = via
            grant.session_id = session.pk
            grant.save(update_fields=["consumed_at", "consumed_via", "session_id"])
            audit_record(
                action="impersonation.exchanged",
                organization=grant.organization,
                actor_type=OPERATOR,
                actor_id=grant.operator_id,
                actor_display=grant.operator_email,
                target=grant,
                request=request,
                metadata={"via": via, "user_id": grant.user_id, "session_id": session.pk,
                          "reason": grant.reason, "expires_at": grant.expires_at.isoformat()},
            )
    if why is not None:
        _audit_refused(grant, why, via, request)
        raise impersonation_refused()
    return ImpersonationSession(grant=grant, session=session, token=session_token)


def _start_session(grant: ImpersonationGrant, *, ip: str | None,
                   user_agent: str) -> tuple[UserSession, str]:
    session, _ = identity_services.session_start(
        user=grant.user, organization=grant.organization, ip=ip, user_agent=user_agent,
        impersonator_id=grant.operator_id,
    )
    # An impersonated session is shorter than a normal one: cap it, then issue the token
    # again so its `exp` claim matches the stored expiry.
    cap: datetime = timezone.now() + timedelta(seconds=conf.impersonation_session_ttl())
    if session.expires_at > cap:
        session.expires_at = cap
        session.save(update_fields=["expires_at"])
    return session, credentials.issue_session_token(session, impersonator_id=grant.operator_id)


def impersonation_end(*, grant: ImpersonationGrant, operator: User, request=None) -> bool:
    """End a grant: its token stops working and the session it started is signed out.
    Returns False when it had already ended."""
    with transaction.atomic():
        grant = ImpersonationGrant.objects.select_for_update(of=("self",)).select_related(
            "organization").get(pk=grant.pk)
        if grant.ended_at is not None:
            return False
        grant.ended_at = timezone.now()
        grant.ended_by = operator
        grant.save(update_fields=["ended_at", "ended_by"])
        session = None
        if grant.session_id:
            session = UserSession.objects.dangerously_unscoped().filter(
                pk=grant.session_id).first()
        if session is not None:
            identity_services.session_revoke(session=session)
        audit_record(
            action="impersonation.ended",
            organization=grant.organization,
            actor_type=OPERATOR,
            actor_id=operator.pk,
            actor_display=operator.email,
            target=grant,
            request=request,
            metadata={"session_id": grant.session_id or None},
        )
    return True


def impersonation_end_by_session(*, grant: ImpersonationGrant, request=None) -> bool:
    """The impersonated dashboard's end button: the operator ends their own grant from
    inside the session (the console's end action, acted by the grant's operator)."""
    if grant.operator is None:  # the operator account is gone: the session ends anyway
        session = UserSession.objects.dangerously_unscoped().filter(pk=grant.session_id).first()
        if session is not None:
            identity_services.session_revoke(session=session)
        return False
    return impersonation_end(grant=grant, operator=grant.operator, request=request)
