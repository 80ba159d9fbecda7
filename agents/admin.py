"""Operator console: AI budget caps per organization, usage rows (read-only)."""

from django.contrib import admin

from platform_core.admin.base import OperatorAuditMixin, TenantScopedAdmin

from .usage.models import AIBudget, AIUsage


@admin.register(AIBudget)
class AIBudgetAdmin(OperatorAuditMixin, admin.ModelAdmin):
    list_display = ("organization", "daily_cap_cents", "monthly_cap_cents", "alert_at_percent",
                    "updated_at")
    search_fields = ("organization__slug", "organization__name")
    raw_id_fields = ("organization",)


@admin.register(AIUsage)
class AIUsageAdmin(TenantScopedAdmin):
    list_display = ("id", "organization", "feature", "engine", "model", "total_tokens",
                    "cost_cents", "created_at")
    list_filter = ("engine", "feature")
    search_fields = ("id", "conversation_id", "agent_id")
    show_full_result_count = False

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False
