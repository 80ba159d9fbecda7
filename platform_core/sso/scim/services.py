"""SCIM writes. Each is atomic and audited with actor_type "scim".

Access follows `active`: an active SCIM user is a member of the organization (Membership);
deactivating (active=false) or deleting removes the membership and ends, at once, the
person's sessions and the API keys they created in this organization. Groups map to roles
(a group named after a role, or listed in ScimConfig.group_role_map); SCIM never grants a
role above the organization's ceiling (ScimConfig.max_role, default admin) and never
changes a member whose role is above it (SCIM_ROLE_CEILING_EXCEEDED).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.identity import credentials
from platform_core.identity.models import APIKey, User, UserSession
from platform_core.tenancy.models import ROLE_RANK, Membership, Organization, Role

from ..models import ScimConfig, ScimGroup, ScimUser
from .errors import ScimError, ceiling, invalid_value, uniqueness
from .resources import GroupData, UserData


@dataclass
class ScimActor:
    organization: Organization
    config: ScimConfig
    request: Any = None

    def audit(
        self,
        action: str,
        *,
        target=None,
        target_type: str = "",
        target_id: str = "",
        metadata: dict | None = None,
    ) -> None:
        audit_record(
            action=action,
            organization=self.organization,
            actor_type="scim",
            actor_id=self.config.pk,
            actor_display="SCIM provisioning",
            target=target,
            target_type=target_type,
            target_id=target_id,
            request=self.request,
            metadata=metadata,
        )

    @property
    def ceiling_rank(self) -> int:
        return ROLE_RANK[self.config.max_role]


def group_role(config: ScimConfig, display_name: str) -> str | None:
    """The role a group grants: its mapping in the settings, else its own name if a role."""
    name = (display_name or "").strip().lower()
    mapped = (config.group_role_map or {}).get(name)
    if mapped in Role.values:
        return mapped
    return name if name in Role.values else None


# --- Links for members made outside SCIM ------------------------------------------------------


def sync_member_links(*, organization: Organization) -> int:
    """Give every member a ScimUser (userName = email) so the IdP can find and manage people
    invited from the dashboard. One query when nothing is missing."""
    missing = list(
        Membership.objects.for_organization(organization)
        .exclude(user_id__in=ScimUser.objects.for_organization(organization).values("user_id"))
        .select_related("user")
    )
    if not missing:
        return 0
    ScimUser.objects.bulk_create(
        [
            ScimUser(
                organization=organization,
                user=m.user,
                user_name=m.user.email,
                emails=[{"value": m.user.email, "primary": True}],
                display_name=m.user.name or None,
                active=True,
                role=m.role,
            )
            for m in missing
        ],
        ignore_conflicts=True,
    )
    return len(missing)


# --- Access: membership, sessions, keys ---------------------------------------------------------


def _membership(org: Organization, user_id: str, *, lock: bool = False) -> Membership | None:
    qs = Membership.objects.for_organization(org).filter(user_id=user_id)
    if lock:
        qs = qs.select_for_update()
    return qs.first()


def _current_role(link: ScimUser, membership: Membership | None) -> str:
    return membership.role if membership is not None else link.role


def _guard_manageable(actor: ScimActor, link: ScimUser, membership: Membership | None) -> None:
    role = _current_role(link, membership)
    if ROLE_RANK[role] > actor.ceiling_rank:
        raise ceiling(
            f"This member holds the role {role}, above the highest role SCIM may "
            f"manage here ({actor.config.max_role}); SCIM cannot change them."
        )


def _ensure_another_owner(org: Organization, membership: Membership) -> None:
    owners = list(
        Membership.objects.for_organization(org)
        .select_for_update()
        .filter(role=Role.OWNER)
        .values_list("pk", flat=True)
    )
    if not any(pk != membership.pk for pk in owners):
        raise ScimError(409, "An organization keeps at least one owner.", code="CONFLICT")


def _end_access(actor: ScimActor, link: ScimUser, membership: Membership | None) -> dict:
    """Remove the membership; end the member's sessions and API keys here, effective now."""
    org = actor.organization
    if membership is not None:
        if membership.role == Role.OWNER:
            _ensure_another_owner(org, membership)
        link.role = membership.role
        membership.delete()
    now = timezone.now()
    sessions = UserSession.objects.for_organization(org).filter(
        user_id=link.user_id, revoked_at=None
    )
    session_ids = list(sessions.values_list("pk", flat=True))
    sessions.update(revoked_at=now)
    keys = APIKey.objects.for_organization(org).filter(created_by_id=link.user_id, revoked_at=None)
    key_rows = list(keys.values_list("pk", "key_hash"))
    keys.update(revoked_at=now)
    for key_id, _hash in key_rows:
        actor.audit(
            "api_key.revoked",
            target_type="apikey",
            target_id=key_id,
            metadata={"reason": "scim_deprovisioned", "user_id": link.user_id},
        )
    credentials.forget_sessions(session_ids)
    credentials.forget_api_keys([h for _id, h in key_rows])
    return {"sessions_revoked": len(session_ids), "api_keys_revoked": len(key_rows)}


