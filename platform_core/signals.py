"""Keep the authentication cache honest: any change that could refuse a credential drops it."""

from __future__ import annotations

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from platform_core.identity import credentials
from platform_core.identity.models import APIKey, User, UserSession
from platform_core.tenancy.models import Membership, Organization


def _forget_org(org_id: str) -> None:
    # Every snapshot embeds the organization (sandbox flag, is_active): drop them all.
    credentials.forget_api_keys(
        list(
            APIKey.objects.dangerously_unscoped()
            .filter(organization_id=org_id, revoked_at=None)
            .values_list("key_hash", flat=True)
        )
    )
    credentials.forget_sessions(
        list(
            UserSession.objects.dangerously_unscoped()
            .filter(organization_id=org_id, revoked_at=None)
            .values_list("pk", flat=True)
        )
    )


@receiver(post_save, sender=Organization)
def organization_changed(sender, instance: Organization, created: bool, **kwargs) -> None:
    if not created:
        _forget_org(instance.pk)


@receiver(post_save, sender=APIKey)
@receiver(post_delete, sender=APIKey)
def api_key_changed(sender, instance: APIKey, **kwargs) -> None:
    credentials.forget_api_key(instance.key_hash)


def _forget_user_sessions(user_id: str, org_id: str | None = None) -> None:
    sessions = UserSession.objects.dangerously_unscoped().filter(user_id=user_id, revoked_at=None)
    if org_id:
        sessions = sessions.filter(organization_id=org_id)
    credentials.forget_sessions(list(sessions.values_list("pk", flat=True)))


@receiver(post_save, sender=Membership)
@receiver(post_delete, sender=Membership)
def membership_changed(sender, instance: Membership, **kwargs) -> None:
    _forget_user_sessions(instance.user_id, instance.organization_id)


@receiver(post_save, sender=User)
def user_changed(sender, instance: User, created: bool, **kwargs) -> None:
    if not created:
        _forget_user_sessions(instance.pk)
