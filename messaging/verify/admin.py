"""Operator console: verifications (read-only), profiles, and the per-organization
overrides of the verify limits (fraud guard, bulk rate)."""

from django.contrib import admin

from platform_core.admin.base import OperatorAuditMixin, TenantScopedAdmin

from .models import TotpFactor, Verification, VerifyProfile, VerifySettings


@admin.register(VerifySettings)
class VerifySettingsAdmin(OperatorAuditMixin, admin.ModelAdmin):
    list_display = ("organization", "fraud_guard_enabled", "recipient_limit", "prefix_limit",
                    "conversion_min_rate", "bulk_requests_per_minute", "updated_at")
    search_fields = ("organization__slug", "organization__name")
    raw_id_fields = ("organization",)


@admin.register(Verification)
class VerificationAdmin(TenantScopedAdmin):
    list_display = ("id", "organization", "channel", "to", "status", "created_at")
    list_filter = ("status", "channel")
    search_fields = ("id", "to")
    exclude = ("code_hash",)
    show_full_result_count = False

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields if f.name != "code_hash"]

    def has_add_permission(self, request):
        return False


@admin.register(VerifyProfile)
class VerifyProfileAdmin(TenantScopedAdmin):
    list_display = ("id", "organization", "name", "channel", "code_length", "created_at")
    search_fields = ("id", "name")
    raw_id_fields = ("organization",)


@admin.register(TotpFactor)
class TotpFactorAdmin(TenantScopedAdmin):
    list_display = ("id", "organization", "identity", "status", "created_at")
    search_fields = ("id", "identity")
    exclude = ("secret",)
    readonly_fields = ("organization", "identity", "friendly_name", "status",
                       "last_used_step", "created_at", "verified_at")

    def has_add_permission(self, request):
        return False
