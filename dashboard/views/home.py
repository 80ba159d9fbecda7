"""The landing page after sign-in: where to go next, by what the role may do."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .base import DashboardView


class HomeView(DashboardView):
    required_scopes = {"GET": None}

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "dashboard/home.html")
