"""Writes of the SSO family: SAML settings, sign-in and sign-out, tickets, SCIM settings.

SCIM resource writes live in `platform_core.sso.scim.services`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from django.core import signing
from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity import credentials
from platform_core.identity import services as identity_services
from platform_core.identity.models import User, UserSession
from platform_core.identity.principal import Principal
from platform_core.tenancy.models import ROLE_RANK, Membership, Organization

from . import saml
from .models import (
    SamlAuthnRequest,
    SamlConfig,
    SamlConsumedAssertion,
    SamlUserLink,
    ScimConfig,
    SsoTicket,
)

RELAY_SALT = "platform_core.sso.saml.relay"
# An AuthnRequest (and so its RelayState) is answerable for ten minutes.
REQUEST_TTL = dt.timedelta(minutes=10)
# The dashboard has one minute to exchange a sign-in ticket, once.
TICKET_TTL = dt.timedelta(seconds=60)
# Consumed assertion ids are kept at least this long when the assertion states no expiry.
ASSERTION_MEMORY = dt.timedelta(hours=1)
SCIM_TOKEN_PREFIX = "scim_"

SAML_FIELDS = ("idp_entity_id", "idp_sso_url", "idp_slo_url", "idp_x509_cert")


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


# --- SAML settings ---------------------------------------------------------------------------


def saml_config_get_or_create(*, organization: Organization) -> SamlConfig:
    """The organization's row, created (with its SP key pair) on first use."""
    config = SamlConfig.objects.for_organization(organization).first()
    if config is not None and config.sp_private_key:
        return config
    key_pem, cert_pem = saml.generate_keypair(f"{organization.slug} SAML SP")
    with transaction.atomic():
        config = SamlConfig.objects.for_organization(organization).select_for_update().first()
        if config is None:
            try:
                with transaction.atomic():
                    config = SamlConfig.objects.for_organization(organization).create(
                        organization=organization,
                        sp_private_key=key_pem,
                        sp_certificate=cert_pem,
                    )
            except IntegrityError:  # created concurrently
                config = SamlConfig.objects.for_organization(organization).get()
        elif not config.sp_private_key:
            config.sp_private_key, config.sp_certificate = key_pem, cert_pem
            config.save(update_fields=["sp_private_key", "sp_certificate", "updated_at"])
    return config


def saml_config_update(*, principal: Principal, request=None, **fields: Any) -> SamlConfig:
    """PATCH /settings/saml. `idp_metadata_xml` and the three IdP fields are alternatives;
    enabling (or changing the IdP while enabled) runs the connection test first."""
    org = principal.organization
    given_fields = {k for k in SAML_FIELDS if k in fields}
    if fields.get("idp_metadata_xml") and given_fields:
        raise validation_error(
            "idp_metadata_xml",
            "Give either idp_metadata_xml or the IdP fields "
            f"({', '.join(sorted(given_fields))}), not both.",
        )
    saml_config_get_or_create(organization=org)
    with transaction.atomic():
        config = SamlConfig.objects.for_organization(org).select_for_update().get()
        before = {
            name: getattr(config, name) for name in ("enabled", *SAML_FIELDS, "idp_metadata_xml")
        }
        for name, value in fields.items():
            setattr(config, name, value)
        if fields.get("idp_metadata_xml"):
            # Show the IdP the metadata describes in the plain fields too.
            idp = saml.parse_idp_metadata(config.idp_metadata_xml)
            config.idp_entity_id, config.idp_sso_url = idp.entity_id, idp.sso_url
            config.idp_slo_url, config.idp_x509_cert = idp.slo_url, idp.certificate
        elif "idp_x509_cert" in fields and config.idp_x509_cert:
            config.idp_x509_cert = saml.normalize_certificate(config.idp_x509_cert)
        changed = sorted(name for name, value in before.items() if getattr(config, name) != value)
        idp_changed = any(name != "enabled" for name in changed)
        if config.enabled and (not before["enabled"] or idp_changed):
            issues = saml.connection_test(
                idp_entity_id=config.idp_entity_id,
                idp_sso_url=config.idp_sso_url,
                idp_slo_url=config.idp_slo_url,
                idp_x509_cert=config.idp_x509_cert,
                idp_metadata_xml=config.idp_metadata_xml,
            )
            if issues:
                raise APIError(
                    "SAML_CONNECTION_TEST_FAILED",
                    f"Connection test failed: {issues[0]['message']}",
                    details={"issues": issues},
                )
        if changed:
            config.save()
            audit_record(
                action="saml.settings_updated",
                principal=principal,
                target=config,
                request=request,
                metadata={"fields": changed, "enabled": config.enabled},
            )
    return config


