"""/scim/v2/{orgSlug}/… on django-scim2's views: thin subclasses of its Users, Groups,
search and discovery views, mounted per organization (urls.py).

The package supplies the structure (collection and item handlers calling the adapters,
lookups through its extra-filter-kwargs hook, the auth-check middleware around dispatch);
the hooks (hooks.py) make it organization-aware. What these subclasses change, and why:
- `dispatch`: the package renders its errors with a numeric `status` and no headers, and
  turns 405 into an empty Django answer; RFC 7644 3.12 wants `status` as a string, and we
  send `X-Error-Code`, `WWW-Authenticate`, `Allow`, `Retry-After`.
- `load_body`: bad JSON is 400 `invalidSyntax` (the package gives no scimType); a body
  over the upload limit is 413.
- `_page`, `_search`, `_build_response`: COUNT and LIMIT/OFFSET in SQL (the package counts
  by iterating every row), startIndex below 1 read as 1 and count capped at MAX_RESULTS
  (RFC 7644 3.4.2.4), `attributes` / `excludedAttributes` applied (the package ignores
  them), and POST …/.search reading startIndex, count and attributes from its body (the
  package reads them from the query string and requires a filter).
- `/.search` at the root searches Users then Groups (the package answers 501).
- `/Bulk` and `/Me` keep the package's 501 with our error body and registered code.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import View
from django_scim import views as scim_views
from django_scim.exceptions import SCIMException
from django_scim.settings import scim_settings
from django_scim.utils import (
    get_group_adapter,
    get_group_filter_parser,
    get_group_model,
    get_user_adapter,
    get_user_filter_parser,
    get_user_model,
)

from . import services as scim_services
from .errors import CONTENT_TYPE, ScimError, not_found
from .hooks import extra_filter_kwargs_getter, queryset_post_processor_getter
from .resources import select_attributes
from .schemas import (
    GROUP_SCHEMA,
    LIST_SCHEMA,
    MAX_RESULTS,
    PATCH_SCHEMA,
    USER_SCHEMA,
    schema_documents,
)

logger = logging.getLogger(__name__)

DEFAULT_COUNT = 100


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> HttpResponse:
    response = HttpResponse(json.dumps(data), status=status, content_type=CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _list_response(resources: list[dict], total: int, start: int) -> dict[str, Any]:
    return {
        "schemas": [LIST_SCHEMA],
        "totalResults": total,
        "startIndex": start,
        "itemsPerPage": len(resources),
        "Resources": resources,
    }


def _method_not_allowed(allowed: list[str]) -> ScimError:
    return ScimError(
        405,
        "Method not allowed here.",
        code="METHOD_NOT_ALLOWED",
        headers={"Allow": ", ".join(allowed)},
    )


def _int_param(value: Any, default: int) -> int:
    if value in (None, ""):
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ScimError(400, "startIndex and count must be integers.", "invalidValue") from None


def _search_params(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ScimError(400, "A search body must be a SearchRequest object.", "invalidSyntax")
    return {
        key: body[key]
        for key in ("filter", "startIndex", "count", "attributes", "excludedAttributes")
        if body.get(key) is not None
    }


def _attribute_params(params: dict[str, Any]) -> dict[str, Any]:
    attributes, excluded = params.get("attributes"), params.get("excludedAttributes")
    if attributes and excluded:
        raise ScimError(
            400, "attributes and excludedAttributes exclude each other.", "invalidValue"
        )
    return {"attributes": attributes, "excluded": excluded}


class ScimViewMixin:
    """Error rendering, method checks and body reading shared by every SCIM view."""

    implemented = True
    endpoint = ""  # named in the 501 detail

    @method_decorator(csrf_exempt)
    @method_decorator(scim_settings.AUTH_CHECK_MIDDLEWARE)
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        kwargs.pop("slug", None)  # consumed by the auth middleware
        self.kwargs.pop("slug", None)
        self.params: dict[str, Any] = dict(request.GET.items())
        try:
            if not self.implemented:
                raise ScimError(
                    501,
                    f"/{self.endpoint} is not supported by this service provider.",
                    code="SCIM_NOT_IMPLEMENTED",
                )
            self.check_method(request)
            return View.dispatch(self, request, *args, **kwargs)
        except ScimError as exc:
            return exc.response()
        except SCIMException as exc:
            return ScimError.from_package(exc).response()
        except Exception:
            logger.exception("Unable to complete SCIM call.")
            return ScimError(500, "The SCIM request could not be completed.").response()

    def check_method(self, request: HttpRequest) -> None:
        if request.method.lower() not in self.http_method_names:
            raise _method_not_allowed([m.upper() for m in self.http_method_names])

    def load_body(self, body: bytes | None = None) -> Any:
        try:
            raw = self.request.body
        except RequestDataTooBig:
            raise ScimError(
                413, "The request body is too large.", code="PAYLOAD_TOO_LARGE"
            ) from None
        try:
            return json.loads(raw or b"null")
        except (ValueError, UnicodeDecodeError):
            raise ScimError(400, "The body is not valid JSON.", "invalidSyntax") from None


class _ListMixin:
    """Listing and searching Users or Groups through the package's filter-parser and
    queryset hooks, paged in SQL."""

    schema = ""

    @property
    def model_cls(self):
        # The package's search views name a pseudo model 'search'; ours search one type.
        return type(self).model_cls_getter()

    def _page(self, request: HttpRequest) -> tuple[int, int]:
        start = max(_int_param(self.params.get("startIndex"), 1), 1)
        count = min(max(_int_param(self.params.get("count"), DEFAULT_COUNT), 0), MAX_RESULTS)
        return start, count

    def _queryset(self, request: HttpRequest, query: str | None):
        if query:
            qs = type(self).parser_getter().search(query, request)
        else:
            qs = self.model_cls.objects.all()
        qs = qs.filter(**self.get_extra_filter_kwargs(request)).exclude(
            **self.get_extra_exclude_kwargs(request)
        )
        return self.get_queryset_post_processor(request, qs)

    def _search(self, request: HttpRequest, query: str, start: int, count: int) -> HttpResponse:
        return self._build_response(request, self._queryset(request, query), start, count)

    def get_many(self, request: HttpRequest) -> HttpResponse:
        return self._search(request, self.params.get("filter"), *self._page(request))

    def _build_response(self, request: HttpRequest, qs, start: int, count: int) -> HttpResponse:
        selection = _attribute_params(self.params)
        total = qs.count()
        page = list(qs[start - 1 : start - 1 + count]) if count else []
        docs = [
            select_attributes(
                self.scim_adapter(obj, request=request).to_dict(), schema=self.schema, **selection
            )
            for obj in page
        ]
        return _json(_list_response(docs, total, start))

    def search_post(self, request: HttpRequest) -> HttpResponse:
        self.params = _search_params(self.load_body())
        return self.get_many(request)


class _ResourceMixin(_ListMixin, ScimViewMixin):
    collection_methods = ["GET", "POST"]
    item_methods = ["GET", "PUT", "PATCH", "DELETE"]

    def check_method(self, request: HttpRequest) -> None:
        allowed = self.item_methods if self.kwargs.get("uuid") else self.collection_methods
        if request.method not in allowed:
            raise _method_not_allowed(allowed)

    def get_single(self, request: HttpRequest) -> HttpResponse:
        adapter = self.scim_adapter(self.get_object(), request=request)
        doc = select_attributes(
            adapter.to_dict(), schema=self.schema, **_attribute_params(self.params)
        )
        return _json(doc, headers={"Location": adapter.location})

    def patch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # The package reads `Operations` from whatever the body is; refuse a non-PatchOp first.
        body = self.load_body()
        if not isinstance(body, dict):
            raise ScimError(400, "The PATCH body must be a PatchOp object.", "invalidSyntax")
        schemas = body.get("schemas")
        if schemas is not None and PATCH_SCHEMA not in (schemas or []):
            raise ScimError(
                400, f"A PATCH body declares the schema {PATCH_SCHEMA}.", "invalidSyntax"
            )
        if not isinstance(body.get("Operations"), list) or not body["Operations"]:
            raise ScimError(400, "A PatchOp needs a non-empty Operations list.", "invalidSyntax")
        return super().patch(request, *args, **kwargs)


class _SyncMembersMixin:
    """People invited from the dashboard get their ScimUser before any read, so the
    identity provider can find and manage them (creation is left alone: it links them)."""

    def dispatch_users(self, request: HttpRequest) -> None:
        if request.method != "POST" or self.request.path.endswith(".search"):
            scim_services.sync_member_links(organization=request.scim_organization)


class UsersView(_SyncMembersMixin, _ResourceMixin, scim_views.UsersView):
    schema = USER_SCHEMA

    def check_method(self, request: HttpRequest) -> None:
        super().check_method(request)
        self.dispatch_users(request)


class GroupsView(_ResourceMixin, scim_views.GroupsView):
    schema = GROUP_SCHEMA


class UserSearchView(_SyncMembersMixin, _ListMixin, ScimViewMixin, scim_views.UserSearchView):
    schema = USER_SCHEMA
    model_cls_getter = get_user_model

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        self.dispatch_users(request)
        return self.search_post(request)


class GroupSearchView(_ListMixin, ScimViewMixin, scim_views.GroupSearchView):
    schema = GROUP_SCHEMA
    model_cls_getter = get_group_model

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return self.search_post(request)


class RootSearchView(ScimViewMixin, scim_views.SearchView):
    """POST /.search across Users then Groups. A filter attribute one type does not have
    simply matches none of that type."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        self.params = params = _search_params(self.load_body())
        start = max(_int_param(params.get("startIndex"), 1), 1)
        count = min(max(_int_param(params.get("count"), DEFAULT_COUNT), 0), MAX_RESULTS)
        selection = _attribute_params(params)
        scim_services.sync_member_links(organization=request.scim_organization)
        found: list[tuple[Any, Any, str]] = []
        for model, parser, adapter, schema in (
            (get_user_model(), get_user_filter_parser(), get_user_adapter(), USER_SCHEMA),
            (get_group_model(), get_group_filter_parser(), get_group_adapter(), GROUP_SCHEMA),
        ):
            try:
                qs = parser.search(params["filter"], request) if params.get("filter") else None
            except ScimError:
                continue
            qs = (qs if qs is not None else model.objects.all()).filter(
                **extra_filter_kwargs_getter(model)(request)
            )
            qs = queryset_post_processor_getter(model)(request, qs)
            found.extend((obj, adapter, schema) for obj in qs)
        page = found[start - 1 : start - 1 + count] if count else []
        docs = [
            select_attributes(adapter(obj, request=request).to_dict(), schema=schema, **selection)
            for obj, adapter, schema in page
        ]
        return _json(_list_response(docs, len(found), start))


