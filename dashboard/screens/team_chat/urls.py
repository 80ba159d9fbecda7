"""Team chat under /dashboard/team-chat/ (names in the `team_chat` namespace)."""

from django.urls import path

from . import dm_views, views

app_name = "team_chat"

urlpatterns = [
    path("", views.IndexView.as_view(), name="index"),
    path("conversations", views.ConversationsView.as_view(), name="conversations"),
    path("channels", views.ChannelCreateView.as_view(), name="channels"),
    path("channels/<str:channel_id>", views.ChannelView.as_view(), name="channel"),
    path("channels/<str:channel_id>/messages", views.MessagesView.as_view(), name="messages"),
    path("channels/<str:channel_id>/threads/<str:message_id>", views.ThreadView.as_view(),
         name="thread"),
    path("channels/<str:channel_id>/threads/<str:message_id>/replies",
         views.ThreadRepliesView.as_view(), name="thread-replies"),
    path("channels/<str:channel_id>/members", views.MemberAddView.as_view(), name="members"),
    path("channels/<str:channel_id>/leave", views.LeaveView.as_view(), name="leave"),
    path("channels/<str:channel_id>/read", views.ReadView.as_view(), name="read"),
    path("dms", dm_views.DMStartView.as_view(), name="dms"),
    path("dms/with/<str:user_id>", dm_views.DMWithView.as_view(), name="dm-with"),
    path("dms/<str:thread_id>", dm_views.DMView.as_view(), name="dm"),
    path("dms/<str:thread_id>/messages", dm_views.DMMessagesView.as_view(), name="dm-messages"),
    path("dms/<str:thread_id>/read", dm_views.DMReadView.as_view(), name="dm-read"),
]