def saml_organization(*, slug: str) -> tuple[Organization, SamlConfig | None]:
    """The active organization of `slug` and its enabled SAML configuration (None when
    single sign-on is off), or 404 SAML_NOT_ENABLED for an unknown slug."""
    org = Organization.objects.filter(slug=slug, is_active=True).first()
    if org is None:
        raise APIError("SAML_NOT_ENABLED")
    config = SamlConfig.objects.for_organization(org).first()
    return org, (config if config is not None and config.enabled else None)


def saml_enabled_config(*, slug: str) -> tuple[Organization, SamlConfig]:
    """The organization and its enabled SAML configuration, or 404 SAML_NOT_ENABLED (the
    same answer for an unknown slug)."""
    org, config = saml_organization(slug=slug)
    if config is None:
        raise APIError("SAML_NOT_ENABLED")
    return org, config


# --- SAML sign-in ----------------------------------------------------------------------------


def safe_redirect(value: str | None) -> str:
    """Only a path on this site: `/…`, never `//host`, a scheme or a backslash trick."""
    value = (value or "/").strip()
    if (
        not value.startswith("/")
        or value.startswith("//")
        or "\\" in value
        or any(ord(c) < 32 for c in value)
        or len(value) > 2000
    ):
        raise validation_error(
            "redirect", "redirect must be a path on this site, like /inbox.", status=400
        )
    return value


def saml_login_prepare(*, org: Organization, redirect: str | None) -> tuple[str, str]:
    """Record an AuthnRequest before djangosaml2 issues it: (request id, RelayState).

    The RelayState is signed and names the request, so the ACS can seed djangosaml2's
    outstanding-request cache without a cookie session. It starts with "/" because
    djangosaml2 only relays values that pass its same-site URL check."""
    redirect = safe_redirect(redirect)
    request_id = "id-" + secrets.token_hex(20)
    relay_state = "/" + signing.dumps(
        {"o": org.pk, "q": request_id, "r": redirect}, salt=RELAY_SALT, compress=True
    )
    now = timezone.now()
    SamlAuthnRequest.objects.for_organization(org).filter(
        expires_at__lt=now - dt.timedelta(days=1)
    ).delete()
    SamlAuthnRequest.objects.for_organization(org).create(
        organization=org,
        request_id=request_id,
        redirect=redirect,
        expires_at=now + REQUEST_TTL,
    )
    return request_id, relay_state


def _read_relay_state(relay_state: str, org: Organization) -> dict[str, str]:
    try:
        data = signing.loads(
            (relay_state or "").removeprefix("/"),
            salt=RELAY_SALT,
            max_age=REQUEST_TTL.total_seconds(),
        )
    except signing.BadSignature:
        raise APIError("SAML_RELAY_STATE_INVALID") from None
    if not isinstance(data, dict) or data.get("o") != org.pk or not data.get("q"):
        raise APIError("SAML_RELAY_STATE_INVALID")
    return data


def saml_pending_request(*, org: Organization, relay_state: str) -> SamlAuthnRequest | None:
    """The unexpired AuthnRequest the (signed) RelayState names; answered ones included, so
    a replay is told apart from an unsolicited response when the assertion is burnt."""
    relay = _read_relay_state(relay_state, org)
    return (
        SamlAuthnRequest.objects.for_organization(org)
        .filter(request_id=relay["q"], expires_at__gt=timezone.now())
        .first()
    )


@dataclass(frozen=True)
class SamlSignIn:
    ticket: str
    redirect: str
    user: User


def saml_burn(
    *,
    org: Organization,
    pending: SamlAuthnRequest,
    assertion_id: str,
    not_on_or_after: dt.datetime | None,
) -> None:
    """One sign-in per assertion and per request: a second use is a replay."""
    now = timezone.now()
    expires = max(not_on_or_after or now, now) + ASSERTION_MEMORY
    try:
        with transaction.atomic():
            SamlConsumedAssertion.objects.for_organization(org).filter(expires_at__lt=now).delete()
            SamlConsumedAssertion.objects.for_organization(org).create(
                organization=org,
                assertion_id=assertion_id[:256],
                expires_at=expires,
            )
            burned = (
                SamlAuthnRequest.objects.for_organization(org)
                .filter(pk=pending.pk, consumed_at=None)
                .update(consumed_at=now)
            )
            if burned != 1:
                raise IntegrityError("request already answered")
    except IntegrityError:
        raise APIError("SAML_ASSERTION_REPLAYED") from None


