"""Team-chat endpoints (Document 2, 4.9; 0-conventions.md section 7), base
`/api/v1/team-chat`. Every call acts as a user (actors.py); every channel route needs
membership (403 NOT_A_MEMBER) once the channel is found in the organization (else 404)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from platform_core.api.pagination import (
    KeysetCursorPagination,
    cursor_page_response,
    parse_limit,
)
from platform_core.api.serialization import validated_input
from platform_core.api.views import PlatformAPIView
from platform_core.errors import APIError, validation_error

from .. import conf, dms, huddles, live, presence, render, search, selectors, services
from ..actors import acting_user_id
from ..models import ChannelMember
from . import serializers as s

READ, WRITE = "conversations:read", "conversations:write"
PAGE_PARAMS = [
    OpenApiParameter("limit", OpenApiTypes.INT, description="Default 50, max 200."),
    OpenApiParameter("cursor", OpenApiTypes.STR, description="Opaque, from meta.pagination."),
]


def _paginator(ordering: tuple[str, ...]) -> KeysetCursorPagination:
    paginator = KeysetCursorPagination(ordering=ordering, max_limit=conf.page_max())
    paginator.default_limit = conf.page_default()
    return paginator


class TeamChatView(PlatformAPIView):
    required_scopes = {"GET": READ, "POST": WRITE, "PATCH": WRITE, "DELETE": WRITE}

    @property
    def user_id(self) -> str:
        if not hasattr(self, "_user_id"):
            self._user_id = acting_user_id(self.principal)
        return self._user_id

    def member(self, channel_id: str) -> ChannelMember:
        return services.channel_membership(channel_id, self.user_id)


# --- Channels ---------------------------------------------------------------------------


class ChannelListView(TeamChatView):
    @extend_schema(parameters=PAGE_PARAMS, responses=s.TeamChatChannelOutSerializer(many=True),
                   description="The caller's channels (newest first) with `my_role` and "
                               "`unread_count` (capped at 99).")
    def get(self, request):
        paginator = _paginator(("-channel_id",))
        rows = paginator.paginate_queryset(selectors.my_memberships(self.user_id), request)
        unread = selectors.channel_unread_counts(self.user_id, [m.channel_id for m in rows])
        return paginator.get_paginated_response([
            render.channel(m.channel, my_role=m.role, unread_count=unread.get(m.channel_id, 0))
            for m in rows])

    @extend_schema(request=s.TeamChatChannelCreateSerializer, responses={201: s.TeamChatChannelOutSerializer},
                   description="Create a channel; the creator is its `owner`. A name already "
                               "used in the organization: 409 ALREADY_EXISTS.")
    def post(self, request):
        body = validated_input(s.TeamChatChannelCreateSerializer, request.data).validated_data
        channel = services.channel_create(principal=self.principal, user_id=self.user_id,
                                          name=body["name"], description=body["description"])
        return Response(render.channel(channel, my_role="owner", unread_count=0),
                        status=status.HTTP_201_CREATED)


class ChannelDetailView(TeamChatView):
    @extend_schema(responses=s.TeamChatChannelOutSerializer)
    def get(self, request, channel_id: str):
        member = self.member(channel_id)
        unread = selectors.channel_unread_counts(self.user_id, [channel_id])
        return Response(render.channel(member.channel, my_role=member.role,
                                       unread_count=unread.get(channel_id, 0)))

    @extend_schema(request=s.TeamChatChannelUpdateSerializer, responses=s.TeamChatChannelOutSerializer,
                   description="Rename or describe; owner or admin of the channel.")
    def patch(self, request, channel_id: str):
        member = self.member(channel_id)
        changes = validated_input(s.TeamChatChannelUpdateSerializer, request.data).validated_data
        channel = services.channel_update(principal=self.principal, member=member,
                                          changes=dict(changes))
        return Response(render.channel(channel, my_role=member.role))

    @extend_schema(responses={204: None}, description="Delete the channel; owners only.")
    def delete(self, request, channel_id: str):
        services.channel_delete(principal=self.principal, member=self.member(channel_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemberListView(TeamChatView):
    @extend_schema(parameters=PAGE_PARAMS, responses=s.TeamChatMemberOutSerializer(many=True))
    def get(self, request, channel_id: str):
        member = self.member(channel_id)
        paginator = _paginator(("id",))
        rows = paginator.paginate_queryset(
            ChannelMember.objects.filter(channel=member.channel).select_related("user"),
            request)
        return paginator.get_paginated_response([
            {"user_id": m.user_id, "role": m.role, "name": m.user.name or m.user.email,
             "joined_at": render.iso(m.joined_at)} for m in rows])

    @extend_schema(request=s.TeamChatMemberAddSerializer, responses={201: s.TeamChatMemberOutSerializer},
                   description="Add a user of the organization (owner or admin of the channel; "
                               "else 403 CHANNEL_ROLE_REQUIRED). Already a member: 409.")
    def post(self, request, channel_id: str):
        member = self.member(channel_id)
        body = validated_input(s.TeamChatMemberAddSerializer, request.data).validated_data
        added = services.member_add(principal=self.principal, member=member,
                                    user_id=body["user_id"], role=body["role"])
        return Response({"user_id": added.user_id, "role": added.role,
                         "name": None, "joined_at": render.iso(added.joined_at)},
                        status=status.HTTP_201_CREATED)


class MemberDetailView(TeamChatView):
    @extend_schema(responses={204: None},
                   description="Remove a member (owner or admin), or leave (your own id).")
    def delete(self, request, channel_id: str, user_id: str):
        services.member_remove(principal=self.principal, member=self.member(channel_id),
                               user_id=user_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Messages ---------------------------------------------------------------------------


class MessageListView(TeamChatView):
    @extend_schema(parameters=PAGE_PARAMS, responses=s.TeamChatRootEntrySerializer(many=True),
                   description="Thread roots newest first; a deleted root with replies "
                               "renders `root: null`.")
    def get(self, request, channel_id: str):
        member = self.member(channel_id)
        paginator = _paginator(("-id",))
        rows = paginator.paginate_queryset(selectors.channel_roots(member.channel), request)
        return paginator.get_paginated_response([render.root_entry(m) for m in rows])

    @extend_schema(request=s.TeamChatMessageCreateSerializer, responses={201: s.TeamChatMessageOutSerializer},
                   description="Post a message. `mentions`: user ids of members; "
                               "`attachments`: file ids of the organization; "
                               "`parent_message_id` makes it a thread reply (to the root).")
    def post(self, request, channel_id: str):
        member = self.member(channel_id)
        body = validated_input(s.TeamChatMessageCreateSerializer, request.data).validated_data
        msg = services.message_post(member=member, body=body["body"],
                                    mentions=body["mentions"], attachments=body["attachments"],
                                    parent_message_id=body.get("parent_message_id"))
        return Response(render.message(msg), status=status.HTTP_201_CREATED)


class MessageDetailView(TeamChatView):
    @extend_schema(request=s.TeamChatMessageEditSerializer, responses=s.TeamChatMessageOutSerializer,
                   description="Edit your own message (others' answer 404 NOT_FOUND); sets "
                               "`edited_at`.")
    def patch(self, request, channel_id: str, message_id: str):
        member = self.member(channel_id)
        body = validated_input(s.TeamChatMessageEditSerializer, request.data).validated_data
        msg = services.message_edit(member=member, message_id=message_id, body=body["body"],
                                    mentions=body.get("mentions"))
        return Response(render.message(msg))

    @extend_schema(responses={204: None},
                   description="Soft delete: the author, or an owner/admin of the channel.")
    def delete(self, request, channel_id: str, message_id: str):
        services.message_delete(member=self.member(channel_id), message_id=message_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ThreadView(TeamChatView):
    @extend_schema(parameters=PAGE_PARAMS, responses=s.TeamChatThreadOutSerializer,
                   description="`{root, replies}`: replies oldest first (paginated); a "
                               "deleted root gives `root: null`.")
    def get(self, request, channel_id: str, message_id: str):
        member = self.member(channel_id)
        root = selectors.thread_root(member.channel, message_id)
        if root is None:
            raise APIError("NOT_FOUND")
        paginator = _paginator(("id",))
        rows = paginator.paginate_queryset(selectors.thread_replies(root), request)
        return paginator.get_paginated_response({
            "root": None if root.is_deleted else render.message(root),
            "replies": [render.message(m) for m in rows]})

    @extend_schema(request=s.TeamChatReplySerializer, responses={201: s.TeamChatMessageOutSerializer},
                   description="Reply in the thread (one level: a reply's id answers in its "
                               "root's thread).")
    def post(self, request, channel_id: str, message_id: str):
        member = self.member(channel_id)
        body = validated_input(s.TeamChatReplySerializer, request.data).validated_data
        msg = services.message_post(member=member, body=body["body"],
                                    mentions=body["mentions"], attachments=body["attachments"],
                                    parent_message_id=message_id)
        return Response(render.message(msg), status=status.HTTP_201_CREATED)


class ReadView(TeamChatView):
    idempotent_posts = False

    @extend_schema(request=s.TeamChatReadSerializer, responses=s.TeamChatReadOutSerializer,
                   description="Advance the read marker to `message_id` (default: the newest "
                               "message); it never moves back.")
    def post(self, request, channel_id: str):
        member = self.member(channel_id)
        body = validated_input(s.TeamChatReadSerializer, request.data).validated_data
        marker = services.read_marker_advance(member=member,
                                              message_id=body.get("message_id"))
        unread = selectors.channel_unread_counts(self.user_id, [channel_id])
        return Response({"last_read_message_id": marker,
                         "unread_count": unread.get(channel_id, 0)})


# --- Huddles ----------------------------------------------------------------------------


class HuddleView(TeamChatView):
    idempotent_posts = False

    @extend_schema(request=None, responses={201: s.TeamChatHuddleOutSerializer,
                                            200: s.TeamChatHuddleOutSerializer},
                   description="201 when this starts the channel's huddle, 200 when joining "
                               "the live one; `token` is a media-server access token for "
                               "`media_url`. No media server configured: a sandbox "
                               "double in test mode, 503 SERVICE_UNAVAILABLE in live mode.")
    def post(self, request, channel_id: str):
        joined = huddles.huddle_join(organization=self.organization,
                                      member=self.member(channel_id))
        return Response({"started": joined.started, "token": joined.token,
                         "media_url": joined.media_url, "huddle_id": joined.huddle.pk,
                         "room": joined.huddle.room},
                        status=status.HTTP_201_CREATED if joined.started else status.HTTP_200_OK)


class HuddleLeaveView(TeamChatView):
    idempotent_posts = False

    @extend_schema(request=s.TeamChatHuddleLeaveSerializer, responses=s.TeamChatHuddleLeaveOutSerializer,
                   description="Leave your live huddle; it ends when the room empties. Not in "
                               "one: 404.")
    def post(self, request):
        body = validated_input(s.TeamChatHuddleLeaveSerializer, request.data).validated_data
        huddle, ended = huddles.huddle_leave(organization=self.organization,
                                             user_id=self.user_id,
                                             huddle_id=body.get("huddle_id"))
        return Response({"huddle_id": huddle.pk, "channel_id": huddle.channel_id,
                         "ended": ended})


# --- Search -----------------------------------------------------------------------------


class SearchView(TeamChatView):
    @extend_schema(parameters=[OpenApiParameter("q", OpenApiTypes.STR, required=True),
                               *PAGE_PARAMS],
                   responses=s.TeamChatSearchHitSerializer(many=True),
                   description="Full-text search over your channels and DMs, by relevance "
                               "then recency; pass `cursor` back verbatim.")
    def get(self, request):
        q = request.query_params.get("q", "").strip()
        if not q or len(q) > 500:
            raise validation_error("q", "q is required (1-500 characters).")
        limit = parse_limit(request, default=conf.page_default(), maximum=conf.page_max())
        hits, cursor = search.search(request, user_id=self.user_id, q=q, limit=limit,
                                     cursor=request.query_params.get("cursor"))
        return cursor_page_response(
            [{"message": render.message(m), "snippet": snippet, "rank": rank}
             for m, rank, snippet in hits], cursor=cursor, has_more=cursor is not None)


# --- DMs --------------------------------------------------------------------------------


class DMListView(TeamChatView):
    @extend_schema(parameters=PAGE_PARAMS, responses=s.TeamChatDMSummarySerializer(many=True),
                   description="Your DM threads, most recent first.")
    def get(self, request):
        paginator = _paginator(("-last_message_id", "-id"))
        rows = paginator.paginate_queryset(dms.my_threads(self.user_id), request)
        unread = dms.unread_counts(self.user_id, [t.pk for t in rows])
        return paginator.get_paginated_response([
            render.dm_summary(t, me=self.user_id, unread_count=unread.get(t.pk, 0))
            for t in rows])

    @extend_schema(request=s.TeamChatDMSendSerializer, responses={201: s.TeamChatMessageOutSerializer},
                   description="Send a direct message to a user of the organization (the "
                               "thread is created on the first message).")
    def post(self, request):
        body = validated_input(s.TeamChatDMSendSerializer, request.data).validated_data
        msg = dms.dm_send(principal=self.principal, sender_id=self.user_id,
                          user_id=body["user_id"], body=body["body"],
                          mentions=body["mentions"], attachments=body["attachments"])
        return Response(render.message(msg), status=status.HTTP_201_CREATED)


class DMMessagesView(TeamChatView):
    @extend_schema(parameters=PAGE_PARAMS, responses=s.TeamChatMessageOutSerializer(many=True),
                   description="Messages of a DM thread, newest first; participants only "
                               "(anyone else: 404).")
    def get(self, request, thread_id: str):
        thread = dms.thread_for(self.user_id, thread_id)
        paginator = _paginator(("-id",))
        rows = paginator.paginate_queryset(dms.thread_messages(thread), request)
        return paginator.get_paginated_response([render.message(m) for m in rows])

    @extend_schema(request=s.TeamChatReplySerializer, responses={201: s.TeamChatMessageOutSerializer})
    def post(self, request, thread_id: str):
        thread = dms.thread_for(self.user_id, thread_id)
        body = validated_input(s.TeamChatReplySerializer, request.data).validated_data
        mentions = services.check_mentions(body["mentions"],
                                           {thread.user_low_id, thread.user_high_id})
        msg = dms.dm_post(thread=thread, sender_id=self.user_id, body=body["body"],
                          mentions=mentions,
                          attachments=services.check_attachments(body["attachments"]))
        return Response(render.message(msg), status=status.HTTP_201_CREATED)


class DMReadView(TeamChatView):
    idempotent_posts = False

    @extend_schema(request=s.TeamChatReadSerializer, responses=s.TeamChatReadOutSerializer)
    def post(self, request, thread_id: str):
        thread = dms.thread_for(self.user_id, thread_id)
        body = validated_input(s.TeamChatReadSerializer, request.data).validated_data
        marker = dms.dm_read(thread=thread, user_id=self.user_id,
                             message_id=body.get("message_id"))
        unread = dms.unread_counts(self.user_id, [thread.pk])
        return Response({"last_read_message_id": marker,
                         "unread_count": unread.get(thread.pk, 0)})


# --- Presence ---------------------------------------------------------------------------


class HeartbeatView(TeamChatView):
    idempotent_posts = False
    required_scopes = {"POST": READ}  # ephemeral: changes no record

    @extend_schema(request=s.TeamChatHeartbeatSerializer, responses=s.TeamChatPresenceSerializer,
                   description="About every 25 s; `status` online or away (else 422). "
                               "Degrades open: 200 with `degraded: true` when the presence "
                               "store is down.")
    def post(self, request):
        body = validated_input(s.TeamChatHeartbeatSerializer, request.data).validated_data
        entry, changed = presence.heartbeat(org_id=self.organization.pk,
                                            user_id=self.user_id, status=body["status"])
        data = entry.as_dict()
        if entry.degraded:
            data["degraded"] = True
        elif changed:  # only changes are pushed (to the organization's sockets)
            live.publish([live.org_group(self.organization.pk)], {"type": "presence", **data})
        return Response(data)


class PresenceView(TeamChatView):
    @extend_schema(parameters=[OpenApiParameter(
        "user_ids", OpenApiTypes.STR, description="Comma list (at most 200); default: "
                                                  "every active user of the organization.")],
        responses=s.TeamChatPresenceSerializer(many=True),
        description="Presence snapshot. When the presence store is down: an empty list "
                    "(200).")
    def get(self, request):
        entries = selectors.presence_snapshot(self.organization, request.query_params.get("user_ids"))
        return Response([e.as_dict() for e in entries])
