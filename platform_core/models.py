"""Models of the platform core, one sub-package per family."""

from platform_core.api.models import IdempotencyRecord
from platform_core.audit.models import AuditLogEntry
from platform_core.identity.models import APIKey, User, UserSession
from platform_core.tenancy.models import Membership, Organization

__all__ = [
    "APIKey",
    "AuditLogEntry",
    "IdempotencyRecord",
    "Membership",
    "Organization",
    "User",
    "UserSession",
]
