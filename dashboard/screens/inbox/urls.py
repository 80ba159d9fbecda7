"""Routes of the inbox under /dashboard/inbox/."""

from django.urls import path, re_path

from . import actions, views

_C = r"(?P<conversation_id>cnv_[0-9A-Za-z]{1,40})"
_ACTIONS = "|".join(actions.ACTIONS)

urlpatterns = [
    path("", views.InboxView.as_view(), name="inbox"),
    path("list", views.ListView.as_view(), name="inbox-list"),
    re_path(rf"^{_C}$", views.InboxView.as_view(), name="inbox-conversation"),
    re_path(rf"^{_C}/thread$", views.ThreadView.as_view(), name="inbox-thread"),
    re_path(rf"^{_C}/thread/(?P<part>head|messages|cobrowse)$", views.ThreadView.as_view(),
            name="inbox-thread-part"),
    re_path(rf"^{_C}/messages$", views.EarlierMessagesView.as_view(), name="inbox-earlier"),
    re_path(rf"^{_C}/reply-hint$", views.ReplyHintView.as_view(), name="inbox-reply-hint"),
    re_path(rf"^{_C}/(?P<action>{_ACTIONS})$", actions.ActionView.as_view(),
            name="inbox-action"),
    re_path(rf"^{_C}/cobrowse/join$", actions.CobrowseJoinView.as_view(),
            name="inbox-cobrowse-join"),
    re_path(rf"^{_C}/cobrowse/end$", actions.CobrowseEndView.as_view(),
            name="inbox-cobrowse-end"),
]
