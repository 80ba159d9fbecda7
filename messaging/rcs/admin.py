"""Operator console: RCS brands and agents (read-only), and the organizations' catalog
products (no endpoint of Document 2 writes them; operators keep them here)."""

from django.contrib import admin

from platform_core.admin.base import TenantScopedAdmin

from .models import RcsAgent, RcsBrand, RcsCatalogProduct


class _ReadOnly(TenantScopedAdmin):
    show_full_result_count = False

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(RcsBrand)
class RcsBrandAdmin(_ReadOnly):
    list_display = ("id", "organization", "name", "status", "created_at")
    list_filter = ("status",)
    search_fields = ("id", "name")


@admin.register(RcsAgent)
class RcsAgentAdmin(_ReadOnly):
    list_display = ("id", "organization", "display_name", "status", "verification_status",
                    "created_at")
    list_filter = ("status", "verification_status")
    search_fields = ("id", "display_name")


@admin.register(RcsCatalogProduct)
class RcsCatalogProductAdmin(TenantScopedAdmin):
    list_display = ("id", "organization", "retailer_id", "name", "price", "currency")
    search_fields = ("id", "retailer_id", "name")
    raw_id_fields = ("organization",)
