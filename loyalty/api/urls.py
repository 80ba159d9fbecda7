from django.urls import path

from . import views

urlpatterns = [
    path("loyalty/program", views.ProgramView.as_view(), name="loyalty-program"),
    path("loyalty/preview", views.PreviewView.as_view(), name="loyalty-preview"),
    path("loyalty/members", views.MemberListView.as_view(), name="loyalty-members"),
    path("loyalty/members/<str:contact_id>", views.MemberDetailView.as_view(),
         name="loyalty-member"),
    path("loyalty/members/<str:contact_id>/redeem", views.RedeemView.as_view(),
         name="loyalty-member-redeem"),
    path("loyalty/members/<str:contact_id>/adjust", views.AdjustView.as_view(),
         name="loyalty-member-adjust"),
]
