"""Identity endpoints of 0-conventions.md section 2: login, sessions, users, keys, organization."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.response import Response

from platform_core.api.authentication import client_ip
from platform_core.api.ratelimit import RateLimit
from platform_core.api.views import PlatformAPIView, PublicAPIView, TenantViewSet
from platform_core.errors import APIError
from platform_core.identity import services
from platform_core.identity.models import APIKey, UserSession
from platform_core.tenancy.models import Membership, Organization

from . import serializers as s

ADMINS = {"owner", "admin"}


class LoginView(PublicAPIView):
    rate_limits = {"POST": [RateLimit("login", 20, 60, per="ip")]}
    idempotent_posts = False

    @extend_schema(request=s.LoginSerializer, responses=s.LoginResultSerializer, auth=[])
    def post(self, request):
        body = s.LoginSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        session, token = services.session_login(
            email=body.validated_data["email"],
            password=body.validated_data["password"],
            organization_slug=body.validated_data.get("organization") or None,
            ip=client_ip(request),
            user_agent=request.META.get("HTTP_USER_AGENT", ""),
        )
        return Response(s.LoginResultSerializer(s.session_result(session, token)).data)


class LogoutView(PlatformAPIView):
    required_scopes = {"POST": None}
    idempotent_posts = False

    @extend_schema(request=None, responses={204: None})
    def post(self, request):
        if self.principal.session_id is None:
            raise APIError("INSUFFICIENT_PERMISSIONS", "Logout ends a session; API keys have none.")
        session = UserSession.objects.get(pk=self.principal.session_id)
        services.session_revoke(session=session, principal=self.principal)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SessionViewSet(mixins.ListModelMixin, mixins.DestroyModelMixin, TenantViewSet):
    """The caller's own dashboard sessions."""

    model = UserSession
    serializer_class = s.SessionSerializer
    required_scopes = {"GET": None, "DELETE": None}

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if self.principal.user_id is None:
            raise APIError("INSUFFICIENT_PERMISSIONS", "Sessions belong to signed-in users.")

    def scope_queryset(self, queryset):
        # Live sessions only: revoked and expired ones are gone for the caller.
        return queryset.filter(
            user_id=self.principal.user_id, revoked_at=None, expires_at__gt=timezone.now()
        )

    def get_serializer_context(self):
        return {
            **super().get_serializer_context(),
            "current_session_id": getattr(self.request.auth, "session_id", None),
        }

    def destroy(self, request, *args, **kwargs):
        session = self.get_object()
        if session.pk == self.principal.session_id:
            raise APIError("CANNOT_REVOKE_CURRENT_SESSION")
        services.session_revoke(session=session, principal=self.principal)
        return Response(status=status.HTTP_204_NO_CONTENT)


class UserViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, TenantViewSet
):
    """Members of the organization; the id in the path is the user's id."""

    model = Membership
    serializer_class = s.MemberSerializer
    lookup_field = "user_id"
    lookup_url_kwarg = "pk"
    required_scopes = {
        "GET": "users:read",
        "POST": "users:write",
        "PATCH": "users:write",
        "DELETE": "users:write",
    }
    required_roles = {"POST": ADMINS, "PATCH": ADMINS, "DELETE": ADMINS}

    def scope_queryset(self, queryset):
        return queryset.select_related("user")

    @extend_schema(request=s.MemberCreateSerializer, responses={201: s.MemberSerializer})
    def create(self, request):
        body = s.MemberCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        membership = services.user_invite(
            principal=self.principal,
            request=request,
            email=data["email"],
            name=data["name"],
            role=data["role"],
            password=data.get("password"),
        )
        return Response(s.MemberSerializer(membership).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.MemberUpdateSerializer, responses=s.MemberSerializer)
    def partial_update(self, request, pk=None):
        body = s.MemberUpdateSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        membership = services.user_update(
            principal=self.principal,
            membership=self.get_object(),
            request=request,
            **body.validated_data,
        )
        return Response(s.MemberSerializer(membership).data)

    def destroy(self, request, pk=None):
        services.user_remove(principal=self.principal, membership=self.get_object(),
                             request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class APIKeyViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = APIKey
    serializer_class = s.APIKeySerializer
    required_scopes = {"GET": "api_keys:read", "POST": "api_keys:write", "DELETE": "api_keys:write"}
    required_roles = {
        "GET": ADMINS | {"developer"},
        "POST": ADMINS | {"developer"},
        "DELETE": ADMINS | {"developer"},
    }

    @extend_schema(request=s.APIKeyCreateSerializer, responses={201: s.APIKeyCreatedSerializer})
    def create(self, request):
        body = s.APIKeyCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        key, raw = services.api_key_create(
            organization=self.organization,
            name=data["name"],
            key_type=data["type"],
            mode=data.get("mode"),
            scopes=data["scopes"],
            allowed_ips=data["allowed_ips"],
            principal=self.principal,
            request=request,
        )
        payload = s.APIKeySerializer(key).data
        payload["key"] = raw
        return Response(payload, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.api_key_revoke(key=self.get_object(), principal=self.principal, request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class OrganizationView(PlatformAPIView):
    required_scopes = {"GET": None, "PATCH": "settings:write"}
    required_roles = {"PATCH": ADMINS}

    @extend_schema(responses=s.OrganizationSerializer)
    def get(self, request):
        org = Organization.objects.get(pk=self.organization.pk)
        return Response(s.OrganizationSerializer(org).data)

    @extend_schema(request=s.OrganizationUpdateSerializer, responses=s.OrganizationSerializer)
    def patch(self, request):
        body = s.OrganizationUpdateSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        org = services.organization_update(
            organization=self.organization,
            principal=self.principal,
            request=request,
            **body.validated_data,
        )
        return Response(s.OrganizationSerializer(org).data)
