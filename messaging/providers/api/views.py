"""Provider accounts (issue 6): `/api/v1/providers` and `/api/v1/providers/{channel}`.

Owners, admins and developers manage them (`providers:read` / `providers:write` for API
keys). `PUT /providers/{channel}` creates the channel's account (201) or replaces it (200);
the path also accepts the account id (`pac_...`). Credentials are write-only.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.response import Response

from messaging.providers import services
from messaging.providers.models import AccountChannel, ProviderAccount
from platform_core.api.views import TenantViewSet
from platform_core.errors import APIError

from . import serializers as s

READ, WRITE = "providers:read", "providers:write"
MANAGERS = {"owner", "admin", "developer"}

_CHANNEL = OpenApiParameter(
    "channel", OpenApiTypes.STR, OpenApiParameter.PATH,
    description="The channel (sms, mms, whatsapp, rcs, email, voice) or the account id "
                "(`pac_...`).")


@extend_schema_view(
    retrieve=extend_schema(parameters=[_CHANNEL]),
)
class ProviderAccountViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = ProviderAccount
    serializer_class = s.ProviderAccountSerializer
    required_scopes = {"GET": READ, "PUT": WRITE, "DELETE": WRITE}
    required_roles = {"GET": MANAGERS, "PUT": MANAGERS, "DELETE": MANAGERS}
    lookup_field = "channel"
    lookup_url_kwarg = "channel"

    def _find(self, identifier: str) -> ProviderAccount | None:
        queryset = self.get_queryset()
        if identifier in AccountChannel.values:
            return queryset.filter(channel=identifier).first()
        if identifier.startswith("pac_"):
            return queryset.filter(pk=identifier).first()
        return None

    def get_object(self) -> ProviderAccount:
        account = self._find(self.kwargs["channel"])
        if account is None:
            raise APIError("NOT_FOUND")
        return account

    @extend_schema(parameters=[_CHANNEL], request=s.ProviderAccountWriteSerializer,
                   responses={200: s.ProviderAccountSerializer, 201: s.ProviderAccountSerializer})
    def update(self, request, channel=None):
        # A channel, or an account id (an unknown one answers 404).
        target = channel if channel in AccountChannel.values else self.get_object().channel
        body = s.ProviderAccountWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        account, created = services.provider_account_put(
            organization=self.organization, channel=target, provider=data["provider"],
            credentials=data.get("credentials"), config=data.get("config") or {},
            base_url=data.get("base_url") or "", enabled=data.get("enabled", True),
            principal=self.principal, request=request,
        )
        return Response(s.ProviderAccountSerializer(account).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(parameters=[_CHANNEL], responses={204: None})
    def destroy(self, request, channel=None):
        services.provider_account_delete(account=self.get_object(), principal=self.principal,
                                         request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)