def _grant_access(actor: ScimActor, link: ScimUser) -> None:
    if ROLE_RANK[link.role] > actor.ceiling_rank:
        raise ceiling(
            f"Reactivating would restore the role {link.role}, above the highest "
            f"role SCIM may grant here ({actor.config.max_role})."
        )
    try:
        with transaction.atomic():
            Membership.objects.for_organization(actor.organization).create(
                organization=actor.organization, user_id=link.user_id, role=link.role
            )
    except IntegrityError:
        pass  # already a member


# --- Users --------------------------------------------------------------------------------------


def _check_user_name_free(actor: ScimActor, user_name: str, *, exclude_pk: str | None) -> None:
    taken = ScimUser.objects.for_organization(actor.organization).filter(
        user_name__iexact=user_name
    )
    if exclude_pk:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise uniqueness(f"userName {user_name!r} is already taken in this organization.")


def _belongs_elsewhere(user: User, org: Organization) -> bool:
    return (
        Membership.objects.dangerously_unscoped()
        .filter(user=user)
        .exclude(organization_id=org.pk)
        .exists()
        or ScimUser.objects.dangerously_unscoped()
        .filter(user=user)
        .exclude(organization_id=org.pk)
        .exists()
    )


def _sync_person(user: User, org: Organization, data: UserData) -> list[str]:
    """Carry the IdP's name and sign-in address onto the platform user, but only for people
    this organization alone manages: never for someone who also belongs elsewhere, and the
    sign-in email never for someone who set their own password (an IdP must not be able to
    redirect a password reset)."""
    if _belongs_elsewhere(user, org):
        return []
    changed = []
    name = data.person_name
    if name and name != user.name:
        user.name = name
        changed.append("name")
    email = data.primary_email
    if email != user.email and not user.has_usable_password():
        if User.objects.filter(email__iexact=email).exclude(pk=user.pk).exists():
            raise uniqueness(f"Another account already uses {email}.")
        user.email = email
        changed.append("email")
    if changed:
        user.save(update_fields=changed)
    return changed


def _apply_user_fields(link: ScimUser, data: UserData) -> list[str]:
    fields = {
        "user_name": data.user_name,
        "external_id": data.external_id,
        "given_name": data.given_name,
        "family_name": data.family_name,
        "formatted_name": data.formatted_name,
        "display_name": data.display_name,
        "emails": data.emails,
    }
    changed = [name for name, value in fields.items() if getattr(link, name) != value]
    for name in changed:
        setattr(link, name, fields[name])
    return changed


def user_create(*, actor: ScimActor, data: UserData) -> ScimUser:
    org = actor.organization
    email = data.primary_email
    with transaction.atomic():
        _check_user_name_free(actor, data.user_name, exclude_pk=None)
        user = User.objects.filter(email__iexact=email).first()
        created_user = user is None
        if user is None:
            user = User.objects.create_user(email, None, name=data.person_name)
            user.set_unusable_password()
            user.save(update_fields=["password"])
        elif ScimUser.objects.for_organization(org).filter(user=user).exists():
            raise uniqueness(f"A user with the email {email} already exists here.")
        membership = _membership(org, user.pk, lock=True)
        active = True if data.active is None else data.active  # absent on create: active
        link = ScimUser(
            organization=org,
            user=user,
            active=active,
            role=membership.role if membership else Role.VIEWER,
        )
        _apply_user_fields(link, data)
        try:
            with transaction.atomic():
                link.save(force_insert=True)
        except IntegrityError:
            raise uniqueness("This user already exists here.") from None
        effects: dict = {}
        if data.active is False:
            if membership is not None:
                _guard_manageable(actor, link, membership)
                effects = _end_access(actor, link, membership)
                link.save(update_fields=["role"])
        elif membership is None:
            _grant_access(actor, link)
        if not created_user:
            _sync_person(user, org, data)
        actor.audit(
            "scim.user.created",
            target=user,
            metadata={
                "user_name": data.user_name,
                "active": data.active,
                "linked_existing_user": not created_user,
                **effects,
            },
        )
    return link