def saml_member(
    *, org: Organization, email: str | None, name_id: str, request=None
) -> tuple[User, Membership]:
    """The active member the assertion names, or 403 SAML_USER_NOT_IN_ORG (audited)."""
    user = User.objects.filter(email__iexact=email).first() if email else None
    membership = (
        Membership.objects.for_organization(org).filter(user=user).first() if user else None
    )
    if membership is None or not user.is_active:
        audit_record(
            action="saml.login_refused",
            organization=org,
            actor_type="system",
            request=request,
            metadata={"reason": "user_not_in_org", "name_id": name_id[:200]},
        )
        raise APIError("SAML_USER_NOT_IN_ORG")
    return user, membership


def saml_sign_in(
    *,
    org: Organization,
    pending: SamlAuthnRequest,
    user: User,
    membership: Membership,
    name_id: str,
    name_id_format: str,
    display_name: str,
    assertion_id: str,
    request=None,
) -> SamlSignIn:
    """Link (first time: provision) the member and mint the dashboard's one-time ticket."""
    now = timezone.now()
    with transaction.atomic():
        link, created = SamlUserLink.objects.for_organization(org).get_or_create(
            organization=org,
            user=user,
            defaults={
                "name_id": name_id,
                "name_id_format": name_id_format,
                "last_login_at": now,
            },
        )
        if created:
            # First SAML sign-in of an invited member: the IdP's name fills an empty one.
            if display_name and not user.name:
                user.name = display_name[:200]
                user.save(update_fields=["name"])
            audit_record(
                action="saml.user_provisioned",
                organization=org,
                actor_type="user",
                actor_id=user.pk,
                target=user,
                request=request,
                metadata={"role": membership.role},
            )
        else:
            link.name_id, link.name_id_format = name_id, name_id_format
            link.last_login_at = now
            link.save(update_fields=["name_id", "name_id_format", "last_login_at"])
        SsoTicket.objects.for_organization(org).filter(
            expires_at__lt=now - dt.timedelta(days=1)
        ).delete()
        raw = secrets.token_urlsafe(32)
        SsoTicket.objects.for_organization(org).create(
            organization=org,
            user=user,
            ticket_hash=_digest(raw),
            redirect=pending.redirect,
            expires_at=now + TICKET_TTL,
        )
        audit_record(
            action="saml.login",
            organization=org,
            actor_type="user",
            actor_id=user.pk,
            target=user,
            request=request,
            metadata={"assertion_id": assertion_id[:100]},
        )
    return SamlSignIn(ticket=raw, redirect=pending.redirect, user=user)


def sso_ticket_exchange(
    *, ticket: str, ip: str | None, user_agent: str
) -> tuple[UserSession, str, str]:
    """Trade a one-time ticket for a dashboard session: (session, token, redirect)."""
    now = timezone.now()
    digest = _digest(ticket or "")
    used = (
        SsoTicket.objects.dangerously_unscoped()
        .filter(ticket_hash=digest, used_at=None, expires_at__gt=now)
        .update(used_at=now)
    )
    if used != 1:
        raise APIError("SSO_TICKET_INVALID")
    row = (
        SsoTicket.objects.dangerously_unscoped()
        .select_related("organization", "user")
        .get(ticket_hash=digest)
    )
    org, user = row.organization, row.user
    if (
        not org.is_active
        or not user.is_active
        or not Membership.objects.for_organization(org).filter(user=user).exists()
    ):
        raise APIError("SSO_TICKET_INVALID")
    session, token = identity_services.session_start(
        user=user, organization=org, ip=ip, user_agent=user_agent
    )
    return session, token, row.redirect


