"""What every operator-console page shares.

Tenant-owned models have a fail-closed default manager: a query without a current
organization raises. The console is the one place that legitimately reads across tenants,
so the admin classes here read through `dangerously_unscoped()` and, where Django itself
reaches for `_default_manager` (uniqueness checks, the hidden primary key of inline rows),
either run under the row's own tenant or hand Django a queryset they built themselves.

Every change an operator saves is also written to the platform audit log (actor type
`operator`), next to Django's own admin history.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from django import forms
from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from platform_core.audit.services import audit_record
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context
from platform_core.tenancy.models import Organization, Role, TenantModel

OPERATOR = "operator"


# --- Who the operator is, for services and the audit log ----------------------------------


def operator_principal(request: HttpRequest, organization: Organization | None) -> Principal:
    """The staff user as the acting principal of a service call made from the console.

    Operators act above every tenant role; the role only matters to services that compare
    roles, which then allow the operator what an owner may do.
    """
    return Principal(kind=OPERATOR, organization=organization, role=Role.OWNER,
                     user_id=request.user.pk)


def organization_of(obj: Any) -> Organization | None:
    if isinstance(obj, Organization):
        return obj
    if isinstance(obj, TenantModel) and obj.organization_id:
        return obj.organization
    return None


def audit_operator_action(request: HttpRequest, *, action: str, target: Any,
                          organization: Organization | None = None,
                          metadata: dict[str, Any] | None = None) -> None:
    audit_record(
        action=action,
        principal=operator_principal(request, organization),
        organization=organization,
        actor_type=OPERATOR,
        actor_display=getattr(request.user, "email", ""),
        target=target,
        request=request,
        metadata={"via": "operator_console", **(metadata or {})},
    )


class OperatorAuditMixin:
    """Mirror Django's admin history into the audit log: `<model>.created|updated|deleted`."""

    def _audit(self, request, obj, verb: str, message: Any = None) -> None:
        metadata = {"changes": message} if isinstance(message, list) and message else {}
        audit_operator_action(request, action=f"{obj._meta.model_name}.{verb}", target=obj,
                              organization=organization_of(obj), metadata=metadata)

    def log_addition(self, request, obj, message):
        self._audit(request, obj, "created", message)
        return super().log_addition(request, obj, message)

    def log_change(self, request, obj, message):
        self._audit(request, obj, "updated", message)
        return super().log_change(request, obj, message)

    def log_deletions(self, request, queryset):
        for obj in queryset:
            self._audit(request, obj, "deleted")
        return super().log_deletions(request, queryset)


# --- Reading tenant-owned rows across tenants ---------------------------------------------


def unscoped_queryset(model: type[models.Model], select_related: Iterable[str] = ()):
    """All rows of a model, tenant-owned or not (the console reads across tenants)."""
    manager = model._default_manager
    qs = manager.dangerously_unscoped() if hasattr(manager, "dangerously_unscoped") else (
        manager.get_queryset()
    )
    related = tuple(select_related)
    return qs.select_related(*related) if related else qs


class TenantScopedAdmin(OperatorAuditMixin, admin.ModelAdmin):
    """Base of the console pages of tenant-owned models.

    `list_select_related` names the relations the changelist and the change page show, so
    neither issues a query per row.
    """

    list_select_related: tuple[str, ...] = ("organization",)

    def get_queryset(self, request):
        related = self.list_select_related if isinstance(self.list_select_related,
                                                         (list, tuple)) else ()
        qs = unscoped_queryset(self.model, related)
        ordering = self.get_ordering(request)
        return qs.order_by(*ordering) if ordering else qs


class TenantScopedInline(admin.TabularInline):
    """Inline rows of a tenant-owned model, read across tenants; see TenantInlineFormSet."""

    inline_select_related: tuple[str, ...] = ()

    def get_queryset(self, request):
        qs = unscoped_queryset(self.model, self.inline_select_related)
        ordering = self.get_ordering(request)
        if ordering:
            qs = qs.order_by(*ordering)
        if not self.has_view_or_change_permission(request):
            qs = qs.none()
        return qs


@contextlib.contextmanager
def _scope_matching_nothing() -> Iterator[None]:
    """A tenant scope that matches no row: a fresh, unsaved organization."""
    with tenant_context(Organization(name="(operator console)")):
        yield


class TenantModelForm(forms.ModelForm):
    """Run Django's model validation (uniqueness, constraints) as the row's own tenant.

    Those checks query `_default_manager`, which is fail-closed. Every uniqueness rule of a
    tenant-owned model is per organization, so the row's organization is the right scope.
    Without an organization the form is invalid already and the organization is excluded
    from the checks; they then run under a scope that matches nothing.
    """

    def _post_clean(self):
        org = self.cleaned_data.get("organization")
        if not isinstance(org, Organization):
            org = organization_of(self.instance)
        scope = tenant_context(org) if org is not None else _scope_matching_nothing()
        with scope:
            super()._post_clean()


class TenantInlineFormSet(forms.BaseInlineFormSet):
    """Inline formset of tenant-owned rows.

    Django gives each row a hidden primary-key field whose queryset comes from the model's
    fail-closed default manager. Build it under a scope matching nothing, then point it at
    this formset's own rows: a posted id must be one of the rows shown.
    """

    def add_fields(self, form, index):
        with _scope_matching_nothing():
            super().add_fields(form, index)
        pk_name = self.model._meta.pk.name
        field = form.fields.get(pk_name)
        if isinstance(field, forms.ModelChoiceField):
            field.queryset = self.get_queryset()


# --- Filters -------------------------------------------------------------------------------


class OrganizationFilter(admin.SimpleListFilter):
    """Filter by organization without rendering every tenant of the platform.

    Lists the first organizations by name (and the selected one); any other is reached
    from its organization page, whose links carry `?organization=<id>`.
    """

    title = "organization"
    parameter_name = "organization"
    limit = 50

    def lookups(self, request, model_admin):
        orgs = list(Organization.objects.order_by("name").values_list("pk", "name", "slug")[
            : self.limit
        ])
        selected = self.value()
        if selected and all(pk != selected for pk, _n, _s in orgs):
            orgs[:0] = Organization.objects.filter(pk=selected).values_list("pk", "name", "slug")
        return [(pk, f"{name} ({slug})") for pk, name, slug in orgs]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(organization_id=self.value())
        return queryset
