"""Console pages of users, API keys and dashboard sessions.

API keys: only the SHA-256 digest of a key is stored, and the console never shows, filters
on or searches that digest; a key is identified by `prefix…last4`. Keys are created through
the API (the secret is shown once there), so there is no add page; they are revoked, not
edited or deleted, through the identity service, so the authentication cache forgets them
at once.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import UserChangeForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.utils import timezone

from platform_core.identity import services
from platform_core.identity.models import APIKey, User, UserSession
from platform_core.tenancy.models import Membership

from .base import (
    OperatorAuditMixin,
    OrganizationFilter,
    TenantScopedAdmin,
    TenantScopedInline,
    audit_operator_action,
    operator_principal,
    unscoped_queryset,
)
from .tenancy import (
    LAST_OWNER_MESSAGE,
    MembershipForm,
    MembershipInlineFormSet,
    admin_link,
    changelist_url,
    links_html,
    organizations_left_without_owner,
)

# --- Users -----------------------------------------------------------------------------------


def _clean_unique_email(form: forms.ModelForm) -> str:
    email = User.objects.normalize_email(form.cleaned_data["email"]).strip().lower()
    taken = User.objects.filter(email__iexact=email)
    if form.instance.pk:
        taken = taken.exclude(pk=form.instance.pk)
    if taken.exists():
        raise ValidationError("A user with this email already exists.")
    return email


class OperatorUserCreationForm(UserCreationForm):
    """Email and the password twice (checked against the password validators)."""

    class Meta:
        model = User
        fields = ("email", "name")

    def clean_email(self) -> str:
        return _clean_unique_email(self)


class OperatorUserChangeForm(UserChangeForm):
    class Meta:
        model = User
        fields = "__all__"

    def clean_email(self) -> str:
        return _clean_unique_email(self)


class UserMembershipInline(TenantScopedInline):
    """The organizations of one user: the organization is a link, the role is editable.

    New memberships are added on the membership page (user and organization pickers).
    """

    model = Membership
    fk_name = "user"
    form = MembershipForm
    formset = MembershipInlineFormSet
    fields = ("organization_link", "role", "created_at")
    readonly_fields = ("organization_link", "created_at")
    inline_select_related = ("organization",)
    ordering = ("created_at",)
    extra = 0
    verbose_name_plural = "memberships"

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description="organization")
    def organization_link(self, membership: Membership) -> str:
        return admin_link(membership.organization)


@admin.register(User)
class UserAdmin(OperatorAuditMixin, DjangoUserAdmin):
    """Users log in by email; there is no username. Staff users may use this console."""

    form = OperatorUserChangeForm
    add_form = OperatorUserCreationForm
    list_display = ("email", "name", "id", "is_staff", "is_superuser", "is_active",
                    "date_joined", "last_login")
    list_filter = ("is_staff", "is_active", "is_superuser")
    search_fields = ("email", "name", "=id")
    ordering = ("email",)
    readonly_fields = ("id", "last_login", "date_joined", "console_links")
    fieldsets = (
        (None, {"fields": ("id", "email", "password")}),
        ("Profile", {"fields": ("name",)}),
        ("Operator console", {"fields": ("is_active", "is_staff", "is_superuser", "groups",
                                         "user_permissions")}),
        ("Related", {"fields": ("console_links",)}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("email", "name", "password1", "password2")}),
    )
    inlines = (UserMembershipInline,)

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else ()

    @admin.display(description="console")
    def console_links(self, user: User) -> str:
        if not user.pk:
            return "-"
        return links_html(
            (changelist_url("membership", q=user.email), "Memberships"),
            (changelist_url("usersession", q=user.email), "Sessions"),
            (changelist_url("auditlogentry", q=user.pk), "Audit log"),
        )

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        membership_ids = unscoped_queryset(Membership).filter(
            user__in=[user.pk for user in objs]
        ).values_list("pk", flat=True)
        blocked = organizations_left_without_owner(dict.fromkeys(membership_ids))
        if blocked:
            protected = [*protected, f"{LAST_OWNER_MESSAGE} ({', '.join(sorted(blocked))})"]
        return deleted, counts, perms_needed, protected


# --- Credentials: shared pieces ----------------------------------------------------------------


class RevocableAdmin(TenantScopedAdmin):
    """View-only pages of credentials; the one write is revocation, through the service."""

    actions = ("revoke_selected",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_revoke_permission(self, request) -> bool:
        opts = self.opts
        return request.user.has_perm(f"{opts.app_label}.change_{opts.model_name}")


class APIKeyStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return (("active", "Active"), ("revoked", "Revoked"))

    def queryset(self, request, queryset):
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


@admin.register(APIKey)
class APIKeyAdmin(RevocableAdmin):
    # `key_hash` is in none of these lists, and excluded from any form besides.
    exclude = ("key_hash",)
    fields = ("id", "name", "organization", "type", "mode", "key_display", "scopes_display",
              "allowed_ips", "status", "created_by", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    list_display = ("name", "organization", "type", "mode", "key_display", "scopes_display",
                    "status", "last_used_at", "created_at")
    list_select_related = ("organization", "created_by")
    list_filter = ("type", "mode", APIKeyStatusFilter, OrganizationFilter)
    search_fields = ("name", "=id", "prefix", "organization__slug")
    ordering = ("-created_at",)

    def lookup_allowed(self, lookup, value, request=None):
        # No filtering on the digest through a crafted query string either.
        return not lookup.startswith("key_hash") and super().lookup_allowed(lookup, value, request)

    @admin.display(description="key")
    def key_display(self, key: APIKey) -> str:
        return f"{key.prefix}…{key.last4}"

    @admin.display(description="scopes")
    def scopes_display(self, key: APIKey) -> str:
        return ", ".join(key.scopes or []) or "-"

    @admin.display(description="status", ordering="revoked_at")
    def status(self, key: APIKey) -> str:
        return "active" if key.revoked_at is None else "revoked"

    @admin.action(description="Revoke selected keys", permissions=("revoke",))
    def revoke_selected(self, request, queryset):
        selected = list(queryset)
        live = [key for key in selected if key.revoked_at is None]
        for key in live:
            services.api_key_revoke(key=key, request=request,
                                    principal=operator_principal(request, key.organization))
        note = f" {len(selected) - len(live)} already revoked." if len(live) < len(selected) else ""
        self.message_user(request, f"Revoked {len(live)} key(s).{note}", messages.SUCCESS)


# --- Sessions -----------------------------------------------------------------------------------


class SessionStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return (("live", "Live"), ("expired", "Expired"), ("revoked", "Revoked"))

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == "live":
            return queryset.filter(revoked_at__isnull=True, expires_at__gt=now)
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


@admin.register(UserSession)
class UserSessionAdmin(RevocableAdmin):
    fields = ("id", "user", "organization", "status", "created_at", "expires_at", "revoked_at",
              "last_seen_at", "ip_address", "user_agent")
    readonly_fields = fields
    list_display = ("id", "user", "organization", "status", "created_at", "expires_at",
                    "revoked_at", "ip_address")
    list_select_related = ("user", "organization")
    list_filter = (SessionStatusFilter, OrganizationFilter)
    search_fields = ("=id", "user__email", "organization__slug", "ip_address")
    ordering = ("-created_at",)

    @admin.display(description="status")
    def status(self, session: UserSession) -> str:
        if session.revoked_at is not None:
            return "revoked"
        return "live" if session.is_live else "expired"

    @admin.action(description="Revoke selected sessions", permissions=("revoke",))
    def revoke_selected(self, request, queryset):
        sessions = list(queryset.filter(revoked_at__isnull=True))
        for session in sessions:
            # No principal: the console writes its own, richer audit row just below.
            services.session_revoke(session=session)
            audit_operator_action(request, action="session.revoked", target=session,
                                  organization=session.organization,
                                  metadata={"user_id": session.user_id})
        self.message_user(request, f"Revoked {len(sessions)} session(s).", messages.SUCCESS)
