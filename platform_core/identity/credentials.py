"""Verifying credentials into principals, with an authentication cache.

The snapshot of an API key or session (with its organization) is cached by digest or
session id in two levels: in the process (`local_snapshots`, invalidated over pub/sub) and
in the shared cache. In the steady state a request reads neither the database nor Redis.
Every change that can refuse a credential (revocation, deactivation, role or organization
change) goes through `forget_*`, which deletes the shared entry and tells every process to
drop its copy, so a revoked key fails on the very next request.
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models.base import ModelState
from django.utils import timezone

from platform_core.api.ratelimit import StandardCounter, read_and_count
from platform_core.errors import APIError
from platform_core.tenancy.models import Membership, Organization

from . import local_snapshots
from .models import APIKey, KeyMode, KeyType, UserSession
from .principal import Principal, role_for_key

KEY_BRAND = "svc_"
KEY_PREFIXES = {
    (KeyMode.LIVE, KeyType.SECRET): "svc_live_sk_",
    (KeyMode.TEST, KeyType.SECRET): "svc_test_sk_",
    (KeyMode.LIVE, KeyType.PUBLIC): "svc_live_pk_",
    (KeyMode.TEST, KeyType.PUBLIC): "svc_test_pk_",
}
_SNAPSHOT_TTL = 300
_MISSING = "missing"
_LAST_USED_EVERY = 60.0
_last_used_written: dict[str, float] = {}

_ORG_FIELDS = tuple(f.attname for f in Organization._meta.concrete_fields)


def digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def generate_key(mode: str, key_type: str) -> str:
    body = secrets.token_urlsafe(30).replace("-", "x").replace("_", "y")
    return KEY_PREFIXES[(mode, key_type)] + body


def _org_snapshot(org: Organization) -> dict[str, Any]:
    return {f: getattr(org, f) for f in _ORG_FIELDS}


def _org_from_snapshot(data: dict[str, Any]) -> Organization:
    """A fresh instance per request, built like `Model.from_db` without `__init__`'s
    per-field work (a field missing from an older snapshot is simply deferred)."""
    org = Organization.__new__(Organization)
    org.__dict__.update(data)
    org._state = ModelState()
    org._state.adding = False
    org._state.db = "default"
    return org


def _key_cache_key(key_digest: str) -> str:
    return f"auth:key:{key_digest}"


def _session_cache_key(session_id: str) -> str:
    return f"auth:ses:{session_id}"


def _snapshot(cache_key: str, counter: StandardCounter | None, identity: str, load):
    """The cached snapshot (process copy, then shared cache, then `load()`), counting the
    standard rate bucket on the way (see `ratelimit.read_and_count`)."""
    local = local_snapshots.get(cache_key)
    if local is not None:
        read_and_count(None, counter, identity)
        return local
    seen = local_snapshots.generation()
    snapshot = read_and_count(cache_key, counter, identity)
    if snapshot is None:
        snapshot = load()
        cache.set(cache_key, snapshot, 30 if snapshot == _MISSING else _SNAPSHOT_TTL)
    if snapshot != _MISSING:
        local_snapshots.put(cache_key, snapshot, seen)
    return snapshot


# --- API keys ----------------------------------------------------------------------------


def _load_key_snapshot(key_digest: str) -> dict[str, Any] | str:
    key = (
        APIKey.objects.dangerously_unscoped()
        .select_related("organization")
        .filter(key_hash=key_digest)
        .first()
    )
    if key is None or key.revoked_at is not None:
        return _MISSING
    return {
        "id": key.pk,
        "type": key.type,
        "mode": key.mode,
        "scopes": list(key.scopes),
        "allowed_ips": list(key.allowed_ips or []),
        "org": _org_snapshot(key.organization),
    }


def _ip_allowed(client_ip: str | None, ranges: list[str]) -> bool:
    if not ranges:
        return True
    if not client_ip:
        return False
    try:
        address = ipaddress.ip_address(client_ip)
    except ValueError:
        return False
    for cidr in ranges:
        try:
            if address in ipaddress.ip_network(cidr, strict=False):
                return True
        except ValueError:
            continue
    return False


def _touch_last_used(key_id: str) -> None:
    """Record use at most once a minute per process: auth stays a cache read."""
    now = time.monotonic()
    if now - _last_used_written.get(key_id, -_LAST_USED_EVERY) < _LAST_USED_EVERY:
        return
    _last_used_written[key_id] = now
    APIKey.objects.dangerously_unscoped().filter(pk=key_id).update(last_used_at=timezone.now())


def principal_for_api_key(
    raw: str, client_ip: str | None, *, counter: StandardCounter | None = None
) -> Principal:
    """`counter`, when given, is counted in the same cache round trip as the snapshot read."""
    if not raw.startswith(KEY_BRAND):
        raise APIError("INVALID_API_KEY")
    key_digest = digest(raw)
    cache_key = _key_cache_key(key_digest)
    snapshot = _snapshot(cache_key, counter, f"k:{key_digest[:32]}",
                         lambda: _load_key_snapshot(key_digest))
    if snapshot == _MISSING:
        raise APIError("INVALID_API_KEY")
    org = snapshot["org"]
    if not org["is_active"]:
        raise APIError("INVALID_API_KEY", "The organization of this key is deactivated.")
    if (snapshot["mode"] == KeyMode.TEST) != bool(org["sandbox"]):
        raise APIError("WRONG_KEY_MODE")
    if not _ip_allowed(client_ip, snapshot["allowed_ips"]):
        raise APIError("IP_NOT_ALLOWED")
    _touch_last_used(snapshot["id"])
    scopes = frozenset(snapshot["scopes"])
    return Principal(
        kind="api_key",
        organization=_org_from_snapshot(org),
        role=role_for_key(snapshot["type"], scopes),
        scopes=scopes,
        key_id=snapshot["id"],
        key_type=snapshot["type"],
    )


def _drop(cache_keys: list[str]) -> None:
    """Delete snapshots now and again once the surrounding transaction commits: a request
    racing the transaction could otherwise re-cache the old state it still reads."""
    if not cache_keys:
        return

    def drop() -> None:
        cache.delete_many(cache_keys)
        local_snapshots.invalidate(cache_keys)

    drop()
    transaction.on_commit(drop)


def forget_api_key(key_hash: str) -> None:
    forget_api_keys([key_hash])


def forget_api_keys(key_hashes: list[str]) -> None:
    _drop([_key_cache_key(h) for h in key_hashes])


# --- Session tokens ------------------------------------------------------------------------


def _jwt_secret() -> str:
    return hashlib.sha256(f"session-jwt:{settings.SECRET_KEY}".encode()).hexdigest()


def issue_session_token(session: UserSession, *, impersonator_id: str | None = None) -> str:
    claims = {
        "sub": session.user_id,
        "org": session.organization_id,
        "sid": session.pk,
        "iat": int(session.created_at.timestamp()),
        "exp": int(session.expires_at.timestamp()),
        "typ": "session",
    }
    if impersonator_id:
        claims["imp"] = impersonator_id
    return jwt.encode(claims, _jwt_secret(), algorithm="HS256")


def session_expiry() -> datetime:
    return datetime.now(UTC) + timedelta(seconds=settings.SESSION_TOKEN_TTL_SECONDS)


def _load_session_snapshot(session_id: str) -> dict[str, Any] | str:
    session = (
        UserSession.objects.dangerously_unscoped()
        .select_related("organization", "user")
        .filter(pk=session_id)
        .first()
    )
    if session is None or not session.is_live or not session.user.is_active:
        return _MISSING
    membership = (
        Membership.objects.for_organization(session.organization)
        .filter(user_id=session.user_id)
        .only("role")
        .first()
    )
    if membership is None:
        return _MISSING
    return {
        "user_id": session.user_id,
        "role": membership.role,
        "expires_at": session.expires_at.timestamp(),
        "org": _org_snapshot(session.organization),
    }


def principal_for_session_token(token: str, *, counter: StandardCounter | None = None) -> Principal:
    try:
        claims = jwt.decode(
            token, _jwt_secret(), algorithms=["HS256"], options={"require": ["exp", "sid", "sub"]}
        )
    except jwt.ExpiredSignatureError:
        raise APIError("EXPIRED_TOKEN") from None
    except jwt.PyJWTError:
        raise APIError("UNAUTHORIZED", "The session token is not valid.") from None
    if claims.get("typ") != "session":
        raise APIError("UNAUTHORIZED", "The session token is not valid.")
    cache_key = _session_cache_key(claims["sid"])
    snapshot = _snapshot(cache_key, counter, f"s:{claims['sid']}",
                         lambda: _load_session_snapshot(claims["sid"]))
    if snapshot == _MISSING or snapshot["expires_at"] < time.time():
        raise APIError("EXPIRED_TOKEN")
    if snapshot["user_id"] != claims["sub"] or not snapshot["org"]["is_active"]:
        raise APIError("EXPIRED_TOKEN")
    return Principal(
        kind="session",
        organization=_org_from_snapshot(snapshot["org"]),
        role=snapshot["role"],
        user_id=snapshot["user_id"],
        session_id=claims["sid"],
        impersonator_id=claims.get("imp"),
    )


def forget_session(session_id: str) -> None:
    forget_sessions([session_id])


def forget_sessions(session_ids: list[str]) -> None:
    _drop([_session_cache_key(s) for s in session_ids])


# --- Internal service token ------------------------------------------------------------


def principal_for_internal_token(token: str, org_ref: str) -> Principal:
    expected = settings.INTERNAL_SERVICE_TOKEN
    if not expected or not secrets.compare_digest(token, expected):
        raise APIError("UNAUTHORIZED", "The internal service token is not valid.")
    org = (
        Organization.objects.filter(pk=org_ref).first()
        or Organization.objects.filter(slug=org_ref).first()
    )
    if org is None or not org.is_active:
        raise APIError("UNAUTHORIZED", "X-Organization-Id does not name an organization.")
    return Principal(kind="internal", organization=org, role="developer")
