from django.urls import path

from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("auth/sessions", views.SessionViewSet, basename="session")
router.register("users", views.UserViewSet, basename="user")
router.register("api-keys", views.APIKeyViewSet, basename="api-key")

urlpatterns = [
    path("auth/login", views.LoginView.as_view(), name="auth-login"),
    path("auth/logout", views.LogoutView.as_view(), name="auth-logout"),
    path("organization", views.OrganizationView.as_view(), name="organization"),
    *router.urls,
]
