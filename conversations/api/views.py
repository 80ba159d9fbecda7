"""Conversations (Document 2, 4.8; 0-conventions.md 7): list, read, and open the thread of
a contact on a channel. The rest of the conversation operations arrive with their issue."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status
from rest_framework.response import Response

from contacts.models import Contact
from conversations import selectors, services
from conversations.models import Conversation
from platform_core.api.views import TenantViewSet
from platform_core.errors import validation_error

from . import serializers as s

READ, WRITE = "conversations:read", "conversations:write"

_FILTERS = [
    OpenApiParameter("status", OpenApiTypes.STR, enum=["open", "closed"]),
    OpenApiParameter("channel", OpenApiTypes.STR,
                     enum=["sms", "mms", "whatsapp", "rcs", "email", "voice"]),
    OpenApiParameter("contact_id", OpenApiTypes.STR, description="Threads of one contact."),
]


class ConversationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = Conversation
    serializer_class = s.ConversationSerializer
    required_scopes = {"GET": READ, "POST": WRITE}

    def scope_queryset(self, queryset):
        if self.action == "list":
            queryset = selectors.conversations_filtered(queryset, self.request.query_params)
        return queryset

    @extend_schema(parameters=_FILTERS)
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=s.ConversationCreateSerializer,
        responses={201: s.ConversationSerializer, 200: s.ConversationSerializer},
        description=(
            "The open thread of the contact on the channel: 201 when it is new (emits "
            "`conversation.created`), 200 with the existing one. One open thread exists per "
            "contact and channel. Unknown `contact_id`: 422 VALIDATION_ERROR."
        ),
    )
    def create(self, request):
        body = s.ConversationCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        contact_id = body.validated_data["contact_id"]
        if not Contact.objects.filter(pk=contact_id).exists():
            raise validation_error("contact_id", "No contact with this id.")
        conversation, created = services.conversation_open(
            principal=self.principal, contact_id=contact_id,
            channel=body.validated_data["channel"], request=request,
        )
        return Response(s.ConversationSerializer(conversation).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