def saml_logout(
    *, slug: str, name_id: str | None, session_principal: Principal | None
) -> str | None:
    """End the caller's session (when one is presented) and answer the IdP SLO URL to send
    the browser to, or None when there is none to visit: single sign-on off, or an IdP
    without a single-logout endpoint (Document 1, 4.2). Logout is idempotent: only an
    unknown organization is refused."""
    org, config = saml_organization(slug=slug)
    name_id_format = saml.NAMEID_EMAIL
    if session_principal is not None and session_principal.organization.pk == org.pk:
        session = (
            UserSession.objects.for_organization(org)
            .filter(pk=session_principal.session_id)
            .first()
        )
        if session is not None:
            identity_services.session_revoke(session=session, principal=session_principal)
            audit_record(action="saml.logout", principal=session_principal, target=session)
        link = (
            SamlUserLink.objects.for_organization(org)
            .filter(user_id=session_principal.user_id)
            .first()
        )
        if link is not None and not name_id:
            name_id, name_id_format = link.name_id, link.name_id_format
        elif not name_id:
            user = User.objects.filter(pk=session_principal.user_id).first()
            name_id = user.email if user else None
    if config is None or not name_id:
        return None
    return saml.logout_request_location(
        saml.sp_config(config, org.slug),
        config,
        name_id=name_id,
        name_id_format=name_id_format,
        relay_state="logout",
    )


# --- SCIM settings ---------------------------------------------------------------------------


def scim_config_get_or_create(*, organization: Organization) -> ScimConfig:
    config = ScimConfig.objects.for_organization(organization).first()
    if config is None:
        try:
            with transaction.atomic():
                config = ScimConfig.objects.for_organization(organization).create(
                    organization=organization
                )
        except IntegrityError:
            config = ScimConfig.objects.for_organization(organization).get()
    return config


def scim_token_generate(*, principal: Principal, request=None) -> tuple[ScimConfig, str]:
    """A new provisioning token, returned once; the previous one stops working at once."""
    org = principal.organization
    scim_config_get_or_create(organization=org)
    raw = SCIM_TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        config = ScimConfig.objects.for_organization(org).select_for_update().get()
        replaced = config.enabled
        config.token_hash = _digest(raw)
        config.token_last4 = raw[-4:]
        config.token_created_at = timezone.now()
        config.save()
        audit_record(
            action="scim.token_generated",
            principal=principal,
            target=config,
            request=request,
            metadata={"replaced_previous": replaced},
        )
    return config, raw


def scim_config_update(*, principal: Principal, request=None, **fields: Any) -> ScimConfig:
    """PATCH /settings/scim: `enabled: false` revokes the token; `max_role` (no higher than
    the caller's own role) and `group_role_map` shape what groups grant."""
    org = principal.organization
    scim_config_get_or_create(organization=org)
    max_role = fields.get("max_role")
    if max_role and ROLE_RANK[max_role] > ROLE_RANK.get(principal.role, 0):
        raise APIError(
            "INSUFFICIENT_PERMISSIONS", "You cannot let SCIM grant a role above your own."
        )
    with transaction.atomic():
        config = ScimConfig.objects.for_organization(org).select_for_update().get()
        changed = []
        if fields.get("enabled") is False and config.enabled:
            config.token_hash, config.token_last4, config.token_created_at = None, "", None
            changed.append("enabled")
        elif fields.get("enabled") is True and not config.enabled:
            raise validation_error(
                "enabled",
                "Generate a token to enable SCIM (POST /api/v1/settings/scim/generate-token).",
            )
        for name in ("max_role", "group_role_map"):
            if name in fields and getattr(config, name) != fields[name]:
                setattr(config, name, fields[name])
                changed.append(name)
        if changed:
            config.save()
            audit_record(
                action="scim.settings_updated",
                principal=principal,
                target=config,
                request=request,
                metadata={"fields": changed},
            )
    return config


def scim_config_for_token(*, raw_token: str, slug: str) -> ScimConfig | None:
    """The SCIM configuration the bearer token belongs to, when it is that of `slug`."""
    if not raw_token.startswith(SCIM_TOKEN_PREFIX):
        return None
    config = (
        ScimConfig.objects.dangerously_unscoped()
        .select_related("organization")
        .filter(token_hash=_digest(raw_token))
        .first()
    )
    if config is None or config.organization.slug != slug or not config.organization.is_active:
        return None
    return config


def forget_member_sessions(*, organization: Organization, user_id: str) -> list[str]:
    """Drop the cached session snapshots of a member (their role or access changed)."""
    ids = list(
        UserSession.objects.for_organization(organization)
        .filter(user_id=user_id, revoked_at=None)
        .values_list("pk", flat=True)
    )
    credentials.forget_sessions(ids)
    return ids
