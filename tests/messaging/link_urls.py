"""The root URLconf plus the short-link route the lead mounts in config/urls.py
(`path("l/<str:code>", ShortLinkRedirectView.as_view())`), for the short-link tests."""

from django.urls import path

from config.urls import urlpatterns as root
from messaging.api.links import ShortLinkRedirectView

urlpatterns = [path("l/<str:code>", ShortLinkRedirectView.as_view(), name="short-link"), *root]
