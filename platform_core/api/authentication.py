"""The authentication order of Document 1, section 5 (rules 1-3 and 7), in one class."""

from __future__ import annotations

from django.conf import settings
from rest_framework.authentication import BaseAuthentication

from platform_core.api.ratelimit import StandardCounter
from platform_core.errors import APIError
from platform_core.identity import credentials
from platform_core.identity.principal import PrincipalUser

WWW_AUTHENTICATE = 'Bearer realm="api"'


def client_ip(request) -> str | None:
    if settings.TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        if forwarded:
            return forwarded.split(",")[0].strip()
    return request.META.get("REMOTE_ADDR")


class PlatformAuthentication(BaseAuthentication):
    """`X-API-Key` first; then `Authorization: Bearer`: a JWT (`eyJ…`) is always a session
    token, a value with the key prefix is an API key; then the internal service token."""

    def authenticate(self, request):
        try:
            return self._authenticate(request)
        except APIError as exc:
            if exc.status == 401:  # RFC 9110: every 401 names the scheme to use.
                exc.headers.setdefault("WWW-Authenticate", WWW_AUTHENTICATE)
            raise

    def _authenticate(self, request):
        meta = request.META
        # The standard rate bucket is counted in the credential's cache round trip; the
        # base view checks it after permissions.
        counter = request.standard_rate_counter = StandardCounter(getattr(request, "method", "GET"))
        raw_key = meta.get("HTTP_X_API_KEY", "").strip()
        if raw_key:
            principal = credentials.principal_for_api_key(
                raw_key, client_ip(request), counter=counter
            )
            return PrincipalUser(principal), principal
        authorization = meta.get("HTTP_AUTHORIZATION", "")
        if authorization:
            scheme, _, value = authorization.partition(" ")
            value = value.strip()
            if scheme.lower() != "bearer" or not value:
                raise APIError("UNAUTHORIZED", "Use `Authorization: Bearer <token>`.")
            if value.startswith("eyJ"):
                principal = credentials.principal_for_session_token(value, counter=counter)
            elif value.startswith(credentials.KEY_BRAND):
                principal = credentials.principal_for_api_key(
                    value, client_ip(request), counter=counter
                )
            else:
                raise APIError("UNAUTHORIZED", "The bearer token is not recognized.")
            return PrincipalUser(principal), principal
        internal = meta.get("HTTP_X_INTERNAL_SERVICE_TOKEN", "")
        if internal:
            principal = credentials.principal_for_internal_token(
                internal, meta.get("HTTP_X_ORGANIZATION_ID", "")
            )
            return PrincipalUser(principal), principal
        return None

    def authenticate_header(self, request) -> str:
        # Present so that DRF answers 401, not 403, to unauthenticated requests.
        return WWW_AUTHENTICATE
