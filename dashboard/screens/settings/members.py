"""Members and roles: list, invite, change a role, remove.

The identity services the /api/v1/users routes call (`user_invite`, `user_update`,
`user_remove`) with their rules: nobody grants or changes a role above their own, an
organization keeps at least one owner, nobody removes themselves. Scopes and roles are the
API viewset's: users:read to look, users:write and owner or admin to change.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.views.base import validated
from platform_core.errors import APIError
from platform_core.identity import selectors, services
from platform_core.identity.api.serializers import MemberCreateSerializer, MemberUpdateSerializer
from platform_core.identity.api.views import UserViewSet
from platform_core.tenancy.models import ROLE_RANK, Role

from ..developers.common import after_write
from .nav import SettingsView

READ, WRITE = UserViewSet.required_scopes["GET"], UserViewSet.required_scopes["POST"]
BASE = "/dashboard/settings/members"


class _MembersView(SettingsView):
    required_roles = {"POST": UserViewSet.required_roles["POST"]}
    tab = "members"
    back_url = BASE

    def context(self, **extra) -> dict:
        own_rank = ROLE_RANK.get(self.principal.role, 0)
        return {
            "members": list(selectors.members()),
            "can_manage": self.principal.has_scope(WRITE) and self.role_allows("POST"),
            # The roles offered in the pickers: none above the signed-in member's own (the
            # services refuse those anyway).
            "roles": [r for r in Role.values if ROLE_RANK[r] <= own_rank],
            **extra,
        }

    def answer(self, request: HttpRequest, note: str) -> HttpResponse:
        if request.htmx:
            return render(request, "dashboard/settings/_member_list.html",
                          self.context(note=note))
        return after_write(request, BASE, note)


class MembersView(_MembersView):
    """GET the members; POST invites one (email, name, role)."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page(request, "dashboard/settings/members.html", self.context())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = request.POST
        data = validated(MemberCreateSerializer, {
            "email": form.get("email", "").strip(),
            "name": form.get("name", "").strip(),
            "role": form.get("role", ""),
        })
        membership = services.user_invite(principal=self.principal, request=request,
                                          email=data["email"], name=data["name"],
                                          role=data["role"])
        return self.answer(request, f"{membership.user.email} added as {membership.role}.")


def _member_or_404(user_id: str):
    membership = selectors.member(user_id)
    if membership is None:
        raise APIError("NOT_FOUND", "No such member.")
    return membership


class MemberRoleView(_MembersView):
    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, user_id: str) -> HttpResponse:
        membership = _member_or_404(user_id)
        data = validated(MemberUpdateSerializer, {"role": request.POST.get("role", "")},
                         partial=True)
        services.user_update(principal=self.principal, membership=membership,
                             request=request, role=data["role"])
        return self.answer(request, f"{membership.user.email} is now {membership.role}.")


class MemberRemoveView(_MembersView):
    required_scopes = {"POST": UserViewSet.required_scopes["DELETE"]}
    required_roles = {"POST": UserViewSet.required_roles["DELETE"]}

    def post(self, request: HttpRequest, user_id: str) -> HttpResponse:
        membership = _member_or_404(user_id)
        services.user_remove(principal=self.principal, membership=membership,
                             request=request)
        return self.answer(request, f"{membership.user.email} removed.")
