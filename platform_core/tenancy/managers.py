"""The fail-closed tenant manager every organization-owned model uses."""

from __future__ import annotations

from django.db import models

from .context import require_current_organization


class TenantManager(models.Manager):
    """Scopes every query to the current organization; with none set it raises.

    The only way around the scope is the explicitly named `dangerously_unscoped()`, used
    by the operator console, migrations of data and periodic jobs that walk all tenants.
    """

    def get_queryset(self) -> models.QuerySet:
        org = require_current_organization()
        return super().get_queryset().filter(organization_id=org.pk)

    def dangerously_unscoped(self) -> models.QuerySet:
        return super().get_queryset()

    def for_organization(self, org) -> models.QuerySet:
        """Explicit scope for code that holds an organization but no context (jobs)."""
        return self.for_organization_id(org.pk)

    def for_organization_id(self, organization_id: str) -> models.QuerySet:
        """The same scope from the organization's id alone (precompiled statements)."""
        return super().get_queryset().filter(organization_id=organization_id)
