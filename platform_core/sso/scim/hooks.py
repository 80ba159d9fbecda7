"""The organization-aware hooks django-scim2 is configured with (SCIM_SERVICE_PROVIDER in
settings): authentication by the organization's SCIM token, tenancy of every lookup, the
shape of querysets, the per-organization base location and ServiceProviderConfig.

The package assumes one SCIM tenant per site, authenticated by a prior Django
authentication middleware (`request.user`). Here every organization is its own SCIM
service provider under /scim/v2/{orgSlug}/, authenticated by its own revocable token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest, HttpResponse
from django_scim import middleware as scim_middleware
from django_scim.middleware import SCIMAuthCheckMiddleware
from django_scim.models import SCIMServiceProviderConfig

from platform_core.api import ratelimit
from platform_core.api.ratelimit import RateLimit
from platform_core.errors import APIError
from platform_core.tenancy.context import reset_current_organization, set_current_organization
from platform_core.tenancy.models import Membership

from .. import services as sso_services
from ..models import ScimGroup, ScimUser
from . import services as scim_services
from .errors import ScimError
from .schemas import service_provider_config

WWW_AUTHENTICATE = 'Bearer realm="scim"'


def _unauthorized(detail: str) -> ScimError:
    return ScimError(
        401, detail, code="UNAUTHORIZED", headers={"WWW-Authenticate": WWW_AUTHENTICATE}
    )


class ScimTokenAuthMiddleware(SCIMAuthCheckMiddleware):
    """AUTH_CHECK_MIDDLEWARE: wraps every SCIM view's dispatch. The package's version only
    checks that a prior middleware signed `request.user` in; ours authenticates the Bearer
    token against the organization named by the URL's slug (another organization's token,
    a revoked or an unknown one: the same 401), enforces the per-organization rate limit,
    and sets the tenant context for the duration of the request, so every tenant manager
    query inside the views is that organization's."""

    def __call__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            config = self._authenticate(request, kwargs.get("slug", ""))
            self._rate_limit(config)
        except ScimError as exc:
            response = exc.response()
            self.process_response(request, response)
            return response
        request.scim_config = config
        request.scim_organization = config.organization
        request.scim_base_url = f"{settings.PUBLIC_BASE_URL}/scim/v2/{config.organization.slug}"
        request.scim_actor = scim_services.ScimActor(config.organization, config, request)
        token = set_current_organization(config.organization)
        try:
            if self.should_log_request(request):
                self.log_request(request)
            return self.process_response(request, self.get_response(request, *args, **kwargs))
        finally:
            reset_current_organization(token)

    def should_log_request(self, request: HttpRequest) -> bool:
        # The package reverses its single 'scim:root'; every route wrapped here is SCIM.
        # It also builds (parses) the logged bodies before asking the logger: only at DEBUG.
        return scim_middleware.logger.isEnabledFor(logging.DEBUG)

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if self.should_log_request(request):
            self.log_response(request, response)
        return response

    @staticmethod
    def _authenticate(request: HttpRequest, slug: str):
        scheme, _, token = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _unauthorized("Send the organization's SCIM token as Authorization: Bearer.")
        config = sso_services.scim_config_for_token(raw_token=token.strip(), slug=slug)
        if config is None:
            raise _unauthorized("The SCIM token is not valid for this organization.")
        return config

    @staticmethod
    def _rate_limit(config) -> None:
        per_minute = getattr(settings, "SCIM_RATE_LIMIT_PER_MINUTE", 1200)
        try:
            ratelimit.enforce(
                [RateLimit("scim", per_minute, 60, per="organization")],
                {"organization": config.organization_id},
            )
        except APIError as exc:
            raise ScimError(429, exc.message, code="RATE_LIMITED", headers=exc.headers) from None


def base_location(request: HttpRequest | None = None, *args: Any, **kwargs: Any) -> str:
    """BASE_LOCATION_GETTER: the organization's own SCIM root."""
    return request.scim_base_url


def extra_filter_kwargs_getter(model: Any) -> Callable[..., dict[str, Any]]:
    """GET_EXTRA_MODEL_FILTER_KWARGS_GETTER: every lookup, list and search of the package's
    views is restricted to the authenticated organization (on top of the tenant manager,
    so a token can never reach another organization's rows even through a raw path)."""

    def get_extra_filter_kwargs(request: HttpRequest, *args: Any, **kwargs: Any) -> dict:
        return {"organization_id": request.scim_organization.pk}

    return get_extra_filter_kwargs


def _user_queryset(qs: QuerySet, organization) -> QuerySet:
    """Users as the adapter renders them: person, groups and membership in two queries."""
    members = Membership.objects.for_organization(organization).filter(user_id=OuterRef("user_id"))
    return (
        qs.select_related("user")
        .prefetch_related("groups")
        .annotate(is_member=Exists(members))
        .order_by("created_at", "pk")
    )


def _group_queryset(qs: QuerySet) -> QuerySet:
    return qs.prefetch_related("members").order_by("created_at", "pk")


def queryset_post_processor_getter(model: Any) -> Callable[..., QuerySet]:
    """GET_QUERYSET_POST_PROCESSOR_GETTER: prefetching (no N+1) and a stable creation order
    for startIndex paging (the package orders by the id field)."""

    def post_process(request: HttpRequest, qs: QuerySet, *args: Any, **kwargs: Any) -> QuerySet:
        if qs.model is ScimUser:
            return _user_queryset(qs, request.scim_organization)
        if qs.model is ScimGroup:
            return _group_queryset(qs)
        return qs

    return post_process


def object_post_processor_getter(model: Any) -> Callable[..., Any]:
    """GET_OBJECT_POST_PROCESSOR_GETTER: the single object, shaped like a list row."""

    def post_process(request: HttpRequest, obj: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(obj, ScimUser):
            return _user_queryset(
                ScimUser.objects.filter(pk=obj.pk), request.scim_organization
            ).get()
        if isinstance(obj, ScimGroup):
            return _group_queryset(ScimGroup.objects.filter(pk=obj.pk)).get()
        return obj

    return post_process


class ServiceProviderConfig(SCIMServiceProviderConfig):
    """SERVICE_PROVIDER_CONFIG_MODEL: what this service provider really supports (filter
    yes, bulk and password change no, Bearer token authentication)."""

    def to_dict(self) -> dict[str, Any]:
        return service_provider_config(base_location(self.request))
