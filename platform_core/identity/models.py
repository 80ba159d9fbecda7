"""People and credentials: users, dashboard sessions and API keys."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class UserManager(BaseUserManager):
    use_in_migrations = True

    def create_user(self, email: str, password: str | None = None, **fields):
        email = self.normalize_email(email).lower()
        user = self.model(email=email, **fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **fields):
        fields.update(is_staff=True, is_superuser=True)
        return self.create_user(email, password, **fields)


class User(AbstractBaseUser, PermissionsMixin):
    """A person. Belongs to organizations through memberships; logs in by email."""

    id = PublicIdField(prefix="usr")
    email = models.EmailField(unique=True)
    name = models.CharField(max_length=200, blank=True)
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False, help_text="May use the operator console.")
    date_joined = models.DateTimeField(default=timezone.now)

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    class Meta:
        ordering = ["email"]

    def __str__(self) -> str:
        return self.email


class UserSession(TenantModel):
    """Server-side record behind a session JWT; revoking it ends the token at once."""

    id = PublicIdField(prefix="ses")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="sessions")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=400, blank=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "user", "id"])]

    @property
    def is_live(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()


class KeyType(models.TextChoices):
    SECRET = "secret"
    PUBLIC = "public"


class KeyMode(models.TextChoices):
    TEST = "test"
    LIVE = "live"


class APIKey(TenantModel):
    """An API key. Only its SHA-256 digest is stored; `prefix` and `last4` are for display."""

    id = PublicIdField(prefix="key")
    name = models.CharField(max_length=200)
    type = models.CharField(max_length=8, choices=KeyType.choices, default=KeyType.SECRET)
    mode = models.CharField(max_length=4, choices=KeyMode.choices)
    prefix = models.CharField(max_length=24)
    last4 = models.CharField(max_length=4)
    key_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    allowed_ips = models.JSONField(default=list, blank=True, help_text="CIDR ranges; empty: any")
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="api_keys"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "id"])]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…{self.last4})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
