"""The audit log page: read-only, for everyone including superusers."""

from __future__ import annotations

import json

from django.contrib import admin
from django.utils.html import format_html

from platform_core.audit.models import AuditLogEntry

from .base import OrganizationFilter


class ActorTypeFilter(admin.SimpleListFilter):
    """A fixed list: no `SELECT DISTINCT` over the whole log on every page."""

    title = "actor type"
    parameter_name = "actor_type"
    actor_types = ("user", "api_key", "operator", "system", "scim", "internal")

    def lookups(self, request, model_admin):
        return [(value, value) for value in self.actor_types]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(actor_type=self.value())
        return queryset


@admin.register(AuditLogEntry)
class AuditLogEntryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "action", "actor", "target", "organization", "ip_address")
    list_select_related = ("organization",)
    list_filter = ("action", ActorTypeFilter, OrganizationFilter)
    search_fields = ("action", "=actor_id", "actor_display", "=target_id")
    date_hierarchy = "created_at"
    ordering = ("-id",)
    # One COUNT per page, not two: the log is the largest table the console shows.
    show_full_result_count = False
    fields = ("id", "created_at", "organization", "action", "actor_type", "actor_id",
              "actor_display", "target_type", "target_id", "ip_address", "user_agent",
              "metadata_display")
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="actor", ordering="actor_id")
    def actor(self, entry: AuditLogEntry) -> str:
        who = entry.actor_display or entry.actor_id or "-"
        return f"{entry.actor_type}: {who}"

    @admin.display(description="target", ordering="target_id")
    def target(self, entry: AuditLogEntry) -> str:
        if not entry.target_type and not entry.target_id:
            return "-"
        return f"{entry.target_type} {entry.target_id}".strip()

    @admin.display(description="metadata")
    def metadata_display(self, entry: AuditLogEntry) -> str:
        return format_html("<pre>{}</pre>", json.dumps(entry.metadata, indent=2, sort_keys=True,
                                                       default=str))
