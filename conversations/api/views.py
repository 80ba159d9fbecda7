"""Conversations (Document 2, 4.8; 0-conventions.md 7): the inbox, its verbs, routing
answers, handoff, side conversations, sentiment and prediction. Views parse and call
services (writes) or selectors (reads); there is no `PATCH /{id}`."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response

from contacts.models import Contact
from conversations import (
    assignment,
    bulk,
    handoff,
    insights,
    merge,
    replies,
    selectors,
    services,
)
from conversations.models import CHANNELS, Conversation, ConversationStatus, Priority, Sentiment
from platform_core.api.pagination import KeysetCursorPagination
from platform_core.api.serialization import represent
from platform_core.api.views import TenantViewSet
from platform_core.errors import validation_error

from . import serializers as s

READ, WRITE = "conversations:read", "conversations:write"
SIDE = r"side-conversations/(?P<side_id>[^/.]+)"

_FILTERS = [
    OpenApiParameter("status", OpenApiTypes.STR, enum=ConversationStatus.values),
    OpenApiParameter("channel", OpenApiTypes.STR, enum=list(CHANNELS)),
    OpenApiParameter("sentiment", OpenApiTypes.STR, enum=Sentiment.values),
    OpenApiParameter("priority", OpenApiTypes.STR, enum=Priority.values),
    OpenApiParameter("unread", OpenApiTypes.BOOL),
    OpenApiParameter("has_agent", OpenApiTypes.BOOL),
    OpenApiParameter("search", OpenApiTypes.STR,
                     description="Contact name, phone or email, or message text."),
    OpenApiParameter("contact_id", OpenApiTypes.STR, description="Threads of one contact."),
    OpenApiParameter("assignee_id", OpenApiTypes.STR),
    OpenApiParameter("queue", OpenApiTypes.STR),
]
_SIDE_ID = OpenApiParameter("side_id", OpenApiTypes.STR, OpenApiParameter.PATH)
_CONV = s.ConversationSerializer


def _body(serializer_class, request):
    body = serializer_class(data=request.data)
    body.is_valid(raise_exception=True)
    return body.validated_data


def _page(view, queryset, serializer_class, *, ordering=("-id",), context=None):
    paginator = KeysetCursorPagination(ordering=ordering)
    rows = paginator.paginate_queryset(queryset, view.request, view)
    data = represent(serializer_class, rows, many=True, context=context or {})
    return paginator.get_paginated_response(data)


def _conversation_data(conversation: Conversation) -> dict:
    contacts = selectors.contacts_by_id(conversation.organization, [conversation.contact_id])
    return represent(_CONV, conversation, many=False, context={"contacts": contacts})


class ConversationViewSet(mixins.RetrieveModelMixin, TenantViewSet):
    model = Conversation
    serializer_class = _CONV
    required_scopes = {"GET": READ, "POST": WRITE, "PUT": WRITE}

    def scope_queryset(self, queryset):
        if self.action == "list":
            queryset = selectors.conversations_filtered(queryset, self.request.query_params,
                                                        self.organization)
        return queryset

    def _ok(self, conversation: Conversation, code: int = 200) -> Response:
        return Response(_conversation_data(conversation), status=code)

    @extend_schema(parameters=_FILTERS, responses=_CONV(many=True))
    def list(self, request, *args, **kwargs):
        paginator = KeysetCursorPagination()
        rows = paginator.paginate_queryset(self.get_queryset(), request, self)
        contacts = selectors.contacts_by_id(self.organization, [r.contact_id for r in rows])
        # Through the reused serializer (api/serialization.py): building the fields per
        # request costs more than the page's queries.
        data = represent(_CONV, rows, many=True, context={"contacts": contacts})
        return paginator.get_paginated_response(data)

    def retrieve(self, request, *args, **kwargs):
        return self._ok(self.get_object())

    @extend_schema(
        request=s.ConversationCreateSerializer, responses={201: _CONV, 200: _CONV},
        description="The live thread of the contact on the channel: 201 when it is new "
                    "(emits `conversation.created`), 200 with the existing one.")
    def create(self, request):
        data = _body(s.ConversationCreateSerializer, request)
        if not Contact.objects.filter(pk=data["contact_id"]).exists():
            raise validation_error("contact_id", "No contact with this id.")
        conversation, created = services.conversation_open(
            principal=self.principal, contact_id=data["contact_id"], channel=data["channel"],
            request=request)
        return self._ok(conversation, 201 if created else 200)

    # --- Thread and feeds -------------------------------------------------------------

    @extend_schema(methods=["GET"], responses=s.ThreadMessageSerializer(many=True),
                   parameters=[OpenApiParameter("participant_id", OpenApiTypes.STR)],
                   description="The thread, oldest first.")
    @extend_schema(methods=["POST"], request=s.ReplySerializer,
                   responses={202: s.ThreadMessageSerializer},
                   description="Reply (202, queued) on the inbound channel unless `channel` "
                               "is given. Refused (409 CONVERSATION_NOT_OPEN) while closed, "
                               "snoozed or archived; a chat-app reply outside the 24-hour "
                               "window answers 422 OUTSIDE_CUSTOMER_SERVICE_WINDOW.")
    @action(detail=True, methods=["get", "post"], url_path="messages")
    def messages(self, request, pk=None):
        if request.method == "POST":
            data = _body(s.ReplySerializer, request)
            message = replies.conversation_reply(principal=self.principal,
                                                 conversation_id=pk, **data)
            return Response(s.ThreadMessageSerializer(message).data,
                            status=status.HTTP_202_ACCEPTED)
        conversation = self.get_object()
        return _page(self, selectors.thread_messages(conversation, request.query_params),
                     s.ThreadMessageSerializer, ordering=("id",))

    @extend_schema(responses=s.ActivitySerializer(many=True))
    @action(detail=True, methods=["get"], url_path="activity")
    def activity(self, request, pk=None):
        return _page(self, selectors.activity_of(self.get_object()), s.ActivitySerializer)

    # --- Lifecycle ---------------------------------------------------------------------

    @extend_schema(request=None, responses=_CONV)
    @action(detail=True, methods=["post"], url_path="close")
    def close(self, request, pk=None):
        return self._ok(services.conversation_close(principal=self.principal,
                                                    conversation_id=pk))

    @extend_schema(request=None, responses=_CONV)
    @action(detail=True, methods=["post"], url_path="reopen")
    def reopen(self, request, pk=None):
        return self._ok(services.conversation_reopen(principal=self.principal,
                                                     conversation_id=pk))

    @extend_schema(request=s.SnoozeSerializer, responses=_CONV)
    @action(detail=True, methods=["post"], url_path="snooze")
    def snooze(self, request, pk=None):
        data = _body(s.SnoozeSerializer, request)
        return self._ok(services.conversation_snooze(principal=self.principal,
                                                     conversation_id=pk, until=data["until"]))

    @extend_schema(request=s.EscalateSerializer, responses=_CONV)
    @action(detail=True, methods=["post"], url_path="escalate")
    def escalate(self, request, pk=None):
        data = _body(s.EscalateSerializer, request)
        return self._ok(services.conversation_escalate(principal=self.principal,
                                                       conversation_id=pk, **data))

    @extend_schema(request=s.MergeSerializer, responses=_CONV,
                   description="Merge `source_conversation_id` into this conversation. "
                               "Different contacts whose only overlap is phone or email: "
                               "422 WEAK_IDENTITY_MATCH_REQUIRES_CONFIRMATION unless "
                               "`confirm_weak_identity` is true.")
    @action(detail=True, methods=["post"], url_path="merge")
    def merge(self, request, pk=None):
        data = _body(s.MergeSerializer, request)
        return self._ok(merge.conversation_merge(
            principal=self.principal, conversation_id=pk,
            source_id=data["source_conversation_id"],
            confirm_weak_identity=data["confirm_weak_identity"]))

    @extend_schema(request=s.ChannelSerializer, responses=_CONV)
    @action(detail=True, methods=["post"], url_path="resume-channel")
    def resume_channel(self, request, pk=None):
        data = _body(s.ChannelSerializer, request)
        return self._ok(services.conversation_resume_channel(
            principal=self.principal, conversation_id=pk, channel=data["channel"]))

    @extend_schema(responses=inline_serializer("ReplySender", {
        "channel": serializers.CharField(), "from": serializers.CharField(allow_null=True),
        "source": serializers.CharField()}))
    @action(detail=True, methods=["get"], url_path="reply-sender")
    def reply_sender(self, request, pk=None):
        return Response(replies.reply_sender(self.get_object()))

    @extend_schema(request=s.TagsSerializer, responses=_CONV)
    @action(detail=True, methods=["put"], url_path="tags")
    def tags(self, request, pk=None):
        data = _body(s.TagsSerializer, request)
        return self._ok(services.conversation_set_tags(principal=self.principal,
                                                       conversation_id=pk, tags=data["tags"]))

    @extend_schema(request=s.PrioritySerializer, responses=_CONV)
    @action(detail=True, methods=["put"], url_path="priority")
    def priority(self, request, pk=None):
        data = _body(s.PrioritySerializer, request)
        return self._ok(services.conversation_set_priority(
            principal=self.principal, conversation_id=pk, priority=data["priority"]))

    @extend_schema(request=None, responses=_CONV, description="Mark every message read.")
    @action(detail=True, methods=["post"], url_path="read")
    def read(self, request, pk=None):
        return self._ok(services.conversation_mark_read(principal=self.principal,
                                                        conversation_id=pk))

    @extend_schema(request=s.ConversationBulkSerializer, responses=inline_serializer("ConversationBulkResult", {
        "action": serializers.CharField(), "total": serializers.IntegerField(),
        "succeeded": serializers.IntegerField(), "failed": serializers.IntegerField(),
        "results": serializers.ListField(child=serializers.DictField())}))
    @action(detail=False, methods=["post"], url_path="bulk")
    def bulk(self, request):
        data = _body(s.ConversationBulkSerializer, request)
        return Response(bulk.conversations_bulk(principal=self.principal, **data))

    # --- Assignment and routing answers ------------------------------------------------

    @extend_schema(request=s.AssignSerializer, responses=_CONV)
    @action(detail=True, methods=["post"], url_path="assign")
    def assign(self, request, pk=None):
        data = _body(s.AssignSerializer, request)
        return self._ok(assignment.conversation_assign(
            principal=self.principal, conversation_id=pk, agent_id=data["agent_id"]))

    @extend_schema(request=None, responses=_CONV)
    @action(detail=True, methods=["post"], url_path="assignment/accept")
    def assignment_accept(self, request, pk=None):
        return self._ok(assignment.assignment_accept(principal=self.principal,
                                                     conversation_id=pk))

    @extend_schema(request=None, responses=inline_serializer("DeclineResult", {
        "conversation": _CONV(), "next_offer": serializers.DictField(allow_null=True)}))
    @action(detail=True, methods=["post"], url_path="assignment/decline")
    def assignment_decline(self, request, pk=None):
        conversation, next_offer = assignment.assignment_decline(principal=self.principal,
                                                                 conversation_id=pk)
        return Response({"conversation": _conversation_data(conversation),
                         "next_offer": next_offer})

    # --- Handoff -----------------------------------------------------------------------

    @extend_schema(request=s.HandoffSerializer, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], url_path="handoff")
    def handoff(self, request, pk=None):
        data = _body(s.HandoffSerializer, request)
        conversation = handoff.handoff_request(
            principal=self.principal, conversation_id=pk,
            target_queue=data.get("target_queue"), reason_category=data["reason_category"])
        return Response(handoff.packet(conversation))

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], url_path="handoff/queue-position")
    def handoff_queue_position(self, request, pk=None):
        conversation = self.get_object()
        return Response({"conversation_id": conversation.pk,
                         "queue": conversation.queue or None,
                         "queue_position": handoff.queue_position(conversation),
                         "handoff_status": conversation.handoff_status})

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], url_path="handoff/packet")
    def handoff_packet(self, request, pk=None):
        return Response(handoff.packet(self.get_object()))

    @extend_schema(request=None, responses=_CONV)
    @action(detail=True, methods=["post"], url_path="handoff/resolve")
    def handoff_resolve(self, request, pk=None):
        return self._ok(handoff.handoff_resolve(principal=self.principal, conversation_id=pk))

    @extend_schema(request=None, responses=_CONV)
    @action(detail=True, methods=["post"], url_path="agent/resume")
    def agent_resume(self, request, pk=None):
        return self._ok(handoff.agent_resume(principal=self.principal, conversation_id=pk))

    # --- Sentiment and prediction ------------------------------------------------------

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], url_path="sentiment")
    def sentiment(self, request, pk=None):
        return Response(insights.sentiment_timeline(self.get_object()))

    @extend_schema(responses=OpenApiTypes.OBJECT, parameters=[
        OpenApiParameter("refresh", OpenApiTypes.STR, enum=["0", "1"])])
    @action(detail=True, methods=["get"], url_path="prediction")
    def prediction(self, request, pk=None):
        refresh = request.query_params.get("refresh", "0")
        if refresh not in ("0", "1", "true", "false"):
            raise validation_error("refresh", "refresh must be 1 or 0.", status=400)
        return Response(insights.prediction(self.get_object(),
                                            refresh=refresh in ("1", "true")))

    # --- Side conversations ------------------------------------------------------------

    @extend_schema(methods=["GET"], responses=s.SideConversationSerializer(many=True))
    @extend_schema(methods=["POST"], request=s.SideCreateSerializer,
                   responses={201: s.SideConversationSerializer})
    @action(detail=True, methods=["get", "post"], url_path="side-conversations")
    def side_conversations(self, request, pk=None):
        if request.method == "POST":
            data = _body(s.SideCreateSerializer, request)
            side, message = replies.side_create(principal=self.principal, conversation_id=pk,
                                                **data)
            payload = s.SideConversationSerializer(side).data
            payload["first_message"] = (s.SideMessageSerializer(message).data
                                        if message else None)
            return Response(payload, status=status.HTTP_201_CREATED)
        return _page(self, selectors.side_conversations_of(self.get_object()),
                     s.SideConversationSerializer)

    @extend_schema(request=s.SideReplySerializer, responses={202: s.SideMessageSerializer},
                   parameters=[_SIDE_ID])
    @action(detail=True, methods=["post"], url_path=f"{SIDE}/reply")
    def side_reply(self, request, pk=None, side_id=None):
        data = _body(s.SideReplySerializer, request)
        message = replies.side_reply(principal=self.principal, conversation_id=pk,
                                     side_id=side_id, body=data["body"])
        return Response(s.SideMessageSerializer(message).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses=s.SideConversationSerializer, parameters=[_SIDE_ID])
    @action(detail=True, methods=["post"], url_path=f"{SIDE}/resolve")
    def side_resolve(self, request, pk=None, side_id=None):
        side = replies.side_set_status(principal=self.principal, conversation_id=pk,
                                       side_id=side_id, status="resolved")
        return Response(s.SideConversationSerializer(side).data)

    @extend_schema(request=None, responses=s.SideConversationSerializer, parameters=[_SIDE_ID])
    @action(detail=True, methods=["post"], url_path=f"{SIDE}/reopen")
    def side_reopen(self, request, pk=None, side_id=None):
        side = replies.side_set_status(principal=self.principal, conversation_id=pk,
                                       side_id=side_id, status="open")
        return Response(s.SideConversationSerializer(side).data)
