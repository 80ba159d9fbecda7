"""Organizations (tenants), memberships and the abstract base of every tenant-owned row."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from platform_core.ids import PublicIdField

from .managers import TenantManager


class Role(models.TextChoices):
    """Roles, highest first (0-conventions.md section 2)."""

    OWNER = "owner"
    ADMIN = "admin"
    DEVELOPER = "developer"
    AGENT = "agent"
    VIEWER = "viewer"


ROLE_RANK = {Role.OWNER: 5, Role.ADMIN: 4, Role.DEVELOPER: 3, Role.AGENT: 2, Role.VIEWER: 1}


class Organization(models.Model):
    id = PublicIdField(prefix="org")
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=63, unique=True)
    sandbox = models.BooleanField(default=False, help_text="Test mode: only test keys work.")
    timezone = models.CharField(max_length=64, default="UTC")
    currency = models.CharField(max_length=3, default="USD")
    default_country = models.CharField(max_length=2, default="US")
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.slug})"


def organization_key(**options) -> models.ForeignKey:
    """The owning-organization column of a tenant model (`db_index=False` where a composite
    index starting with it serves the foreign key)."""
    return models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+",
                             **options)


class TenantModel(models.Model):
    """Base of every organization-owned model: scoped manager, indexed organization."""

    organization = organization_key()

    objects = TenantManager()

    class Meta:
        abstract = True


class Membership(TenantModel):
    id = PublicIdField(prefix="mem")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "user"], name="uniq_membership")
        ]
        indexes = [models.Index(fields=["organization", "id"])]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.organization_id} as {self.role}"
