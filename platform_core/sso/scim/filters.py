"""The `filter` parameter (RFC 7644 3.4.2.2), plugged into django-scim2 as its
USER_FILTER_PARSER / GROUP_FILTER_PARSER.

Why not the package's own FilterQuery: it compiles the filter to raw SQL over one table
(`Model.objects.raw`) and its views then apply the tenancy filter kwargs in Python, row by
row, over every match of every organization, before counting and slicing. Ours compiles
the same scim2-filter-parser AST to a Django Q on the tenant-scoped manager, so tenancy,
COUNT and LIMIT/OFFSET stay in SQL (and on SQLite too), and it refuses attributes it
cannot map (400 invalidFilter) instead of silently dropping them.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django_scim.filters import FilterQuery
from scim2_filter_parser import ast as scim_ast
from scim2_filter_parser.lexer import SCIMLexer
from scim2_filter_parser.parser import SCIMParser
from scim2_filter_parser.transpilers.django_q_object import Transpiler

from ..models import ScimGroup, ScimUser
from .errors import ScimError
from .schemas import GROUP_SCHEMA, USER_SCHEMA

USER_FILTER_MAP = {
    ("username", None, None): "user_name",
    ("externalid", None, None): "external_id",
    ("id", None, None): "user_id",
    ("displayname", None, None): "display_name",
    ("name", "givenname", None): "given_name",
    ("name", "familyname", None): "family_name",
    ("name", "formatted", None): "formatted_name",
    ("emails", None, None): "user__email",
    ("emails", "value", None): "user__email",
    ("active", None, None): "active",
    ("meta", "created", None): "created_at",
    ("meta", "lastmodified", None): "updated_at",
}
GROUP_FILTER_MAP = {
    ("displayname", None, None): "display_name",
    ("externalid", None, None): "external_id",
    ("id", None, None): "id",
    ("members", None, None): "members__user_id",
    ("members", "value", None): "members__user_id",
    ("meta", "created", None): "created_at",
    ("meta", "lastmodified", None): "updated_at",
}


def _invalid_filter(detail: str) -> ScimError:
    return ScimError(400, detail, "invalidFilter")


class _StrictTranspiler(Transpiler):
    """The library's Q transpiler, refusing (instead of dropping) attributes it cannot map."""

    def __init__(self, attr_map, schema: str) -> None:
        super().__init__(attr_map)
        self.schema = schema.lower()

    def visit_AttrExpr(self, node):
        if isinstance(node.attr_path.attr_name, scim_ast.Filter):
            raise _invalid_filter("Value filters inside filter are not supported here.")
        return super().visit_AttrExpr(node)

    def visit_AttrPath(self, node):
        if node.uri and node.uri.lower().rstrip(":") != self.schema:
            raise _invalid_filter(f"Unknown schema {node.uri} in filter.")
        sub = node.sub_attr.value.lower() if node.sub_attr else None
        key = (str(node.attr_name).lower(), sub, None)
        if key not in self.attr_map:
            name = node.attr_name + (f".{node.sub_attr.value}" if node.sub_attr else "")
            raise _invalid_filter(f"Filtering on {name} is not supported.")
        return self.attr_map[key]


def filter_q(text: str, attr_map: dict, schema: str) -> Q:
    try:
        tree = SCIMParser().parse(SCIMLexer().tokenize(text))
    except Exception as exc:
        raise _invalid_filter(f"Cannot read the filter: {exc}") from None
    if tree is None:
        raise _invalid_filter("Cannot read the filter.")
    try:
        query = _StrictTranspiler(attr_map, schema).transpile(tree)
    except ScimError:
        raise
    except Exception as exc:
        raise _invalid_filter(f"Cannot apply the filter: {exc}") from None
    return query if query is not None else Q()


class _QFilterQuery(FilterQuery):
    attr_map: dict = {}
    schema = ""

    @classmethod
    def search(cls, filter_query: str, request: HttpRequest | None = None) -> QuerySet:
        """Matches as a QuerySet of the current organization (the tenant manager scopes it;
        the views add the package's extra filter kwargs on top). A subquery on the primary
        key keeps multi-valued joins (members, emails) from repeating rows."""
        model = cls.model_getter()
        matching = model.objects.filter(filter_q(filter_query, cls.attr_map, cls.schema))
        return model.objects.filter(pk__in=matching.values("pk"))


def scim_user_model() -> type[ScimUser]:
    return ScimUser


def scim_group_model() -> type[ScimGroup]:
    return ScimGroup


class UserFilterQuery(_QFilterQuery):
    model_getter = staticmethod(scim_user_model)
    attr_map = USER_FILTER_MAP
    schema = USER_SCHEMA


class GroupFilterQuery(_QFilterQuery):
    model_getter = staticmethod(scim_group_model)
    attr_map = GROUP_FILTER_MAP
    schema = GROUP_SCHEMA