def user_update(*, actor: ScimActor, link: ScimUser, data: UserData) -> ScimUser:
    """PUT, and PATCH once its operations are applied to the document."""
    org = actor.organization
    with transaction.atomic():
        link = ScimUser.objects.for_organization(org).select_for_update().get(pk=link.pk)
        membership = _membership(org, link.user_id, lock=True)
        _guard_manageable(actor, link, membership)
        if data.user_name.lower() != link.user_name.lower():
            _check_user_name_free(actor, data.user_name, exclude_pk=link.pk)
        changed = _apply_user_fields(link, data)
        was_active, now_active = membership is not None, data.active is not False
        if link.active != data.active:
            link.active = data.active
            changed.append("active")
        effects: dict = {}
        if was_active and not now_active:
            effects = _end_access(actor, link, membership)
            actor.audit("scim.user.deactivated", target=link.user, metadata=effects)
        elif now_active and not was_active:
            _grant_access(actor, link)
            actor.audit("scim.user.reactivated", target=link.user, metadata={"role": link.role})
        try:
            with transaction.atomic():
                link.save()
        except IntegrityError:
            raise uniqueness(f"userName {data.user_name!r} is already taken.") from None
        person = _sync_person(link.user, org, data)
        if changed or person:
            actor.audit(
                "scim.user.updated",
                target=link.user,
                metadata={"fields": sorted(changed), "user_fields": person},
            )
    return link


def user_delete(*, actor: ScimActor, link: ScimUser) -> None:
    org = actor.organization
    with transaction.atomic():
        link = ScimUser.objects.for_organization(org).select_for_update().get(pk=link.pk)
        membership = _membership(org, link.user_id, lock=True)
        _guard_manageable(actor, link, membership)
        effects = _end_access(actor, link, membership)
        user = link.user
        link.delete()
        actor.audit("scim.user.deleted", target=user, metadata=effects)


# --- Groups and roles -------------------------------------------------------------------------


def _resolve_members(actor: ScimActor, member_ids: list[str]) -> list[ScimUser]:
    if not member_ids:
        return []
    sync_member_links(organization=actor.organization)
    found = {
        link.user_id: link
        for link in ScimUser.objects.for_organization(actor.organization).filter(
            user_id__in=member_ids
        )
    }
    unknown = [m for m in member_ids if m not in found]
    if unknown:
        raise invalid_value(f"No such user in this organization: {', '.join(unknown[:5])}.")
    return [found[m] for m in member_ids]


def _check_grant(actor: ScimActor, role: str | None, granted: Iterable[ScimUser]) -> None:
    if role and ROLE_RANK[role] > actor.ceiling_rank and any(True for _ in granted):
        raise ceiling(
            f"Members of this group would get the role {role}, above the highest "
            f"role SCIM may grant here ({actor.config.max_role})."
        )


def _recompute_roles(actor: ScimActor, link_ids: set[str]) -> None:
    """Set each affected member's role to the highest role of the mapped groups they are in
    (viewer when none). Members above the ceiling keep theirs; SCIM never touches them."""
    if not link_ids:
        return
    org = actor.organization
    links = (
        ScimUser.objects.for_organization(org)
        .filter(pk__in=link_ids)
        .select_for_update(of=("self",))
        .prefetch_related("groups")
    )
    for link in links:
        roles = [
            r for r in (group_role(actor.config, g.display_name) for g in link.groups.all()) if r
        ]
        new_role = max(roles, key=ROLE_RANK.__getitem__) if roles else Role.VIEWER
        membership = _membership(org, link.user_id, lock=True)
        current = _current_role(link, membership)
        if ROLE_RANK[current] > actor.ceiling_rank or new_role == current:
            continue
        if ROLE_RANK[new_role] > actor.ceiling_rank:
            raise ceiling(
                f"This change would grant the role {new_role}, above the highest "
                f"role SCIM may grant here ({actor.config.max_role})."
            )
        if membership is not None:
            if membership.role == Role.OWNER:
                _ensure_another_owner(org, membership)
            membership.role = new_role
            membership.save(update_fields=["role"])
        link.role = new_role
        link.save(update_fields=["role", "updated_at"])
        from ..services import forget_member_sessions

        forget_member_sessions(organization=org, user_id=link.user_id)
        actor.audit(
            "scim.user.role_changed", target=link.user, metadata={"from": current, "to": new_role}
        )


