"""Discovery documents (RFC 7643 sections 5-7): what this service provider supports.

The schemas describe exactly the attributes the resources carry, so a client that builds
its models from /Schemas (scim2-tester does) sends and expects nothing else. `emails` is
required on Users: the platform signs people in by email address.
"""

from __future__ import annotations

from typing import Any

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
SEARCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"
SPC_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
RESOURCE_TYPE_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema"

MAX_RESULTS = 200


def _attr(
    name: str,
    type_: str = "string",
    *,
    description: str = "",
    multi: bool = False,
    required: bool = False,
    case_exact: bool = False,
    mutability: str = "readWrite",
    returned: str = "default",
    uniqueness: str = "none",
    sub: list[dict] | None = None,
    canonical: list[str] | None = None,
    reference_types: list[str] | None = None,
) -> dict[str, Any]:
    attr: dict[str, Any] = {
        "name": name,
        "type": type_,
        "multiValued": multi,
        "description": description or name,
        "required": required,
        "mutability": mutability,
        "returned": returned,
    }
    if type_ in ("string", "reference", "binary"):
        attr["caseExact"] = case_exact
        attr["uniqueness"] = uniqueness
    if sub is not None:
        attr["subAttributes"] = sub
    if canonical:
        attr["canonicalValues"] = canonical
    if reference_types:
        attr["referenceTypes"] = reference_types
    return attr


USER_ATTRIBUTES = [
    _attr(
        "userName",
        required=True,
        uniqueness="server",
        description="Unique identifier of the user in this organization, often an email.",
    ),
    _attr(
        "name",
        "complex",
        description="The person's name.",
        sub=[
            _attr("formatted", description="Full name for display."),
            _attr("familyName", description="Family name."),
            _attr("givenName", description="Given name."),
        ],
    ),
    _attr("displayName", description="Name shown in the dashboard."),
    _attr(
        "emails",
        "complex",
        multi=True,
        required=True,
        description="Email addresses; the primary one is the sign-in address.",
        sub=[
            _attr("value", required=True, description="The email address."),
            _attr("type", canonical=["work", "home", "other"], description="Label."),
            _attr("primary", "boolean", description="The sign-in address."),
        ],
    ),
    _attr(
        "active",
        "boolean",
        description="false deactivates: the member loses access, sessions and API keys.",
    ),
    _attr(
        "groups",
        "complex",
        multi=True,
        mutability="readOnly",
        description="Groups the user belongs to (managed through Groups).",
        sub=[
            _attr("value", mutability="readOnly", description="Group id."),
            _attr(
                "$ref",
                "reference",
                mutability="readOnly",
                reference_types=["Group"],
                description="Group URI.",
            ),
            _attr("display", mutability="readOnly", description="Group displayName."),
        ],
    ),
]

GROUP_ATTRIBUTES = [
    _attr(
        "displayName",
        required=True,
        uniqueness="server",
        description="Group name; a role name (owner, admin, developer, agent, viewer) or a "
        "name mapped in the SCIM settings grants that role to members.",
    ),
    _attr(
        "members",
        "complex",
        multi=True,
        description="Users in the group.",
        sub=[
            _attr("value", mutability="immutable", description="User id."),
            _attr(
                "$ref",
                "reference",
                mutability="immutable",
                reference_types=["User"],
                description="User URI.",
            ),
            _attr("type", mutability="immutable", canonical=["User"], description="Member type."),
        ],
    ),
]


def _meta(base_url: str, resource_type: str, path: str) -> dict[str, str]:
    return {"resourceType": resource_type, "location": f"{base_url}{path}"}


def schema_documents(base_url: str) -> list[dict[str, Any]]:
    return [
        {
            "schemas": [SCHEMA_SCHEMA],
            "id": USER_SCHEMA,
            "name": "User",
            "description": "User account",
            "attributes": USER_ATTRIBUTES,
            "meta": _meta(base_url, "Schema", f"/Schemas/{USER_SCHEMA}"),
        },
        {
            "schemas": [SCHEMA_SCHEMA],
            "id": GROUP_SCHEMA,
            "name": "Group",
            "description": "Group",
            "attributes": GROUP_ATTRIBUTES,
            "meta": _meta(base_url, "Schema", f"/Schemas/{GROUP_SCHEMA}"),
        },
    ]


def resource_type_documents(base_url: str) -> list[dict[str, Any]]:
    return [
        {
            "schemas": [RESOURCE_TYPE_SCHEMA],
            "id": "User",
            "name": "User",
            "endpoint": "/Users",
            "description": "User account",
            "schema": USER_SCHEMA,
            "schemaExtensions": [],
            "meta": _meta(base_url, "ResourceType", "/ResourceTypes/User"),
        },
        {
            "schemas": [RESOURCE_TYPE_SCHEMA],
            "id": "Group",
            "name": "Group",
            "endpoint": "/Groups",
            "description": "Group",
            "schema": GROUP_SCHEMA,
            "schemaExtensions": [],
            "meta": _meta(base_url, "ResourceType", "/ResourceTypes/Group"),
        },
    ]


def service_provider_config(base_url: str) -> dict[str, Any]:
    return {
        "schemas": [SPC_SCHEMA],
        "documentationUri": f"{base_url}/ServiceProviderConfig",
        "patch": {"supported": True},
        "bulk": {"supported": False, "maxOperations": 0, "maxPayloadSize": 0},
        "filter": {"supported": True, "maxResults": MAX_RESULTS},
        "changePassword": {"supported": False},
        "sort": {"supported": False},
        "etag": {"supported": False},
        "authenticationSchemes": [
            {
                "type": "oauthbearertoken",
                "name": "OAuth Bearer Token",
                "description": "The organization's SCIM token (POST "
                "/api/v1/settings/scim/generate-token) as Authorization: Bearer.",
                "primary": True,
            }
        ],
        "meta": _meta(base_url, "ServiceProviderConfig", "/ServiceProviderConfig"),
    }
