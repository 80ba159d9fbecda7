"""Writing many rows back in one statement: `UPDATE ... FROM (VALUES ...)`.

A background batch (a send batch, a broadcast runner's recipients) changes a few columns of
hundreds of rows, each to its own values. Django's `bulk_update` writes a `CASE WHEN` per
column, which costs several times more on a few hundred rows; on PostgreSQL this writes

    UPDATE <table> AS t SET col = v.col, ... FROM (VALUES (%s::<type>, ...), ...) AS v (...)
    WHERE t.<pk> = v.<pk>

with every value cast to its column's type (a NULL in the first row would otherwise type
the whole column `text`). Other databases (SQLite, the embedded default) use `bulk_update`.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connections, models, router


def bulk_write(model: type[models.Model], objs: Sequence[models.Model],
               fields: Sequence[str]) -> None:
    """Store `fields` of every object of `objs` (rows of `model`) in one statement."""
    if not objs:
        return
    using = router.db_for_write(model)
    connection = connections[using]
    if connection.vendor != "postgresql":
        model._base_manager.using(using).bulk_update(objs, list(fields))
        return
    meta = model._meta
    quote = connection.ops.quote_name
    columns = [meta.pk, *(meta.get_field(name) for name in fields)]
    row = "(" + ", ".join(f"%s::{field.db_type(connection)}" for field in columns) + ")"
    aliases = [f"c{index}" for index in range(len(columns))]
    params: list = []
    for obj in objs:
        params += [field.get_db_prep_save(getattr(obj, field.attname), connection)
                   for field in columns]
    assignments = ", ".join(f"{quote(field.column)} = v.{alias}"
                            for field, alias in zip(columns[1:], aliases[1:], strict=True))
    sql = (f"UPDATE {quote(meta.db_table)} AS t SET {assignments} "  # noqa: S608 - names only
           f"FROM (VALUES {', '.join([row] * len(objs))}) AS v ({', '.join(aliases)}) "
           f"WHERE t.{quote(meta.pk.column)} = v.{aliases[0]}")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
