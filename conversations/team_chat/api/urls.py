"""Routes under `/api/v1/team-chat` (trailing slash optional)."""

from django.urls import re_path

from . import views

_C = r"^team-chat/channels/(?P<channel_id>[^/]+)"
_M = _C + r"/messages/(?P<message_id>[^/]+)"

urlpatterns = [
    re_path(r"^team-chat/channels/?$", views.ChannelListView.as_view(), name="tc-channels"),
    re_path(_C + r"/?$", views.ChannelDetailView.as_view(), name="tc-channel"),
    re_path(_C + r"/members/?$", views.MemberListView.as_view(), name="tc-members"),
    re_path(_C + r"/members/(?P<user_id>[^/]+)/?$", views.MemberDetailView.as_view(),
            name="tc-member"),
    re_path(_C + r"/messages/?$", views.MessageListView.as_view(), name="tc-messages"),
    re_path(_M + r"/?$", views.MessageDetailView.as_view(), name="tc-message"),
    re_path(_M + r"/thread/?$", views.ThreadView.as_view(), name="tc-thread"),
    re_path(_C + r"/read/?$", views.ReadView.as_view(), name="tc-read"),
    re_path(_C + r"/huddle/?$", views.HuddleView.as_view(), name="tc-huddle"),
    re_path(r"^team-chat/huddle/leave/?$", views.HuddleLeaveView.as_view(),
            name="tc-huddle-leave"),
    re_path(r"^team-chat/search/?$", views.SearchView.as_view(), name="tc-search"),
    re_path(r"^team-chat/dms/?$", views.DMListView.as_view(), name="tc-dms"),
    re_path(r"^team-chat/dms/(?P<thread_id>[^/]+)/messages/?$", views.DMMessagesView.as_view(),
            name="tc-dm-messages"),
    re_path(r"^team-chat/dms/(?P<thread_id>[^/]+)/read/?$", views.DMReadView.as_view(),
            name="tc-dm-read"),
    re_path(r"^team-chat/presence/heartbeat/?$", views.HeartbeatView.as_view(),
            name="tc-heartbeat"),
    re_path(r"^team-chat/presence/?$", views.PresenceView.as_view(), name="tc-presence"),
]
