"""Console pages of organizations and memberships."""

from __future__ import annotations

from collections import defaultdict

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode

from platform_core.tenancy.models import Membership, Organization, Role

from .base import (
    OperatorAuditMixin,
    OrganizationFilter,
    TenantInlineFormSet,
    TenantModelForm,
    TenantScopedAdmin,
    TenantScopedInline,
    unscoped_queryset,
)

LAST_OWNER_MESSAGE = "An organization keeps at least one owner."


def admin_link(obj, label: str | None = None) -> str:
    if obj is None:
        return "-"
    opts = obj._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[quote(obj.pk)])
    return format_html('<a href="{}">{}</a>', url, label if label is not None else str(obj))


def links_html(*links: tuple[str, str]) -> str:
    return format_html_join(" · ", '<a href="{}">{}</a>', links)


def changelist_url(model_name: str, **params: str) -> str:
    url = reverse(f"admin:platform_core_{model_name}_changelist")
    return f"{url}?{urlencode(params)}" if params else url


# --- The last-owner rule ---------------------------------------------------------------------


def organizations_left_without_owner(changes: dict[str, str | None]) -> list[str]:
    """Slugs of organizations that would have no owner after these membership changes.

    `changes` maps a membership id to its new role, or None where the membership goes.
    An organization that has no owner today is not blocked by unrelated changes.
    """
    if not changes:
        return []
    rows = list(unscoped_queryset(Membership).filter(pk__in=list(changes)).values_list(
        "pk", "organization_id"
    ))
    org_ids = {org_id for _pk, org_id in rows}
    owners: dict[str, set[str]] = defaultdict(set)
    for pk, org_id in unscoped_queryset(Membership).filter(
        organization_id__in=org_ids, role=Role.OWNER
    ).values_list("pk", "organization_id"):
        owners[org_id].add(pk)
    blocked = []
    for org_id in org_ids:
        before = owners[org_id]
        after = {pk for pk in before if pk not in changes}
        after |= {pk for pk, o in rows if o == org_id and changes[pk] == Role.OWNER}
        if before and not after:
            blocked.append(org_id)
    return list(Organization.objects.filter(pk__in=blocked).values_list("slug", flat=True))


class MembershipForm(TenantModelForm):
    class Meta:
        model = Membership
        fields = ("role",)


class MembershipAdminForm(MembershipForm):
    """The standalone membership page: refuses to demote an organization's last owner."""

    class Meta:
        model = Membership
        fields = ("user", "organization", "role")

    def clean(self):
        cleaned = super().clean()
        role = cleaned.get("role")
        if self.instance.pk and role and organizations_left_without_owner(
            {self.instance.pk: role}
        ):
            raise ValidationError({"role": LAST_OWNER_MESSAGE})
        return cleaned


class MembershipInlineFormSet(TenantInlineFormSet):
    """Role changes and removals of several rows at once, checked together."""

    def clean(self):
        super().clean()
        changes: dict[str, str | None] = {}
        for form in self.forms:
            if not form.instance.pk or not hasattr(form, "cleaned_data"):
                continue
            if self._should_delete_form(form):
                changes[form.instance.pk] = None
            else:
                changes[form.instance.pk] = form.cleaned_data.get("role", form.instance.role)
        blocked = organizations_left_without_owner(changes)
        if blocked:
            raise ValidationError(f"{LAST_OWNER_MESSAGE} ({', '.join(sorted(blocked))})")


class OrganizationMembershipInline(TenantScopedInline):
    """Members of one organization: the user is a link, the role is editable.

    New members are added on the membership page (user and organization pickers).
    """

    model = Membership
    fk_name = "organization"
    form = MembershipForm
    formset = MembershipInlineFormSet
    fields = ("user_link", "role", "created_at")
    readonly_fields = ("user_link", "created_at")
    inline_select_related = ("user",)
    ordering = ("created_at",)
    extra = 0
    verbose_name_plural = "members"

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description="user")
    def user_link(self, membership: Membership) -> str:
        return admin_link(membership.user, membership.user.email)


@admin.register(Organization)
class OrganizationAdmin(OperatorAuditMixin, admin.ModelAdmin):
    """Organizations. Created with `manage.py create_org` or the API (owner and first key
    come with them) and deactivated with `is_active` rather than deleted here."""

    list_display = ("name", "slug", "id", "sandbox", "is_active", "created_at")
    list_filter = ("sandbox", "is_active")
    search_fields = ("name", "slug", "=id")
    ordering = ("name",)
    readonly_fields = ("id", "created_at", "updated_at", "console_links")
    fieldsets = (
        (None, {"fields": ("id", "name", "slug", "is_active", "sandbox")}),
        ("Locale", {"fields": ("timezone", "currency", "default_country")}),
        ("Related", {"fields": ("console_links",)}),
        ("Dates", {"fields": ("created_at", "updated_at")}),
    )
    inlines = (OrganizationMembershipInline,)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="console")
    def console_links(self, org: Organization) -> str:
        if not org.pk:
            return "-"
        pages = (("membership", "Members"), ("apikey", "API keys"),
                 ("usersession", "Sessions"), ("auditlogentry", "Audit log"))
        return links_html(
            *((changelist_url(model, organization=org.pk), label) for model, label in pages)
        )


@admin.register(Membership)
class MembershipAdmin(TenantScopedAdmin):
    form = MembershipAdminForm
    list_display = ("id", "user", "organization", "role", "created_at")
    list_select_related = ("user", "organization")
    list_filter = ("role", OrganizationFilter)
    search_fields = ("user__email", "organization__slug", "=id")
    autocomplete_fields = ("user", "organization")
    ordering = ("-created_at",)

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return ("id", "user", "organization", "created_at")

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("user", "organization", "role")
        return ("id", "user", "organization", "role", "created_at")

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        blocked = organizations_left_without_owner({m.pk: None for m in objs})
        if blocked:
            protected = [*protected, f"{LAST_OWNER_MESSAGE} ({', '.join(sorted(blocked))})"]
        return deleted, counts, perms_needed, protected

