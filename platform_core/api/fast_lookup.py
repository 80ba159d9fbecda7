"""A detail read's query, compiled once per model instead of on every request.

`TenantViewSet.get_object` for a plain `{id}` route runs the same statement every time:
rows of one model with this organization and this primary key. Building it through the
ORM (clone, filter, compile) costs more than executing it, so it is compiled once per
model with stand-in parameters and then executed with the request's values, converting
the row exactly as the ORM would (the compiler's own converters, `Model.from_db`).
Routes that refine the queryset (`scope_queryset`) keep the ordinary ORM path.
"""

from __future__ import annotations

from functools import lru_cache

from django.core.exceptions import ValidationError
from django.db import connections, models, router

_ORG = "\x00org\x00"
_PK = "\x00pk\x00"


class _Compiled:
    def __init__(self, model: type[models.Model], using: str) -> None:
        queryset = model._base_manager.using(using).filter(organization_id=_ORG, pk=_PK)
        query = queryset.query
        query.set_limits(high=2)  # like QuerySet.get(): enough to see a duplicate
        compiler = query.get_compiler(using=using)
        self.sql, params = compiler.as_sql()
        if list(params) != [_ORG, _PK]:
            raise ValueError(f"unexpected parameters compiling {model.__name__}: {params!r}")
        self.model = model
        self.using = using
        self.compiler = compiler
        self.converters = compiler.get_converters([col for col, _, _ in compiler.select])
        self.attnames = [col.target.attname for col, _, _ in compiler.select]
        concrete = [f.attname for f in model._meta.concrete_fields]
        if self.attnames != concrete:
            raise ValueError(f"{model.__name__}: the select list is not the concrete fields")

    def fetch(self, organization_id: str, pk) -> models.Model | None:
        connection = connections[self.using]
        with connection.cursor() as cursor:
            cursor.execute(self.sql, [organization_id, pk])
            rows = cursor.fetchmany(2)
        if not rows:
            return None
        if len(rows) > 1:
            raise self.model.MultipleObjectsReturned
        if self.converters:
            rows = list(self.compiler.apply_converters(rows, self.converters))
        return self.model.from_db(self.using, self.attnames, rows[0])


@lru_cache(maxsize=256)
def _compiled(model: type[models.Model], using: str) -> _Compiled:
    return _Compiled(model, using)


def get_in_tenant(model: type[models.Model], organization_id: str, pk) -> models.Model | None:
    """The row of `model` with this primary key in this organization, or None."""
    try:  # as the ORM would: a malformed id (a bad UUID, say) matches nothing
        value = model._meta.pk.get_prep_value(model._meta.pk.to_python(pk))
    except (ValidationError, ValueError, TypeError):
        return None
    using = router.db_for_read(model)
    return _compiled(model, using).fetch(organization_id, value)
