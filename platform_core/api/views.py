"""Base views: the one place where a request becomes a tenant-scoped, rate-limited call.

Every API view derives from `PlatformAPIView` (single endpoints) or `TenantViewSet`
(resources). After authentication they set the current organization from the credential
(never from the request), enforce the rate-limit buckets, begin idempotency for POSTs,
and on the way out add the rate-limit headers and keep the idempotent answer.

`TenantViewSet.get_queryset` cannot be overridden: it starts from the model's
tenant-scoped manager, and subclasses refine it in `scope_queryset`. So an object of
another organization is never found and answers 404 exactly like an unknown id.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.db import models
from django.http import Http404
from rest_framework import viewsets
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from platform_core.tenancy.context import reset_current_organization, set_current_organization

from . import fast_lookup, idempotency, ratelimit
from .authentication import client_ip
from .pagination import KeysetCursorPagination
from .serialization import OutputOnly


class PlatformAPIMixin:
    """Cross-cutting request handling shared by every API view."""

    # Per-endpoint limits on top of the standard read/write buckets, keyed by method.
    rate_limits: ClassVar[dict[str, list[ratelimit.RateLimit]]] = {}
    # Views that do not create anything on POST (queries, actions) may opt out.
    idempotent_posts: ClassVar[bool] = True

    @property
    def principal(self):
        return self.request.auth

    @property
    def organization(self):
        return self.request.auth.organization

    def initial(self, request, *args: Any, **kwargs: Any) -> None:
        self._tenant_token = None
        self._idempotency_record = None
        self._rate_state = None
        super().initial(request, *args, **kwargs)
        principal = request.auth
        if principal is None:
            # Public routes: only their own limits, counted per client address.
            limits = self.get_rate_limits(request.method)
            if limits:
                self._rate_state = ratelimit.enforce(
                    limits, {"ip": client_ip(request) or "unknown"}
                )
            return
        self._tenant_token = set_current_organization(principal.organization)
        self._rate_state = self._enforce_rate_limits(request, principal)
        if self.idempotent_posts:
            self._idempotency_record = idempotency.begin(request, principal.organization)

    def get_rate_limits(self, method: str) -> list[ratelimit.RateLimit]:
        """This route's own limits for `method` (on top of the standard buckets)."""
        return list(self.rate_limits.get(method, []))

    def _enforce_rate_limits(self, request, principal) -> ratelimit.RateState:
        counter = getattr(request, "standard_rate_counter", None)
        states = []
        limits = self.get_rate_limits(request.method)
        if counter is not None and counter.count is not None:
            states.append(counter.check())  # already counted with the credential read
        else:
            limits.insert(0, ratelimit.standard_limit(request.method))
        if limits:
            identities = {
                "credential": principal.rate_limit_identity,
                "organization": principal.organization.pk,
                "ip": client_ip(request) or "unknown",
            }
            states.append(ratelimit.enforce(limits, identities))
        return ratelimit.tightest(states)

    def handle_exception(self, exc: Exception):
        if isinstance(exc, idempotency.Replay):
            return exc.response
        response = super().handle_exception(exc)
        return response

    def finalize_response(self, request, response, *args: Any, **kwargs: Any):
        response = super().finalize_response(request, response, *args, **kwargs)
        state = getattr(self, "_rate_state", None)
        if state is not None:
            for name, value in state.headers().items():
                response.setdefault(name, value)
        record = getattr(self, "_idempotency_record", None)
        if record is not None:
            idempotency.finish(record, response)
        return response

    def dispatch(self, request, *args: Any, **kwargs: Any):
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:
            token = getattr(self, "_tenant_token", None)
            if token is not None:
                reset_current_organization(token)


class PlatformAPIView(PlatformAPIMixin, APIView):
    """A single authenticated endpoint (not a resource collection)."""


class PublicAPIView(PlatformAPIMixin, APIView):
    """An endpoint open without credentials; it still answers in the envelope."""

    authentication_classes: ClassVar[list] = []
    permission_classes: ClassVar[list] = [AllowAny]


class TenantViewSet(PlatformAPIMixin, viewsets.GenericViewSet):
    """Base of every resource viewset. Declare `model`, serializers and `required_scopes`."""

    model: ClassVar[type[models.Model]]
    pagination_class = KeysetCursorPagination
    lookup_value_regex = "[^/]+"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "get_queryset" in cls.__dict__:
            raise TypeError(
                f"{cls.__name__} may not override get_queryset; refine it in scope_queryset"
            )

    def get_queryset(self) -> models.QuerySet:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no tenant
            return self.model._base_manager.none()
        return self.scope_queryset(self.model.objects.all())

    def scope_queryset(self, queryset: models.QuerySet) -> models.QuerySet:
        """Refine the tenant-scoped queryset: filters, select_related, annotations."""
        return queryset

    def get_object(self) -> models.Model:
        # Plain `{id}` detail routes take the precompiled lookup (see api/fast_lookup.py).
        if (
            type(self).scope_queryset is TenantViewSet.scope_queryset
            and self.lookup_field == "pk"
            and not self.filter_backends
        ):
            value = self.kwargs[self.lookup_url_kwarg or self.lookup_field]
            obj = fast_lookup.get_in_tenant(self.model, self.organization.pk, value)
            if obj is None:
                raise Http404
            self.check_object_permissions(self.request, obj)
            return obj
        return super().get_object()

    def get_serializer(self, *args: Any, **kwargs: Any):
        # Reads serialize through a reused serializer (see api/serialization.py).
        if (
            self.request is not None
            and self.request.method in ("GET", "HEAD")
            and args
            and ("data" not in kwargs)
        ):
            return OutputOnly(
                self.get_serializer_class(),
                args[0],
                kwargs.get("many", False),
                self.get_serializer_context(),
            )
        return super().get_serializer(*args, **kwargs)
