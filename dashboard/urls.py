"""Routes of the dashboard under /dashboard/. Each screen family mounts its own urls."""

from django.urls import include, path

from .views import home, session

urlpatterns = [
    path("", home.HomeView.as_view(), name="dashboard-home"),
    path("signin", session.SignInView.as_view(), name="dashboard-signin"),
    path("signout", session.SignOutView.as_view(), name="dashboard-signout"),
    path("sso/start", session.SsoStartView.as_view(), name="dashboard-sso-start"),
    path("sso", session.SsoLandingView.as_view(), name="dashboard-sso"),
    path("switch", session.SwitchOrganizationView.as_view(), name="dashboard-switch"),
    path("consent", session.ConsentView.as_view(), name="dashboard-consent"),
    path("forgot-password", session.ForgotPasswordView.as_view(), name="dashboard-forgot"),
    path("reset-password", session.ResetPasswordView.as_view(), name="dashboard-reset"),
    path("impersonation/end", session.EndImpersonationView.as_view(),
         name="dashboard-impersonation-end"),
]

# Screen families: each owns its folder under dashboard/screens/.
urlpatterns += [
    path("inbox/", include("dashboard.screens.inbox.urls")),
    path("team-chat/", include("dashboard.screens.team_chat.urls")),
    path("contacts/", include("dashboard.screens.contacts.urls")),
    path("messaging/", include("dashboard.screens.messaging.urls")),
    path("analytics/", include("dashboard.screens.analytics.urls")),
    path("developers/", include("dashboard.screens.developers.urls")),
    path("settings/", include("dashboard.screens.settings.urls")),
]
