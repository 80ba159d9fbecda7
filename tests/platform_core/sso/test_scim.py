"""SCIM 2.0 provisioning (Document 1, 4.3 and 5 rules 8-9) over HTTP."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.test import Client

from platform_core.audit.models import AuditLogEntry
from platform_core.identity import services as identity_services
from platform_core.identity.models import KeyType, User
from platform_core.sso.models import ScimConfig
from platform_core.tenancy.models import Membership

SCIM = "application/scim+json"
ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"


class Scim:
    """A SCIM client of one organization: Bearer token, scim+json bodies."""

    def __init__(self, slug: str, token: str) -> None:
        self.base = f"/scim/v2/{slug}"
        self.client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    def _call(self, method: str, path: str, body=None, **params):
        kwargs = {}
        if body is not None:
            kwargs = {"data": json.dumps(body), "content_type": SCIM}
        url = self.base + path
        if params and method == "get":
            return self.client.get(url, params)
        return getattr(self.client, method)(url, **kwargs)

    def get(self, path, **params):
        return self._call("get", path, **params)

    def post(self, path, body):
        return self._call("post", path, body)

    def put(self, path, body):
        return self._call("put", path, body)

    def patch(self, path, *operations):
        return self._call(
            "patch", path, {"schemas": [PATCH_SCHEMA], "Operations": list(operations)}
        )

    def delete(self, path):
        return self._call("delete", path)

    def create_user(self, email: str, **extra):
        body = {
            "schemas": [USER_SCHEMA],
            "userName": email,
            "emails": [{"value": email, "type": "work", "primary": True}],
            **extra,
        }
        response = self.post("/Users", body)
        assert response.status_code == 201, response.content
        return response.json()

    def create_group(self, name: str, members: list[str] = ()):
        response = self.post(
            "/Groups",
            {
                "schemas": [GROUP_SCHEMA],
                "displayName": name,
                "members": [{"value": m} for m in members],
            },
        )
        return response


def _token(tenant) -> str:
    response = tenant.session_client().post("/api/v1/settings/scim/generate-token")
    assert response.status_code == 201, response.content
    return response.json()["data"]["token"]


@pytest.fixture
def scim(tenant) -> Scim:
    return Scim(tenant.org.slug, _token(tenant))


def _scim_error(response, status: int, scim_type: str | None = None) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith(SCIM)
    body = response.json()
    assert body["schemas"] == [ERROR_SCHEMA]
    assert body["status"] == str(status)
    assert body["detail"]
    if scim_type:
        assert body["scimType"] == scim_type
    return body


def _role(tenant, user_id: str) -> str | None:
    membership = Membership.objects.for_organization(tenant.org).filter(user_id=user_id).first()
    return membership.role if membership else None


# --- Token -----------------------------------------------------------------------------------


def test_token_is_shown_once_stored_hashed_and_regeneration_revokes(tenant):
    owner = tenant.session_client()
    assert owner.get("/api/v1/settings/scim").json()["data"]["enabled"] is False
    first = _token(tenant)
    settings_body = owner.get("/api/v1/settings/scim").json()["data"]
    assert settings_body["enabled"] is True
    assert settings_body["token_last4"] == first[-4:]
    assert "token" not in settings_body
    stored = ScimConfig.objects.for_organization(tenant.org).get()
    assert stored.token_hash == hashlib.sha256(first.encode()).hexdigest()
    assert first not in json.dumps(settings_body)

    assert Scim(tenant.org.slug, first).get("/Users").status_code == 200
    second = _token(tenant)
    assert second != first
    _scim_error(Scim(tenant.org.slug, first).get("/Users"), 401)
    assert Scim(tenant.org.slug, second).get("/Users").status_code == 200
    assert (
        AuditLogEntry.objects.filter(organization=tenant.org, action="scim.token_generated").count()
        == 2
    )


def test_token_generation_is_for_owners_and_admins(tenant):
    created = tenant.client().post(
        "/api/v1/users",
        {
            "email": "dev@example.com",
            "name": "D",
            "role": "developer",
            "password": "Another-Horse-7-battery",
        },
        format="json",
    )
    assert created.status_code == 201
    developer = tenant.session_client(
        User.objects.get(email="dev@example.com"), "Another-Horse-7-battery"
    )
    response = developer.post("/api/v1/settings/scim/generate-token")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"
    assert developer.get("/api/v1/settings/scim").status_code == 403


def test_disabling_scim_revokes_the_token(tenant, scim):
    owner = tenant.session_client()
    response = owner.patch("/api/v1/settings/scim", {"enabled": False}, format="json")
    assert response.status_code == 200
    assert response.json()["data"] == {
        **response.json()["data"],
        "enabled": False,
        "token_last4": "",
    }
    _scim_error(scim.get("/Users"), 401)


def test_authentication_failures(tenant, other_tenant, scim, anon):
    _scim_error(anon.get(f"/scim/v2/{tenant.org.slug}/Users"), 401)
    _scim_error(Scim(tenant.org.slug, "scim_not-a-token").get("/Users"), 401)
    other_token = _token(other_tenant)
    # Org B's token under org A's slug, and A's under B's: 401, like an unknown token.
    _scim_error(Scim(tenant.org.slug, other_token).get("/Users"), 401)
    _scim_error(
        Scim(other_tenant.org.slug, scim.client.defaults["HTTP_AUTHORIZATION"][7:]).get("/Users"),
        401,
    )
    _scim_error(Scim("no-such-org", other_token).get("/Users"), 401)
    response = Scim(tenant.org.slug, "scim_x").get("/Users")
    assert response["WWW-Authenticate"].startswith("Bearer")


# --- Users -----------------------------------------------------------------------------------


def test_create_user_makes_a_member_and_is_audited(tenant, scim):
    response = scim.post(
        "/Users",
        {
            "schemas": [USER_SCHEMA],
            "userName": "Ada@Example.com",
            "externalId": "okta-1",
            "name": {"givenName": "Ada", "familyName": "Lovelace"},
            "displayName": "Ada L",
            "emails": [{"value": "ada@example.com", "type": "work", "primary": True}],
            "active": True,
        },
    )
    assert response.status_code == 201, response.content
    assert response["Content-Type"].startswith(SCIM)
    user = response.json()
    assert response["Location"] == user["meta"]["location"]
    assert user["id"].startswith("usr_")
    assert user["userName"] == "Ada@Example.com"
    assert user["name"] == {"givenName": "Ada", "familyName": "Lovelace"}
    assert user["active"] is True
    assert user["meta"]["resourceType"] == "User"
    assert _role(tenant, user["id"]) == "viewer"
    listed = tenant.client().get("/api/v1/users").json()["data"]
    assert "ada@example.com" in json.dumps(listed)
    entry = AuditLogEntry.objects.get(organization=tenant.org, action="scim.user.created")
    assert entry.actor_type == "scim"
    assert entry.target_id == user["id"]
    assert User.objects.get(pk=user["id"]).has_usable_password() is False

    assert scim.get(f"/Users/{user['id']}").json()["userName"] == "Ada@Example.com"
    _scim_error(
        scim.post(
            "/Users", {"userName": "ada@example.com", "emails": [{"value": "other@example.com"}]}
        ),
        409,
        "uniqueness",
    )
    _scim_error(scim.post("/Users", {"userName": "not-an-email"}), 400, "invalidValue")
    _scim_error(scim.post("/Users", {"emails": [{"value": "x@example.com"}]}), 400, "invalidValue")
    bad_json = scim.client.post(f"{scim.base}/Users", data="{", content_type=SCIM)
    _scim_error(bad_json, 400, "invalidSyntax")


def test_members_invited_in_the_dashboard_are_visible(tenant, scim):
    body = scim.get("/Users", filter=f'userName eq "{tenant.owner.email.upper()}"').json()
    assert body["totalResults"] == 1
    assert body["Resources"][0]["id"] == tenant.owner.pk
    assert body["Resources"][0]["emails"] == [{"value": tenant.owner.email, "primary": True}]


def test_filtering(tenant, scim):
    scim.create_user("a@example.com", externalId="ext-a", displayName="Alpha")
    scim.create_user("b@example.com", externalId="ext-b", displayName="Beta")
    scim.create_user("c@example.com", externalId="ext-c", displayName="Alpha")

    def names(filter_text):
        response = scim.get("/Users", filter=filter_text)
        assert response.status_code == 200, response.content
        return sorted(r["userName"] for r in response.json()["Resources"])

    assert names('userName eq "A@EXAMPLE.COM"') == ["a@example.com"]
    assert names('externalId eq "ext-b"') == ["b@example.com"]
    assert names('displayName eq "Alpha" and externalId eq "ext-c"') == ["c@example.com"]
    assert names('externalId eq "ext-a" or externalId eq "ext-b"') == [
        "a@example.com",
        "b@example.com",
    ]
    assert names('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "b@example.com"') == [
        "b@example.com"
    ]
    assert names('userName sw "a@" and not (externalId eq "ext-a")') == []
    _scim_error(scim.get("/Users", filter='title eq "x"'), 400, "invalidFilter")
    _scim_error(scim.get("/Users", filter="userName eq"), 400, "invalidFilter")


def test_pagination(tenant, scim, django_assert_max_num_queries):
    for n in range(5):
        scim.create_user(f"p{n}@example.com")
    with django_assert_max_num_queries(8):
        response = scim.get("/Users", startIndex=2, count=2)
    body = response.json()
    assert body["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:ListResponse"]
    assert (body["totalResults"], body["startIndex"], body["itemsPerPage"]) == (6, 2, 2)
    everyone = [r["id"] for r in scim.get("/Users").json()["Resources"]]
    assert [r["id"] for r in body["Resources"]] == everyone[1:3]
    assert scim.get("/Users", count=0).json()["Resources"] == []
    assert scim.get("/Users", startIndex=6, count=10).json()["itemsPerPage"] == 1
    searched = scim.post(
        "/Users/.search",
        {
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
            "filter": 'userName eq "p3@example.com"',
            "startIndex": 1,
            "count": 10,
        },
    ).json()
    assert [r["userName"] for r in searched["Resources"]] == ["p3@example.com"]


def test_patch_operations(tenant, scim):
    user = scim.create_user("pat@example.com", name={"givenName": "Pat"})
    path = f"/Users/{user['id']}"
    response = scim.patch(
        path,
        {"op": "replace", "path": "name.familyName", "value": "Smith"},
        {"op": "Replace", "path": 'emails[type eq "work"].value', "value": "pat.smith@example.com"},
        {"op": "add", "path": "displayName", "value": "Pat S"},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["name"] == {"givenName": "Pat", "familyName": "Smith"}
    assert body["emails"] == [{"value": "pat.smith@example.com", "type": "work", "primary": True}]
    assert body["displayName"] == "Pat S"
    # The IdP manages this SSO-only person: their sign-in address follows.
    assert User.objects.get(pk=user["id"]).email == "pat.smith@example.com"
    # No-path replace (Azure AD style), string booleans included.
    response = scim.patch(path, {"op": "replace", "value": {"active": "False"}})
    assert response.json()["active"] is False
    _scim_error(scim.patch(path, {"op": "remove"}), 400, "noTarget")
    _scim_error(scim.patch(path, {"op": "replace", "path": "id", "value": "x"}), 400, "mutability")
    _scim_error(scim.patch(path, {"op": "jump", "path": "active", "value": True}), 400)
    assert AuditLogEntry.objects.filter(
        organization=tenant.org, actor_type="scim", action="scim.user.updated"
    ).exists()


def _session_and_key(tenant, user_id: str):
    user = User.objects.get(pk=user_id)
    _session, token = identity_services.session_start(
        user=user, organization=tenant.org, ip=None, user_agent="test"
    )
    _key, raw = identity_services.api_key_create(
        organization=tenant.org,
        name="theirs",
        key_type=KeyType.SECRET,
        mode=None,
        scopes=["contacts:read"],
        created_by_id=user.pk,
    )
    session = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    key = Client(HTTP_X_API_KEY=raw)
    assert session.get("/api/v1/organization").status_code == 200
    assert key.get("/api/v1/organization").status_code == 200
    return session, key


@pytest.mark.parametrize("how", ["patch", "put", "delete"])
def test_deactivation_ends_sessions_and_keys_at_once(tenant, scim, how):
    user = scim.create_user("leaver@example.com")
    path = f"/Users/{user['id']}"
    session, key = _session_and_key(tenant, user["id"])
    if how == "patch":
        response = scim.patch(path, {"op": "replace", "path": "active", "value": False})
        assert response.status_code == 200
        assert response.json()["active"] is False
    elif how == "put":
        response = scim.put(
            path,
            {
                "schemas": [USER_SCHEMA],
                "userName": "leaver@example.com",
                "emails": [{"value": "leaver@example.com"}],
                "active": False,
            },
        )
        assert response.status_code == 200
        assert response.json()["active"] is False
    else:
        assert scim.delete(path).status_code == 204
        _scim_error(scim.get(path), 404)
    assert session.get("/api/v1/organization").json()["error"]["code"] == "EXPIRED_TOKEN"
    assert key.get("/api/v1/organization").json()["error"]["code"] == "INVALID_API_KEY"
    assert _role(tenant, user["id"]) is None
    action = "scim.user.deleted" if how == "delete" else "scim.user.deactivated"
    entry = AuditLogEntry.objects.get(organization=tenant.org, action=action)
    assert entry.actor_type == "scim"
    assert entry.metadata["sessions_revoked"] == 1
    assert entry.metadata["api_keys_revoked"] == 1


def test_reactivation_restores_the_remembered_role(tenant, scim):
    user = scim.create_user("back@example.com")
    assert scim.create_group("developer", [user["id"]]).status_code == 201
    assert _role(tenant, user["id"]) == "developer"
    scim.patch(f"/Users/{user['id']}", {"op": "replace", "path": "active", "value": False})
    assert _role(tenant, user["id"]) is None
    response = scim.patch(
        f"/Users/{user['id']}", {"op": "replace", "path": "active", "value": True}
    )
    assert response.json()["active"] is True
    assert _role(tenant, user["id"]) == "developer"
    assert AuditLogEntry.objects.filter(
        organization=tenant.org, action="scim.user.reactivated"
    ).exists()


# --- Groups and roles --------------------------------------------------------------------------


def test_group_membership_maps_to_roles(tenant, scim):
    ann = scim.create_user("ann@example.com")
    bob = scim.create_user("bob@example.com")
    admins = scim.create_group("admin", [ann["id"]])
    assert admins.status_code == 201, admins.content
    group = admins.json()
    assert group["members"] == [
        {"value": ann["id"], "$ref": ann["meta"]["location"], "type": "User"}
    ]
    assert _role(tenant, ann["id"]) == "admin"
    path = f"/Groups/{group['id']}"
    response = scim.patch(path, {"op": "add", "path": "members", "value": [{"value": bob["id"]}]})
    assert response.status_code == 200, response.content
    assert _role(tenant, bob["id"]) == "admin"
    assert {g["display"] for g in scim.get(f"/Users/{bob['id']}").json()["groups"]} == {"admin"}
    response = scim.patch(path, {"op": "remove", "path": f'members[value eq "{ann["id"]}"]'})
    assert [m["value"] for m in response.json()["members"]] == [bob["id"]]
    assert _role(tenant, ann["id"]) == "viewer"
    # Unmapped groups change nothing.
    assert scim.create_group("Book club", [ann["id"]]).status_code == 201
    assert _role(tenant, ann["id"]) == "viewer"
    # Deleting the group drops its role.
    assert scim.delete(path).status_code == 204
    assert _role(tenant, bob["id"]) == "viewer"
    _scim_error(scim.get(path), 404)
    actions = set(
        AuditLogEntry.objects.filter(organization=tenant.org, actor_type="scim").values_list(
            "action", flat=True
        )
    )
    assert {
        "scim.group.created",
        "scim.group.updated",
        "scim.group.deleted",
        "scim.user.role_changed",
    } <= actions


def test_a_role_change_reaches_live_sessions_at_once(tenant, scim):
    user = scim.create_user("live@example.com")
    session, _key = _session_and_key(tenant, user["id"])
    assert session.get("/api/v1/settings/saml").status_code == 403  # viewer
    assert scim.create_group("admin", [user["id"]]).status_code == 201
    assert session.get("/api/v1/settings/saml").status_code == 200  # admin now


def test_role_ceiling(tenant, scim):
    user = scim.create_user("climber@example.com")
    response = scim.create_group("owner", [user["id"]])
    body = _scim_error(response, 403)
    assert response["X-Error-Code"] == "SCIM_ROLE_CEILING_EXCEEDED"
    assert "admin" in body["detail"]
    owners = scim.create_group("Owner")  # empty: grants nothing yet
    assert owners.status_code == 201
    response = scim.patch(
        f"/Groups/{owners.json()['id']}",
        {"op": "add", "path": "members", "value": [{"value": user["id"]}]},
    )
    _scim_error(response, 403)
    assert response["X-Error-Code"] == "SCIM_ROLE_CEILING_EXCEEDED"
    assert _role(tenant, user["id"]) == "viewer"
    # A lower ceiling, set by the owner, refuses admin too.
    owner = tenant.session_client()
    assert (
        owner.patch("/api/v1/settings/scim", {"max_role": "developer"}, format="json").status_code
        == 200
    )
    _scim_error(scim.create_group("admin", [user["id"]]), 403)
    assert scim.create_group("developer", [user["id"]]).status_code == 201
    # SCIM cannot touch a member above the ceiling: the owner.
    owner_path = f"/Users/{tenant.owner.pk}"
    response = scim.patch(owner_path, {"op": "replace", "path": "active", "value": False})
    _scim_error(response, 403)
    assert response["X-Error-Code"] == "SCIM_ROLE_CEILING_EXCEEDED"
    _scim_error(scim.delete(owner_path), 403)
    assert _role(tenant, tenant.owner.pk) == "owner"


def test_group_role_map_and_ceiling_settings(tenant, scim):
    owner = tenant.session_client()
    response = owner.patch(
        "/api/v1/settings/scim", {"group_role_map": {"Engineering": "developer"}}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["data"]["group_role_map"] == {"engineering": "developer"}
    user = scim.create_user("eng@example.com")
    assert scim.create_group("Engineering", [user["id"]]).status_code == 201
    assert _role(tenant, user["id"]) == "developer"
    # An admin cannot raise the ceiling above their own role.
    tenant.client().post(
        "/api/v1/users",
        {
            "email": "adm@example.com",
            "name": "A",
            "role": "admin",
            "password": "Another-Horse-7-battery",
        },
        format="json",
    )
    admin = tenant.session_client(
        User.objects.get(email="adm@example.com"), "Another-Horse-7-battery"
    )
    response = admin.patch("/api/v1/settings/scim", {"max_role": "owner"}, format="json")
    assert response.status_code == 403


# --- Tenancy -----------------------------------------------------------------------------------


def test_objects_of_another_organization_answer_404(tenant, other_tenant, scim):
    theirs = Scim(other_tenant.org.slug, _token(other_tenant))
    their_user = theirs.create_user("theirs@example.com")
    their_group = theirs.create_group("admin", [their_user["id"]]).json()
    mine = scim.get("/Users").json()["Resources"]
    assert their_user["id"] not in {r["id"] for r in mine}
    assert other_tenant.owner.pk not in {r["id"] for r in mine}
    for path, kind in (
        (f"/Users/{their_user['id']}", USER_SCHEMA),
        (f"/Users/{other_tenant.owner.pk}", USER_SCHEMA),
        (f"/Groups/{their_group['id']}", GROUP_SCHEMA),
    ):
        _scim_error(scim.get(path), 404)
        _scim_error(
            scim.put(path, {"schemas": [kind], "userName": "x@example.com", "displayName": "x"}),
            404,
        )
        _scim_error(scim.patch(path, {"op": "replace", "path": "active", "value": False}), 404)
        _scim_error(scim.delete(path), 404)
    assert scim.get("/Groups").json()["totalResults"] == 0
    # A group of mine cannot take their user as a member.
    _scim_error(scim.create_group("developer", [their_user["id"]]), 400, "invalidValue")
    # Theirs are untouched.
    assert theirs.get(f"/Users/{their_user['id']}").json()["active"] is True
    assert _role(other_tenant, their_user["id"]) == "admin"


def test_discovery_and_unknown_routes(scim):
    config = scim.get("/ServiceProviderConfig")
    assert config["Content-Type"].startswith(SCIM)
    assert config.json()["patch"] == {"supported": True}
    assert config.json()["filter"]["supported"] is True
    types = scim.get("/ResourceTypes").json()
    assert {r["id"] for r in types["Resources"]} == {"User", "Group"}
    assert scim.get(f"/Schemas/{USER_SCHEMA}").json()["id"] == USER_SCHEMA
    _scim_error(scim.get("/Schemas/urn:nope"), 404)
    _scim_error(scim.get("/Nope"), 404)
    _scim_error(scim.post("/Bulk", {}), 501)
    _scim_error(scim.delete("/Users"), 405)


@pytest.mark.parametrize("path", ["/Bulk", "/Me"])
def test_unsupported_endpoints_answer_501_with_a_registered_code(scim, path):
    from platform_core.errors import all_codes

    response = scim.post(path, {})
    _scim_error(response, 501)
    assert response["X-Error-Code"] == "SCIM_NOT_IMPLEMENTED"
    assert "SCIM_NOT_IMPLEMENTED" in {entry.code for entry in all_codes()}
