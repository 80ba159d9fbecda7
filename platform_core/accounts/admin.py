"""Impersonation in the operator console (Django admin).

A staff operator picks an organization, a member and a reason on the "Start impersonation"
page and is shown a short-lived token and a link. The link opens a console page that posts
the token to /api/v1/auth/impersonate-cookie-set and then navigates to
/api/v1/auth/impersonate-cookie-consume, which redirects into the impersonated dashboard.
Grants are listed read-only and can be ended (button on the grant, or the list action).
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from platform_core.errors import APIError
from platform_core.identity.models import User
from platform_core.tenancy.models import Membership, Organization

from . import conf, services
from .models import ImpersonationGrant


class StartImpersonationForm(forms.Form):
    organization = forms.ModelChoiceField(
        queryset=Organization.objects.filter(is_active=True).order_by("name"),
        help_text="The organization to enter.",
    )
    user_email = forms.EmailField(label="User", help_text="Email address of a member to act as.")
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=1000,
                             help_text="Why you need to act as this user (recorded in the "
                                       "audit log).")

    def clean(self):
        data = super().clean()
        org, email = data.get("organization"), data.get("user_email")
        if org is None or not email:
            return data
        user = User.objects.filter(email__iexact=email.strip()).first()
        member = user is not None and Membership.objects.for_organization(org).filter(
            user=user).exists()
        if not member:
            self.add_error("user_email", "No member of this organization has that email.")
        else:
            data["user"] = user
        if not (data.get("reason") or "").strip():
            self.add_error("reason", "A reason is required.")
        return data


@admin.register(ImpersonationGrant)
class ImpersonationGrantAdmin(admin.ModelAdmin):
    list_display = ("id", "organization", "user", "operator_email", "short_reason", "created_at",
                    "expires_at", "status")
    list_select_related = ("organization", "user")
    list_filter = ("organization",)
    search_fields = ("=id", "operator_email", "user__email", "organization__slug")
    ordering = ("-created_at",)
    fields = ("id", "organization", "user", "operator", "operator_email", "reason",
              "created_at", "expires_at", "status", "consumed_at", "consumed_via", "session_id",
              "ended_at", "ended_by")
    readonly_fields = fields
    actions = ["end_selected"]
    change_form_template = "accounts/admin/impersonationgrant_change_form.html"
    change_list_template = "accounts/admin/impersonationgrant_change_list.html"

    # --- read-only rows ---

    def has_delete_permission(self, request, obj=None):
        return False  # grants are evidence; end them instead

    @admin.display(description="reason")
    def short_reason(self, grant: ImpersonationGrant) -> str:
        return grant.reason if len(grant.reason) <= 60 else grant.reason[:57] + "..."

    @admin.display(description="status")
    def status(self, grant: ImpersonationGrant) -> str:
        return grant.status

    # --- extra pages ---

    def _name(self, suffix: str) -> str:
        return f"{self.opts.app_label}_{self.opts.model_name}_{suffix}"

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("start/", wrap(self.start_view), name=self._name("start")),
            path("launch/", wrap(self.launch_view), name=self._name("launch")),
            path("<path:object_id>/end/", wrap(self.end_view), name=self._name("end")),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # Every field is read-only: the page offers "End impersonation", not "Save".
        extra_context = {**(extra_context or {}), "show_save": False,
                         "show_save_and_continue": False, "show_save_and_add_another": False,
                         "show_delete": False}
        return super().change_view(request, object_id, form_url, extra_context)

    def add_view(self, request, form_url="", extra_context=None):
        return HttpResponseRedirect(reverse(f"admin:{self._name('start')}"))

    def _context(self, request, title: str, **extra):
        return {**self.admin_site.each_context(request), "opts": self.opts, "title": title,
                **extra}

    def start_view(self, request):
        if not self.has_add_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            form = StartImpersonationForm(request.POST)
            if form.is_valid():
                data = form.cleaned_data
                try:
                    grant, raw = services.impersonation_grant_create(
                        operator=request.user, organization=data["organization"],
                        user=data["user"], reason=data["reason"], request=request,
                    )
                except APIError as exc:
                    form.add_error(None, exc.message)
                else:
                    return self._issued(request, grant, raw)
        else:
            form = StartImpersonationForm(initial=request.GET.dict())
        return TemplateResponse(request, "accounts/admin/impersonation_start.html",
                                self._context(request, "Start impersonation", form=form))

    def _issued(self, request, grant: ImpersonationGrant, raw: str):
        launch = reverse(f"admin:{self._name('launch')}")
        link = f"{conf.base_url()}{launch}#token={raw}"
        response = TemplateResponse(
            request, "accounts/admin/impersonation_issued.html",
            self._context(request, "Impersonation ready", grant=grant, token=raw, link=link,
                          minutes=max(1, round((grant.expires_at - timezone.now())
                                               .total_seconds() / 60))),
        )
        response["Cache-Control"] = "no-store"
        return response

    def launch_view(self, request):
        """Post the token (from the URL fragment) to cookie-set, then go to consume."""
        response = TemplateResponse(
            request, "accounts/admin/impersonation_launch.html",
            self._context(request, "Entering the impersonated dashboard",
                          cookie_set_url=reverse("auth-impersonate-cookie-set"),
                          consume_url=reverse("auth-impersonate-cookie-consume")),
        )
        response["Referrer-Policy"] = "no-referrer"
        response["Cache-Control"] = "no-store"
        return response

    def end_view(self, request, object_id):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        grant = get_object_or_404(ImpersonationGrant, pk=object_id)
        if not self.has_change_permission(request, grant):
            raise PermissionDenied
        if services.impersonation_end(grant=grant, operator=request.user, request=request):
            self.message_user(request, "The impersonation has ended; its session is signed out.")
        else:
            self.message_user(request, "This impersonation had already ended.", messages.WARNING)
        return HttpResponseRedirect(reverse(f"admin:{self._name('change')}", args=[grant.pk]))

    @admin.action(description="End the selected impersonations", permissions=["change"])
    def end_selected(self, request, queryset):
        ended = sum(
            services.impersonation_end(grant=grant, operator=request.user, request=request)
            for grant in queryset
        )
        self.message_user(request, f"{ended} impersonation(s) ended.")
