"""django-scim2 adapters (USER_ADAPTER / GROUP_ADAPTER) for our provisioning models.

A SCIM User is a `ScimUser` link (the identity provider's view of a person in one
organization; its SCIM id is the platform user's `usr_` id) over our `User` and
`Membership`; a SCIM Group is a `ScimGroup`, whose name may map to a role. The package's
adapters write straight onto Django's auth models; ours render and read the documents
and hand every write to `services` (atomic, audited, role ceiling, and the IPSIE rule:
deactivation or deletion ends the person's sessions and API keys at once).

Overridden and why:
- `validate_dict` / `from_dict`: the package only checks that `active` is a bool; ours
  reads the whole body (`resources.read_user`), with the invalidValue errors and the
  string booleans some identity providers send.
- `handle_operations`: the package implements PATCH partially (its docstring lists what it
  leaves out: value-filter paths, add-as-replace, ...); ours applies RFC 7644 3.5.2 with
  `patch.Patcher` to the writable document and saves it as a PUT of it would be.
- `location` / `path` / `resource_type_dict`: the package reverses one site-wide
  'scim:users'; here each organization has its own base URL.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django_scim.adapters import SCIMGroup, SCIMUser

from platform_core.api.serialization import iso_utc
from platform_core.tenancy.models import Membership

from . import services
from .hooks import object_post_processor_getter
from .patch import Patcher
from .resources import (
    GROUP_SPECS,
    USER_SPECS,
    GroupData,
    UserData,
    read_group,
    read_user,
)
from .schemas import GROUP_SCHEMA, USER_SCHEMA, resource_type_documents


def user_location(base_url: str, user_id: str) -> str:
    return f"{base_url}/Users/{user_id}"


def group_location(base_url: str, group_id: str) -> str:
    return f"{base_url}/Groups/{group_id}"


def _iso(value) -> str:
    return iso_utc(value)


def _name_of(link) -> dict[str, str]:
    """The SCIM `name` complex attribute: only the parts the link has."""
    parts = (("formatted", link.formatted_name), ("familyName", link.family_name),
             ("givenName", link.given_name))
    return {key: value for key, value in parts if value}


def user_document(link, *, base_url: str, is_member: bool) -> dict[str, Any]:
    """The representation of a ScimUser (with `groups` prefetched)."""
    doc: dict[str, Any] = {"schemas": [USER_SCHEMA], "id": link.user_id}
    if link.external_id:
        doc["externalId"] = link.external_id
    doc["userName"] = link.user_name
    name = _name_of(link)
    if name:
        doc["name"] = name
    if link.display_name:
        doc["displayName"] = link.display_name
    if link.emails:
        doc["emails"] = link.emails
    if link.active is not None:
        # What the person has: access is the membership (removed while deactivated).
        doc["active"] = is_member
    groups = [
        {"value": g.pk, "$ref": group_location(base_url, g.pk), "display": g.display_name}
        for g in sorted(link.groups.all(), key=lambda g: g.created_at)
    ]
    if groups:
        doc["groups"] = groups
    doc["meta"] = {
        "resourceType": "User",
        "created": _iso(link.created_at),
        "lastModified": _iso(link.updated_at),
        "location": user_location(base_url, link.user_id),
    }
    return doc


def user_writable_document(link) -> dict[str, Any]:
    """What PATCH operates on: the writable attributes as stored."""
    return {
        "userName": link.user_name,
        "externalId": link.external_id,
        "name": _name_of(link) or None,
        "displayName": link.display_name,
        "emails": list(link.emails or []),
        "active": link.active,
    }


def group_document(group, *, base_url: str) -> dict[str, Any]:
    """The representation of a ScimGroup (with `members` prefetched)."""
    doc: dict[str, Any] = {"schemas": [GROUP_SCHEMA], "id": group.pk}
    if group.external_id:
        doc["externalId"] = group.external_id
    doc["displayName"] = group.display_name
    members = [
        {"value": m.user_id, "$ref": user_location(base_url, m.user_id), "type": "User"}
        for m in sorted(group.members.all(), key=lambda m: m.created_at)
    ]
    if members:
        doc["members"] = members
    doc["meta"] = {
        "resourceType": "Group",
        "created": _iso(group.created_at),
        "lastModified": _iso(group.updated_at),
        "location": group_location(base_url, group.pk),
    }
    return doc


def group_writable_document(group) -> dict[str, Any]:
    return {
        "displayName": group.display_name,
        "externalId": group.external_id,
        "members": [
            {"value": m.user_id, "type": "User"}
            for m in sorted(group.members.all(), key=lambda m: m.created_at)
        ],
    }


def _resource_type(request: HttpRequest | None, type_id: str) -> dict[str, Any]:
    return next(d for d in resource_type_documents(request.scim_base_url) if d["id"] == type_id)


class _ServiceWrites:
    """The write half both adapters share: read the body with our reader, hand the write to
    `services`, apply PATCH with our `Patcher`. Subclasses name their reader, their writable
    document, their PATCH specs and their three service calls."""

    read_body: Any
    writable_document: Any
    patch_specs: Any
    patch_schema: str

    def _create(self, actor, data):
        raise NotImplementedError

    def _update(self, actor, obj, data):
        raise NotImplementedError

    def _delete(self, actor, obj) -> None:
        raise NotImplementedError

    def validate_dict(self, d: Any) -> None:
        self.data = self.read_body(d)

    def from_dict(self, d: Any) -> None:
        if self.data is None:
            self.data = self.read_body(d)

    def save(self) -> None:
        actor = self.request.scim_actor
        if self.obj._state.adding:
            saved = self._create(actor, self.data)
        else:
            saved = self._update(actor, self.obj, self.data)
        self.obj = object_post_processor_getter(type(saved))(self.request, saved)

    def delete(self) -> None:
        self._delete(self.request.scim_actor, self.obj)

    def handle_operations(self, operations: list) -> None:
        document = Patcher(self.patch_specs, self.patch_schema).apply(
            self.writable_document(self.obj), {"Operations": operations}
        )
        self.data = self.read_body(document)
        self.save()


class UserAdapter(_ServiceWrites, SCIMUser):
    id_field = "user_id"
    resource_type = "User"
    read_body = staticmethod(read_user)
    writable_document = staticmethod(user_writable_document)
    patch_specs, patch_schema = USER_SPECS, USER_SCHEMA

    def __init__(self, obj, request: HttpRequest | None = None) -> None:
        super().__init__(obj, request=request)
        self.data: UserData | None = None

    @property
    def path(self) -> str:
        return f"/Users/{self.id}"

    @property
    def location(self) -> str:
        return user_location(self.request.scim_base_url, self.id)

    @classmethod
    def resource_type_dict(cls, request: HttpRequest | None = None) -> dict[str, Any]:
        return _resource_type(request, "User")

    def to_dict(self) -> dict[str, Any]:
        is_member = getattr(self.obj, "is_member", None)
        if is_member is None:
            organization = self.request.scim_organization
            is_member = (
                Membership.objects.for_organization(organization)
                .filter(user_id=self.obj.user_id)
                .exists()
            )
        return user_document(self.obj, base_url=self.request.scim_base_url, is_member=is_member)

    def _create(self, actor, data):
        return services.user_create(actor=actor, data=data)

    def _update(self, actor, obj, data):
        return services.user_update(actor=actor, link=obj, data=data)

    def _delete(self, actor, obj) -> None:
        services.user_delete(actor=actor, link=obj)


class GroupAdapter(_ServiceWrites, SCIMGroup):
    id_field = "id"
    resource_type = "Group"
    read_body = staticmethod(read_group)
    writable_document = staticmethod(group_writable_document)
    patch_specs, patch_schema = GROUP_SPECS, GROUP_SCHEMA

    def __init__(self, obj, request: HttpRequest | None = None) -> None:
        super().__init__(obj, request=request)
        self.data: GroupData | None = None

    @property
    def display_name(self) -> str:
        return self.obj.display_name

    @property
    def path(self) -> str:
        return f"/Groups/{self.id}"

    @property
    def location(self) -> str:
        return group_location(self.request.scim_base_url, self.id)

    @classmethod
    def resource_type_dict(cls, request: HttpRequest | None = None) -> dict[str, Any]:
        return _resource_type(request, "Group")

    def to_dict(self) -> dict[str, Any]:
        return group_document(self.obj, base_url=self.request.scim_base_url)

    def _create(self, actor, data):
        return services.group_create(actor=actor, data=data)

    def _update(self, actor, obj, data):
        return services.group_update(actor=actor, group=obj, data=data)

    def _delete(self, actor, obj) -> None:
        services.group_delete(actor=actor, group=obj)