def _check_name_free(actor: ScimActor, name: str, exclude_pk: str | None) -> None:
    taken = ScimGroup.objects.for_organization(actor.organization).filter(display_name__iexact=name)
    if exclude_pk:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise uniqueness(f"A group named {name!r} already exists.")


def group_create(*, actor: ScimActor, data: GroupData) -> ScimGroup:
    org = actor.organization
    with transaction.atomic():
        _check_name_free(actor, data.display_name, None)
        members = _resolve_members(actor, data.member_ids)
        role = group_role(actor.config, data.display_name)
        _check_grant(actor, role, members)
        group = ScimGroup(
            organization=org, display_name=data.display_name, external_id=data.external_id
        )
        try:
            with transaction.atomic():
                group.save(force_insert=True)
        except IntegrityError:
            raise uniqueness(f"A group named {data.display_name!r} already exists.") from None
        group.members.set(members)
        if role:
            _recompute_roles(actor, {m.pk for m in members})
        actor.audit(
            "scim.group.created",
            target=group,
            metadata={
                "display_name": group.display_name,
                "role": role,
                "members": [m.user_id for m in members],
            },
        )
    return group


def group_update(*, actor: ScimActor, group: ScimGroup, data: GroupData) -> ScimGroup:
    org = actor.organization
    with transaction.atomic():
        group = ScimGroup.objects.for_organization(org).select_for_update().get(pk=group.pk)
        if data.display_name.lower() != group.display_name.lower():
            _check_name_free(actor, data.display_name, group.pk)
        old_members = {m.pk: m for m in group.members.all()}
        new_members = {m.pk: m for m in _resolve_members(actor, data.member_ids)}
        old_role = group_role(actor.config, group.display_name)
        new_role = group_role(actor.config, data.display_name)
        granted = (
            [m for pk, m in new_members.items() if pk not in old_members]
            if new_role == old_role
            else list(new_members.values())
        )
        _check_grant(actor, new_role, granted)
        changed = []
        if group.display_name != data.display_name:
            changed.append("displayName")
        if group.external_id != data.external_id:
            changed.append("externalId")
        group.display_name, group.external_id = data.display_name, data.external_id
        group.save()
        added = set(new_members) - set(old_members)
        removed = set(old_members) - set(new_members)
        if added:
            group.members.add(*[new_members[pk] for pk in added])
        if removed:
            group.members.remove(*[old_members[pk] for pk in removed])
        if old_role != new_role:
            affected = set(old_members) | set(new_members)
        elif new_role:
            affected = added | removed
        else:
            affected = set()
        _recompute_roles(actor, affected)
        if changed or added or removed:
            actor.audit(
                "scim.group.updated",
                target=group,
                metadata={
                    "fields": changed,
                    "role": new_role,
                    "members_added": sorted(new_members[pk].user_id for pk in added),
                    "members_removed": sorted(old_members[pk].user_id for pk in removed),
                },
            )
    return group


def group_delete(*, actor: ScimActor, group: ScimGroup) -> None:
    org = actor.organization
    with transaction.atomic():
        group = ScimGroup.objects.for_organization(org).select_for_update().get(pk=group.pk)
        role = group_role(actor.config, group.display_name)
        members = set(group.members.values_list("pk", flat=True))
        group_id, name = group.pk, group.display_name
        group.delete()
        if role:
            _recompute_roles(actor, members)
        actor.audit(
            "scim.group.deleted",
            target_type="scimgroup",
            target_id=group_id,
            metadata={"display_name": name, "role": role},
        )
