"""Messages (Document 2, 4.4; 0-conventions.md section 6) and messaging services."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from messaging import selectors, services
from messaging.models import Message, MessagingService
from platform_core.api.serialization import represent, validated_input
from platform_core.api.views import PlatformAPIView, TenantViewSet
from platform_core.errors import validation_error

from . import serializers as s

READ, WRITE = "messages:read", "messages:write"

_SEND_DESCRIPTION = (
    "Queue one message: 202 with the message (`queued`, or `scheduled` with `send_at`). "
    "At least one of `body`, `template_name`, `media_url` (else 422 MISSING_REQUIRED_FIELD). "
    "Pre-send validation answers 422 INVALID_PHONE_NUMBER, INVALID_EMAIL, INVALID_FROM_NUMBER, "
    "INVALID_TEMPLATE, MISSING_REQUIRED_FIELD, MMS_NANP_ONLY, RECIPIENT_OPTED_OUT or "
    "VALIDATION_ERROR with `error.details.field`; a live organization without a provider for "
    "the channel answers 503 PROVIDER_NOT_WIRED and stores nothing. SMS with media is sent "
    "as MMS. Test mode uses the sandbox double: `+15005550009` fails with error_code 30003, "
    "`+15005550010` is sent without a delivery receipt. Template sends: `template_name`, "
    "`language`, `variables` (checked by the templates family when it offers the check). "
    "Status transitions emit `message.queued`, `message.scheduled`, `message.sent`, "
    "`message.delivered`, `message.canceled` and `message.failed` (also for `undelivered` "
    "and `expired`, with `data.status` telling which) and are POSTed to `status_callback`."
)

_LIST_FILTERS = [
    OpenApiParameter("status", OpenApiTypes.STR, many=True,
                     description="scheduled, queued, sent, delivered, undelivered, failed, "
                                 "expired, canceled, received; comma list or repeated."),
    OpenApiParameter("channel", OpenApiTypes.STR, many=True,
                     description="sms, mms, whatsapp, rcs, email, voice."),
    OpenApiParameter("direction", OpenApiTypes.STR, description="outbound or inbound."),
    OpenApiParameter("to", OpenApiTypes.STR, description="Recipient (normalized like a send)."),
    OpenApiParameter("from", OpenApiTypes.STR, description="Sender."),
    OpenApiParameter("messaging_service_id", OpenApiTypes.STR),
    OpenApiParameter("contact_id", OpenApiTypes.STR),
    OpenApiParameter("conversation_id", OpenApiTypes.STR),
    OpenApiParameter("campaign_id", OpenApiTypes.STR,
                     description="Messages of this broadcast (`cmp_`)."),
    OpenApiParameter("parent_id", OpenApiTypes.STR,
                     description="Fallback messages sent for this message."),
    OpenApiParameter("created_after", OpenApiTypes.DATETIME,
                     description="ISO 8601 date or date-time (inclusive)."),
    OpenApiParameter("created_before", OpenApiTypes.DATETIME,
                     description="ISO 8601 date or date-time (inclusive; a date: whole day)."),
]


def _send(view, request, *, channel: str | None = None) -> Response:
    kwargs = validated_input(s.MessageSendSerializer, request.data).to_service_kwargs()
    if channel is not None:
        given = kwargs.get("channel")
        allowed = {channel, "mms"} if channel == "sms" else {channel}
        if given and given not in allowed:
            raise validation_error("channel", f"This route sends {channel} messages.")
        kwargs["channel"] = given or channel
    message = services.message_send(organization=view.organization, principal=view.principal,
                                    **kwargs)
    return Response(represent(s.MessageSerializer, message), status=status.HTTP_202_ACCEPTED)


class MessageViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = Message
    serializer_class = s.MessageSerializer
    required_scopes = {"GET": READ, "POST": WRITE}

    def scope_queryset(self, queryset):
        if self.action == "list":
            queryset = selectors.messages_filtered(queryset, self.request.query_params,
                                                   organization=self.organization)
        return queryset

    @extend_schema(parameters=_LIST_FILTERS)
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(request=s.MessageSendSerializer, responses={202: s.MessageSerializer},
                   description=_SEND_DESCRIPTION)
    def create(self, request):
        return _send(self, request)

    @extend_schema(request=None, responses=s.MessageSerializer,
                   description="Cancel a scheduled message; any other status: 409 CONFLICT.")
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        message = services.message_cancel(message=self.get_object(), principal=self.principal,
                                          request=request)
        return Response(represent(s.MessageSerializer, message))


class ChannelSendView(PlatformAPIView):
    """`POST /api/v1/messages/{sms,whatsapp,rcs}`: the send with the channel implied."""

    channel: str = "sms"
    required_scopes = {"POST": WRITE}

    @extend_schema(request=s.MessageSendSerializer, responses={202: s.MessageSerializer},
                   description=_SEND_DESCRIPTION)
    def post(self, request):
        return _send(self, request, channel=self.channel)


class SmsSendView(ChannelSendView):
    channel = "sms"


class WhatsAppSendView(ChannelSendView):
    channel = "whatsapp"


class RcsSendView(ChannelSendView):
    channel = "rcs"


class MessagingServiceViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """Messaging services: a sender pool (sticky per recipient), opt-out handling (STOP /
    START / HELP) and an inbound webhook."""

    model = MessagingService
    serializer_class = s.MessagingServiceSerializer
    required_scopes = {"GET": READ, "POST": WRITE, "PATCH": WRITE, "DELETE": WRITE}

    @extend_schema(request=s.MessagingServiceWriteSerializer,
                   responses={201: s.MessagingServiceSerializer})
    def create(self, request):
        body = s.MessagingServiceWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        service = services.messaging_service_create(
            organization=self.organization, principal=self.principal, request=request,
            **body.validated_data)
        return Response(represent(s.MessagingServiceSerializer, service),
                        status=status.HTTP_201_CREATED)

    @extend_schema(request=s.MessagingServiceWriteSerializer,
                   responses=s.MessagingServiceSerializer)
    def partial_update(self, request, pk=None):
        service = self.get_object()
        body = s.MessagingServiceWriteSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        service = services.messaging_service_update(
            service=service, principal=self.principal, request=request, **body.validated_data)
        return Response(represent(s.MessagingServiceSerializer, service))

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.messaging_service_delete(service=self.get_object(), principal=self.principal,
                                          request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CallbackSecretView(PlatformAPIView):
    """The signing secret of status callbacks and inbound webhooks (same scheme as webhooks)."""

    required_scopes = {"GET": WRITE}
    required_roles = {"GET": {"owner", "admin", "developer"}}
    idempotent_posts = False

    @extend_schema(responses=s.CallbackSecretSerializer)
    def get(self, request):
        row = services.callback_secret_get(self.organization)
        return Response(s.CallbackSecretSerializer(row).data)


class CallbackSecretRotateView(PlatformAPIView):
    required_scopes = {"POST": WRITE}
    required_roles = {"POST": {"owner", "admin", "developer"}}

    @extend_schema(request=None, responses=s.CallbackSecretSerializer)
    def post(self, request):
        row = services.callback_secret_rotate(organization=self.organization,
                                              principal=self.principal, request=request)
        return Response(s.CallbackSecretSerializer(row).data)
