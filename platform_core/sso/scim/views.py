"""/scim/v2/{orgSlug}/… : one entry point that authenticates the organization's SCIM token,
scopes every query to that organization, and routes to the resource handlers.

Bodies are `application/scim+json` (plain JSON accepted on requests); every failure is an
RFC 7644 error body. A token is valid only under its own organization's slug: anything
else answers 401, exactly as an unknown token does.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from platform_core.api import ratelimit
from platform_core.api.ratelimit import RateLimit
from platform_core.errors import APIError
from platform_core.tenancy.context import reset_current_organization, set_current_organization

from .. import services as sso_services
from . import resources, selectors
from . import services as scim_services
from .errors import CONTENT_TYPE, ScimError, not_found
from .patch import Patcher
from .schemas import (
    GROUP_SCHEMA,
    LIST_SCHEMA,
    MAX_RESULTS,
    PATCH_SCHEMA,
    USER_SCHEMA,
    resource_type_documents,
    schema_documents,
    service_provider_config,
)

DEFAULT_COUNT = 100
WWW_AUTHENTICATE = 'Bearer realm="scim"'


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> HttpResponse:
    response = HttpResponse(json.dumps(data), status=status, content_type=CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _unauthorized(detail: str) -> ScimError:
    return ScimError(
        401, detail, code="UNAUTHORIZED", headers={"WWW-Authenticate": WWW_AUTHENTICATE}
    )


def _authenticate(request: HttpRequest, slug: str):
    scheme, _, token = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise _unauthorized("Send the organization's SCIM token as Authorization: Bearer.")
    config = sso_services.scim_config_for_token(raw_token=token.strip(), slug=slug)
    if config is None:
        raise _unauthorized("The SCIM token is not valid for this organization.")
    return config


def _rate_limit(config) -> None:
    per_minute = getattr(settings, "SCIM_RATE_LIMIT_PER_MINUTE", 1200)
    try:
        ratelimit.enforce(
            [RateLimit("scim", per_minute, 60, per="organization")],
            {"organization": config.organization_id},
        )
    except APIError as exc:
        raise ScimError(429, exc.message, code="RATE_LIMITED", headers=exc.headers) from None


def _body(request: HttpRequest) -> Any:
    try:
        raw = request.body
    except RequestDataTooBig:
        raise ScimError(413, "The request body is too large.", code="PAYLOAD_TOO_LARGE") from None
    try:
        return json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError):
        raise ScimError(400, "The body is not valid JSON.", "invalidSyntax") from None


def _method_not_allowed(allowed: list[str]) -> ScimError:
    return ScimError(
        405,
        "Method not allowed here.",
        code="METHOD_NOT_ALLOWED",
        headers={"Allow": ", ".join(allowed)},
    )


class _Context:
    def __init__(self, request: HttpRequest, config) -> None:
        self.request = request
        self.config = config
        self.organization = config.organization
        self.base_url = f"{settings.PUBLIC_BASE_URL}/scim/v2/{self.organization.slug}"
        self.actor = scim_services.ScimActor(self.organization, config, request)


@csrf_exempt
def scim_endpoint(request: HttpRequest, slug: str, rest: str | None = None) -> HttpResponse:
    try:
        config = _authenticate(request, slug)
        token = set_current_organization(config.organization)
        try:
            _rate_limit(config)
            return _route(_Context(request, config), (rest or "").strip("/"))
        finally:
            reset_current_organization(token)
    except ScimError as exc:
        return exc.response()


def _route(ctx: _Context, rest: str) -> HttpResponse:
    method = ctx.request.method
    parts = rest.split("/") if rest else []
    head = parts[0] if parts else ""
    if head == "ServiceProviderConfig" and len(parts) == 1:
        if method != "GET":
            raise _method_not_allowed(["GET"])
        return _json(service_provider_config(ctx.base_url))
    if head in ("ResourceTypes", "Schemas") and len(parts) <= 2:
        if method != "GET":
            raise _method_not_allowed(["GET"])
        documents = (resource_type_documents if head == "ResourceTypes" else schema_documents)(
            ctx.base_url
        )
        if len(parts) == 2:
            found = next((d for d in documents if d["id"] == parts[1]), None)
            if found is None:
                raise not_found(f"No {head[:-1]} {parts[1]!r}.")
            return _json(found)
        return _json(_list_response(documents, len(documents), 1))
    if head in ("Users", "Groups"):
        handler = _users if head == "Users" else _groups
        if len(parts) == 1:
            if method == "GET":
                return handler.list(ctx, dict(ctx.request.GET.items()))
            if method == "POST":
                return handler.create(ctx, _body(ctx.request))
            raise _method_not_allowed(["GET", "POST"])
        if len(parts) == 2 and parts[1] == ".search":
            if method != "POST":
                raise _method_not_allowed(["POST"])
            return handler.list(ctx, _search_params(_body(ctx.request)))
        if len(parts) == 2:
            if method == "GET":
                return handler.get(ctx, parts[1])
            if method == "PUT":
                return handler.replace(ctx, parts[1], _body(ctx.request))
            if method == "PATCH":
                return handler.patch(ctx, parts[1], _body(ctx.request))
            if method == "DELETE":
                return handler.delete(ctx, parts[1])
            raise _method_not_allowed(["GET", "PUT", "PATCH", "DELETE"])
    if head == ".search" and len(parts) == 1:
        if method != "POST":
            raise _method_not_allowed(["POST"])
        return _root_search(ctx, _search_params(_body(ctx.request)))
    if head in ("Bulk", "Me") and len(parts) == 1:
        raise ScimError(
            501, f"/{head} is not supported by this service provider.", code="SCIM_NOT_IMPLEMENTED"
        )
    raise not_found("No such SCIM endpoint.")


def _root_search(ctx: _Context, params: dict[str, Any]) -> HttpResponse:
    """POST /.search across Users then Groups. A filter attribute one type does not have
    simply matches none of that type."""
    start, count = _page(params)
    found: list[tuple[str, Any]] = []
    scim_services.sync_member_links(organization=ctx.organization)
    for kind, attr_map, schema, query in (
        ("user", resources.USER_FILTER_MAP, USER_SCHEMA, selectors.users),
        ("group", resources.GROUP_FILTER_MAP, GROUP_SCHEMA, selectors.groups),
    ):
        q = None
        if params.get("filter"):
            try:
                q = resources.filter_q(params["filter"], attr_map, schema)
            except ScimError:
                continue
        qs = query(ctx.organization, q)
        if kind == "user" and q is not None:
            qs = qs.distinct()
        found.extend((kind, item) for item in qs)
    page = found[start - 1 : start - 1 + count] if count else []
    docs = [(_users if kind == "user" else _groups)._doc(ctx, item, params) for kind, item in page]
    return _json(_list_response(docs, len(found), start))


def _search_params(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ScimError(400, "A search body must be a SearchRequest object.", "invalidSyntax")
    out = {}
    for key in ("filter", "startIndex", "count", "attributes", "excludedAttributes"):
        if body.get(key) is not None:
            out[key] = body[key]
    return out


def _int_param(value: Any, default: int) -> int:
    if value in (None, ""):
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ScimError(400, "startIndex and count must be integers.", "invalidValue") from None


def _list_response(resources_: list[dict], total: int, start: int) -> dict[str, Any]:
    return {
        "schemas": [LIST_SCHEMA],
        "totalResults": total,
        "startIndex": start,
        "itemsPerPage": len(resources_),
        "Resources": resources_,
    }


def _page(params: dict[str, Any]) -> tuple[int, int]:
    start = max(_int_param(params.get("startIndex"), 1), 1)
    count = min(max(_int_param(params.get("count"), DEFAULT_COUNT), 0), MAX_RESULTS)
    return start, count


def _attribute_params(params: dict[str, Any]) -> dict[str, Any]:
    attributes, excluded = params.get("attributes"), params.get("excludedAttributes")
    if attributes and excluded:
        raise ScimError(
            400, "attributes and excludedAttributes exclude each other.", "invalidValue"
        )
    return {"attributes": attributes, "excluded": excluded}


class _users:  # noqa: N801 (a namespace of handlers)
    @staticmethod
    def _doc(ctx: _Context, link, params: dict | None = None) -> dict[str, Any]:
        is_member = getattr(link, "is_member", None)
        if is_member is None:
            from platform_core.tenancy.models import Membership

            is_member = Membership.objects.filter(user_id=link.user_id).exists()
        doc = resources.user_document(link, base_url=ctx.base_url, is_member=is_member)
        return resources.select_attributes(
            doc, schema=USER_SCHEMA, **_attribute_params(params or {})
        )

    @staticmethod
    def _find(ctx: _Context, user_id: str):
        scim_services.sync_member_links(organization=ctx.organization)
        link = selectors.user(ctx.organization, user_id)
        if link is None:
            raise not_found(f"User {user_id} not found.")
        return link

    @classmethod
    def list(cls, ctx: _Context, params: dict[str, Any]) -> HttpResponse:
        scim_services.sync_member_links(organization=ctx.organization)
        start, count = _page(params)
        q = (
            resources.filter_q(params["filter"], resources.USER_FILTER_MAP, USER_SCHEMA)
            if params.get("filter")
            else None
        )
        qs = selectors.users(ctx.organization, q)
        if q is not None:
            qs = qs.distinct()
        total = qs.count()
        page = list(qs[start - 1 : start - 1 + count]) if count else []
        return _json(_list_response([cls._doc(ctx, link, params) for link in page], total, start))

    @classmethod
    def get(cls, ctx: _Context, user_id: str) -> HttpResponse:
        link = cls._find(ctx, user_id)
        return _json(cls._doc(ctx, link, dict(ctx.request.GET.items())))

    @classmethod
    def create(cls, ctx: _Context, body: Any) -> HttpResponse:
        link = scim_services.user_create(actor=ctx.actor, data=resources.read_user(body))
        link = selectors.user(ctx.organization, link.user_id)
        doc = cls._doc(ctx, link)
        return _json(doc, 201, {"Location": doc["meta"]["location"]})

    @classmethod
    def replace(cls, ctx: _Context, user_id: str, body: Any) -> HttpResponse:
        link = cls._find(ctx, user_id)
        scim_services.user_update(actor=ctx.actor, link=link, data=resources.read_user(body))
        return _json(cls._doc(ctx, selectors.user(ctx.organization, user_id)))

    @classmethod
    def patch(cls, ctx: _Context, user_id: str, body: Any) -> HttpResponse:
        link = cls._find(ctx, user_id)
        _check_patch_schema(body)
        document = Patcher(resources.USER_SPECS, USER_SCHEMA).apply(
            resources.user_writable_document(link), body
        )
        scim_services.user_update(actor=ctx.actor, link=link, data=resources.read_user(document))
        return _json(cls._doc(ctx, selectors.user(ctx.organization, user_id)))

    @classmethod
    def delete(cls, ctx: _Context, user_id: str) -> HttpResponse:
        scim_services.user_delete(actor=ctx.actor, link=cls._find(ctx, user_id))
        return HttpResponse(status=204)


class _groups:  # noqa: N801 (a namespace of handlers)
    @staticmethod
    def _doc(ctx: _Context, group, params: dict | None = None) -> dict[str, Any]:
        doc = resources.group_document(group, base_url=ctx.base_url)
        return resources.select_attributes(
            doc, schema=GROUP_SCHEMA, **_attribute_params(params or {})
        )

    @staticmethod
    def _find(ctx: _Context, group_id: str):
        group = selectors.group(ctx.organization, group_id)
        if group is None:
            raise not_found(f"Group {group_id} not found.")
        return group

    @classmethod
    def list(cls, ctx: _Context, params: dict[str, Any]) -> HttpResponse:
        start, count = _page(params)
        q = (
            resources.filter_q(params["filter"], resources.GROUP_FILTER_MAP, GROUP_SCHEMA)
            if params.get("filter")
            else None
        )
        qs = selectors.groups(ctx.organization, q)
        total = qs.count()
        page = list(qs[start - 1 : start - 1 + count]) if count else []
        return _json(_list_response([cls._doc(ctx, g, params) for g in page], total, start))

    @classmethod
    def get(cls, ctx: _Context, group_id: str) -> HttpResponse:
        return _json(cls._doc(ctx, cls._find(ctx, group_id), dict(ctx.request.GET.items())))

    @classmethod
    def create(cls, ctx: _Context, body: Any) -> HttpResponse:
        group = scim_services.group_create(actor=ctx.actor, data=resources.read_group(body))
        doc = cls._doc(ctx, selectors.group(ctx.organization, group.pk))
        return _json(doc, 201, {"Location": doc["meta"]["location"]})

    @classmethod
    def replace(cls, ctx: _Context, group_id: str, body: Any) -> HttpResponse:
        group = cls._find(ctx, group_id)
        scim_services.group_update(actor=ctx.actor, group=group, data=resources.read_group(body))
        return _json(cls._doc(ctx, selectors.group(ctx.organization, group_id)))

    @classmethod
    def patch(cls, ctx: _Context, group_id: str, body: Any) -> HttpResponse:
        group = cls._find(ctx, group_id)
        _check_patch_schema(body)
        document = Patcher(resources.GROUP_SPECS, GROUP_SCHEMA).apply(
            resources.group_writable_document(group), body
        )
        scim_services.group_update(
            actor=ctx.actor, group=group, data=resources.read_group(document)
        )
        return _json(cls._doc(ctx, selectors.group(ctx.organization, group_id)))

    @classmethod
    def delete(cls, ctx: _Context, group_id: str) -> HttpResponse:
        scim_services.group_delete(actor=ctx.actor, group=cls._find(ctx, group_id))
        return HttpResponse(status=204)


def _check_patch_schema(body: Any) -> None:
    if not isinstance(body, dict):
        raise ScimError(400, "The PATCH body must be a PatchOp object.", "invalidSyntax")
    schemas = body.get("schemas")
    if schemas is not None and PATCH_SCHEMA not in (schemas or []):
        raise ScimError(400, f"A PATCH body declares the schema {PATCH_SCHEMA}.", "invalidSyntax")