class ServiceProviderConfigView(ScimViewMixin, scim_views.ServiceProviderConfigView):
    """The package's view; the document comes from SERVICE_PROVIDER_CONFIG_MODEL."""


class ResourceTypesView(ScimViewMixin, scim_views.ResourceTypesView):
    """The adapters' resource_type_dict, as a full ListResponse (the package's lacks
    totalResults) and a SCIM 404 body for an unknown type (the package's is empty)."""

    def get(self, request: HttpRequest, uuid: str | None = None, *args: Any, **kwargs: Any):
        documents = [
            a.resource_type_dict(request) for a in (get_user_adapter(), get_group_adapter())
        ]
        return _documents(documents, uuid, "ResourceType")


class SchemasView(ScimViewMixin, scim_views.SchemasView):
    """Our schemas (exactly the attributes the resources carry, with this organization's
    locations); the package's are the full RFC 7643 ones, built once without a base URL."""

    def get(self, request: HttpRequest, uuid: str | None = None, *args: Any, **kwargs: Any):
        return _documents(schema_documents(request.scim_base_url), uuid, "Schema")


def _documents(documents: list[dict], uuid: str | None, kind: str) -> HttpResponse:
    if uuid:
        found = next((d for d in documents if d["id"] == uuid), None)
        if found is None:
            raise not_found(f"No {kind} {uuid!r}.")
        return _json(found)
    return _json(_list_response(documents, len(documents), 1))


class UnsupportedView(ScimViewMixin, scim_views.SCIMView):
    """/Bulk and /Me: the package's unimplemented SCIMView (501) with our error body."""

    implemented = False


class UnknownView(ScimViewMixin, scim_views.SCIMView):
    """Any other path under the organization's SCIM root: a SCIM 404 (after auth)."""

    def check_method(self, request: HttpRequest) -> None:
        raise not_found("No such SCIM endpoint.")
