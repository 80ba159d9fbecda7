from django.urls import path

from . import views

urlpatterns = [
    path("auth/forgot-password", views.ForgotPasswordView.as_view(), name="auth-forgot-password"),
    path("auth/reset-password", views.ResetPasswordView.as_view(), name="auth-reset-password"),
    path("auth/post-reset-revoke-api-keys", views.RevokeAPIKeysView.as_view(),
         name="auth-post-reset-revoke-api-keys"),
    path("auth/consent", views.ConsentView.as_view(), name="auth-consent"),
    path("auth/impersonate-exchange", views.ImpersonateExchangeView.as_view(),
         name="auth-impersonate-exchange"),
    path("auth/impersonate-cookie-set", views.ImpersonateCookieSetView.as_view(),
         name="auth-impersonate-cookie-set"),
    path("auth/impersonate-cookie-consume", views.ImpersonateCookieConsumeView.as_view(),
         name="auth-impersonate-cookie-consume"),
]
