"""Calling and block-list endpoints (Document 2, 4.5), base `/api/v1/whatsapp`."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from platform_core.api.serialization import represent, validated_input
from platform_core.api.views import PlatformAPIView
from platform_core.errors import validation_error

from .. import selectors
from ..services import blocking, calling
from ..services.common import connection_get
from . import serializers as s
from .common import ADMINS, CALLERS, MASKED_ROLES, READ, WRITE, paginated


class CallingStateView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=s.WhatsAppCallingStateSerializer,
                   description="Meta's calling settings of the number, cached 5 minutes "
                               "(`cached` says whether this answer came from the cache); "
                               "enable / disable / register-webhook invalidate it.")
    def get(self, request, phone_number_id: str):
        connection = connection_get(self.organization, phone_number_id)
        return Response(calling.calling_state(organization=self.organization,
                                              connection=connection))


class _CallingToggle(PlatformAPIView):
    required_scopes = {"POST": WRITE}
    required_roles = {"POST": ADMINS}
    enabled = True

    def post(self, request, phone_number_id: str):
        return Response(calling.set_calling(organization=self.organization,
                                            principal=self.principal,
                                            phone_number_id=phone_number_id,
                                            enabled=self.enabled))


class CallingEnableView(_CallingToggle):
    enabled = True

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT,
                   description="Enable calling (owner/admin; idempotent).")
    def post(self, request, phone_number_id: str):
        return super().post(request, phone_number_id)


class CallingDisableView(_CallingToggle):
    enabled = False

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT,
                   description="Disable calling (owner/admin; idempotent).")
    def post(self, request, phone_number_id: str):
        return super().post(request, phone_number_id)


class CallingWebhookView(PlatformAPIView):
    required_scopes = {"POST": WRITE}
    required_roles = {"POST": ADMINS}

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT,
                   description="Subscribe the app to the `calls` webhook field (to this "
                               "organization's WhatsApp webhook URL); idempotent: a repeat "
                               "answers `already_registered: true` and calls Meta no more.")
    def post(self, request, phone_number_id: str):
        return Response(calling.register_webhook(organization=self.organization,
                                                 principal=self.principal,
                                                 phone_number_id=phone_number_id))


class CallsView(PlatformAPIView):
    required_scopes = {"GET": READ, "POST": WRITE}
    required_roles = {"POST": CALLERS}

    @extend_schema(responses=s.WhatsAppCallSerializer(many=True),
                   description="Call logs, newest first, cursor-paginated; phone numbers "
                               "masked (+1******4567) for viewer-tier callers.")
    def get(self, request):
        mask = self.principal.role in MASKED_ROLES
        return paginated(self, selectors.calls(self.organization), s.WhatsAppCallSerializer,
                         context={"mask": mask})

    @extend_schema(request=s.WhatsAppCallStartSerializer, responses={201: s.WhatsAppCallSerializer},
                   description="Start a business-initiated call (owner, admin, developer). "
                               "Calling must be enabled (409 WHATSAPP_CALLING_DISABLED) and the "
                               "user must have granted permission (422 "
                               "WHATSAPP_CALL_PERMISSION_REQUIRED).")
    def post(self, request):
        body = validated_input(s.WhatsAppCallStartSerializer, request.data).validated_data
        call = calling.call_start(organization=self.organization, principal=self.principal,
                                  to=body["to"], phone_number_id=body.get("phone_number_id"),
                                  session=body.get("session"))
        return Response(represent(s.WhatsAppCallSerializer, call), status=status.HTTP_201_CREATED)


class CallPermissionsView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(parameters=[OpenApiParameter("contact_id", OpenApiTypes.STR, required=True)],
                   responses=OpenApiTypes.OBJECT,
                   description="Meta's call permission of a contact: `permission.status` "
                               "(granted, temporary, no_permission) and the `actions` allowed.")
    def get(self, request):
        contact_id = request.query_params.get("contact_id")
        if not contact_id:
            raise validation_error("contact_id", "contact_id is required.")
        return Response(calling.permissions(organization=self.organization,
                                            contact_id=contact_id))


class _CallAnswer(PlatformAPIView):
    required_scopes = {"POST": WRITE}
    accept = True

    def post(self, request, meta_call_id: str):
        body = validated_input(s.WhatsAppCallAnswerSerializer, request.data or {}).validated_data
        call = calling.call_answer(organization=self.organization, principal=self.principal,
                                   meta_call_id=meta_call_id, accept=self.accept,
                                   session=body.get("session"))
        return Response(represent(s.WhatsAppCallSerializer, call))


class CallAcceptView(_CallAnswer):
    accept = True

    @extend_schema(request=s.WhatsAppCallAnswerSerializer, responses=s.WhatsAppCallSerializer,
                   description="Accept a ringing inbound call (`session`: the SDP answer). "
                               "Not ringing: 409 WHATSAPP_CALL_NOT_RINGING.")
    def post(self, request, meta_call_id: str):
        return super().post(request, meta_call_id)


class CallDeclineView(_CallAnswer):
    accept = False

    @extend_schema(request=s.WhatsAppCallAnswerSerializer, responses=s.WhatsAppCallSerializer,
                   description="Decline (reject) a ringing inbound call.")
    def post(self, request, meta_call_id: str):
        return super().post(request, meta_call_id)


class CallAnalyticsView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=OpenApiTypes.OBJECT,
                   description="Last 30 days: volume (total, inbound, outbound), accepted, "
                               "accept_rate, total and average duration, spend (USD).")
    def get(self, request):
        return Response(selectors.call_analytics(self.organization))


class BlockUsersView(PlatformAPIView):
    required_scopes = {"GET": READ, "POST": WRITE}

    @extend_schema(responses=s.WhatsAppBlockedUserSerializer(many=True),
                   description="Blocked users, paginated.")
    def get(self, request):
        return paginated(self, selectors.blocked(self.organization), s.WhatsAppBlockedUserSerializer)

    @extend_schema(request=s.WhatsAppBlockSerializer, responses=OpenApiTypes.OBJECT,
                   description="Block users (phone numbers or contact ids, at most 100): their "
                               "messages and calls are dropped, sends to them refused.")
    def post(self, request):
        body = validated_input(s.WhatsAppBlockSerializer, request.data).validated_data
        return Response(blocking.block(organization=self.organization, principal=self.principal,
                                       users=body["block_users"]))


class UnblockUsersView(PlatformAPIView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=s.WhatsAppBlockSerializer, responses=OpenApiTypes.OBJECT,
                   description="Unblock users.")
    def post(self, request):
        body = validated_input(s.WhatsAppBlockSerializer, request.data).validated_data
        return Response(blocking.unblock(organization=self.organization,
                                         principal=self.principal, users=body["block_users"]))
